"""What an MCP server sends back, as the model reads it: text (capped, like our own tools'
output), images as image blocks, embedded resources, structured content as JSON; all of its
text wrapped in a tag it cannot close, since every word of it comes from outside."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mini_claude.core import prompts
from mini_claude.core.untrusted import encodable, wrap
from mini_claude.tools.base import ToolResult, count_noun

if TYPE_CHECKING:
    from mcp_types import CallToolResult, GetPromptResult, ReadResourceResult

RESULT_TAG = "mcp-result"
RESOURCE_TAG = "mcp-resource"
PROMPT_TAG = "mcp-prompt"
MAX_OUTPUT_CHARS = 30_000  # as run_shell's: the head and the tail are kept, the middle dropped
MAX_IMAGES = 10
MAX_IMAGE_BYTES = 5 * 2**20  # what the Messages API takes of one image
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


@dataclass
class _Parts:
    texts: list[str] = field(default_factory=list)
    images: list[dict[str, Any]] = field(default_factory=list)

    def add_image(self, data: str, mime_type: str | None, what: str) -> None:
        problem = _image_problem(data, mime_type, len(self.images))
        if problem is None:
            source = {"type": "base64", "media_type": mime_type, "data": data}
            self.images.append({"type": "image", "source": source})
        else:
            self.texts.append(prompts.notice("mcp_image_left_out", what=what, why=problem))


def tool_result(result: CallToolResult, server: str, tool: str) -> ToolResult:
    """A tool call's result; an error result stays one (`is_error`)."""
    parts = _Parts()
    for block in result.content:
        _add_block(parts, block)
    structured = result.structured_content
    # Servers send structured content as text too (the spec asks them to): only alone is it added.
    if structured is not None and not parts.texts:
        parts.texts.append(json.dumps(structured, ensure_ascii=False, indent=2))
    text = capped("\n".join(parts.texts)) if parts.texts else ""
    if not text and not parts.images:
        text = prompts.notice("mcp_no_output")
    wrapped = wrap(RESULT_TAG, encodable(text), server=server, tool=tool)
    summary = _summary(text, len(parts.images), error=bool(result.is_error))
    content: str | list[dict[str, Any]] = wrapped
    if parts.images:
        content = [{"type": "text", "text": wrapped}, *parts.images]
    return ToolResult(content, summary, is_error=bool(result.is_error))


def resource_blocks(result: ReadResourceResult, server: str, uri: str) -> list[dict[str, Any]]:
    """A resource attached with `@server:uri`: its text in a tag, its images as images."""
    parts = _Parts()
    for contents in result.contents:
        _add_contents(parts, contents)
    text = capped("\n".join(parts.texts)) if parts.texts else prompts.notice("mcp_no_output")
    return [
        {"type": "text", "text": wrap(RESOURCE_TAG, encodable(text), server=server, uri=uri)},
        *parts.images,
    ]


def prompt_text(result: GetPromptResult, server: str, prompt: str) -> str:
    """A server's prompt (`/mcp__server__prompt`) as the message sent: each of its messages in
    order, with who says it when the prompt plays both parts."""
    roles = {message.role for message in result.messages}
    pieces = []
    for message in result.messages:
        parts = _Parts()
        _add_block(parts, message.content)
        said = "\n".join(parts.texts)
        pieces.append(f"[{message.role}]\n{said}" if len(roles) > 1 else said)
    text = capped("\n\n".join(pieces)) if pieces else prompts.notice("mcp_no_output")
    return wrap(PROMPT_TAG, encodable(text), server=server, prompt=prompt)


def capped(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    if len(text) <= limit:
        return text
    head, tail = text[: limit // 2], text[-(limit - limit // 2) :]
    omitted = len(text) - len(head) - len(tail)
    return f"{head}\n{prompts.notice('mcp_output_omitted', count=f'{omitted:,}')}\n{tail}"


def _add_block(parts: _Parts, block: Any) -> None:
    kind = getattr(block, "type", None)
    if kind == "text":
        parts.texts.append(block.text)
    elif kind == "image":
        parts.add_image(block.data, block.mime_type, "an image")
    elif kind == "audio":
        parts.texts.append(prompts.notice("mcp_audio_left_out", mime_type=block.mime_type))
    elif kind == "resource_link":
        described = f": {block.description}" if block.description else ""
        parts.texts.append(prompts.notice("mcp_resource_link", uri=block.uri, name=block.name) + described)
    elif kind == "resource":
        _add_contents(parts, block.resource)
    else:
        parts.texts.append(prompts.notice("mcp_unknown_content", kind=str(kind)[:40]))


def _add_contents(parts: _Parts, contents: Any) -> None:
    uri, mime_type = str(contents.uri), contents.mime_type
    text = getattr(contents, "text", None)
    if isinstance(text, str):
        parts.texts.append(
            prompts.notice("mcp_resource_text", uri=uri, mime_type=mime_type or "text") + "\n" + text
        )
    elif mime_type in IMAGE_TYPES:
        parts.add_image(contents.blob, mime_type, f"the image {uri}")
    else:
        size = len(getattr(contents, "blob", "")) * 3 // 4
        parts.texts.append(
            prompts.notice("mcp_binary_left_out", uri=uri, mime_type=mime_type or "unknown", size=f"{size:,}")
        )


def _image_problem(data: str, mime_type: str | None, already: int) -> str | None:
    if mime_type not in IMAGE_TYPES:
        return f"its type {str(mime_type)[:40]!r} is not one of {', '.join(IMAGE_TYPES)}"
    if already >= MAX_IMAGES:
        return f"at most {MAX_IMAGES} images are kept of one result"
    if len(data) * 3 // 4 > MAX_IMAGE_BYTES:
        return f"it is over {MAX_IMAGE_BYTES // 2**20} MB"
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return "its data is not base64"
    return None


def _summary(text: str, images: int, *, error: bool) -> str:
    if error:
        first = next((line.strip() for line in text.splitlines() if line.strip()), "error")
        return first[:200]
    shown = count_noun(len(text.splitlines()) if text else 0, "line")
    return shown + (f", {count_noun(images, 'image')}" if images else "")
