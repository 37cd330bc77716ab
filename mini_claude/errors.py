"""The failures every layer may raise and the tools' registry turns into an `is_error` result.

A leaf: it imports nothing of ours, so paths, permissions, tools and memory can all raise them
without importing each other.
"""


class ToolError(Exception):
    """A failure the model should read as an `is_error` tool result (the message is that text)."""


class PermissionDenied(ToolError):
    """The user (or the absence of one) said no; the message tells the model not to just retry."""
