"""The tools the model can call: file reading and editing, search, and the shell.

`default_registry()` builds the standard set; the registry is imported lazily because
`permissions` imports `tools.base`, and the registry in turn needs `permissions`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mini_claude.tools.base import MemoryGate, ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    from mini_claude.tools.registry import ToolRegistry, default_registry

__all__ = ["MemoryGate", "ToolContext", "ToolError", "ToolRegistry", "ToolResult", "default_registry"]


def __getattr__(name: str) -> Any:
    if name in ("ToolRegistry", "default_registry"):
        from mini_claude.tools import registry

        return getattr(registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
