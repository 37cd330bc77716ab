"""Saved conversations: one JSON-lines transcript per session, read back for resuming and listing."""
