"""The model server: the only user of the SDK (imported lazily), streaming, errors, pricing."""
