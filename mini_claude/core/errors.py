"""The failures shared across layers: the tools' (which the registry turns into an `is_error`
result) and the memory store's.

A leaf: it imports nothing of ours, so paths, permissions, tools and memory can all raise and
catch them without importing each other.
"""


class ToolError(Exception):
    """A failure the model should read as an `is_error` tool result (the message is that text)."""


class PermissionDenied(ToolError):
    """The user (or the absence of one, or a rule) said no; the message tells the model not to
    just retry. `refused_by_user`: the person at the question said no, which ends the turn."""

    def __init__(self, message: str, *, refused_by_user: bool = False) -> None:
        super().__init__(message)
        self.refused_by_user = refused_by_user


class MemoryStoreError(Exception):
    """A memory could not be saved or deleted; the message says why in one line."""


class InvalidMemory(MemoryStoreError):
    """The memory breaks the rules of a valid memory (memory/store/validation.py); the message says which."""
