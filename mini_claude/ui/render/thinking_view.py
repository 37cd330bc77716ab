"""The model's thinking on screen: collapsed to one dim line per block as it completes (its length,
and the key that shows it: Ctrl+O's transcript view, `ui/conversation/`, has it in full).

Collapsed rather than streamed: thinking is often longer than the answer it leads to, and read
only now and then.
"""

from __future__ import annotations

from mini_claude.core.events import ThinkingBlock

SHOW_KEY = "Ctrl+O"
REDACTED_LINE = "✻ Thinking, encrypted by the API's safety systems (sent back to the model as it came)"


def thinking_line(block: ThinkingBlock) -> str | None:
    """The collapsed line of a thinking block; None for one without text (a model that omits it)."""
    if block.redacted:
        return REDACTED_LINE
    words = len(block.text.split())
    if not words:
        return None
    return f"✻ Thinking, {words:,} word{'s' if words != 1 else ''} ({SHOW_KEY} shows it)"
