"""Beside a transcript: file checkpoints for /rewind, and the name /rename gives a session."""
