"""The failures shared across layers: the tools' (which the registry turns into an `is_error`
result) and the memory store's.

A leaf: it imports nothing of ours, so paths, permissions, tools and memory can all raise and
catch them without importing each other.
"""


class ConfigError(ValueError):
    """A setting has a value we cannot use; the message names it and says what is expected."""


class ToolError(Exception):
    """A failure the model should read as an `is_error` tool result (the message is that text)."""


class PermissionDenied(ToolError):
    """The user (or the absence of one) said no; the message tells the model not to just retry."""


class MemoryStoreError(Exception):
    """A memory could not be saved or deleted; the message says why in one line."""


class InvalidMemory(MemoryStoreError):
    """The memory breaks the rules of a valid memory (memory/store/validation.py); the message says which."""
