"""Telling from a model server's error that the request did not fit its context window, and the
numbers it gave: the prompt's tokens and the window. Each server words it its own way:

- Anthropic: 400 `prompt is too long: 208656 tokens > 200000 maximum`; `input length and
  \\`max_tokens\\` exceed context limit: 190000 + 16000 > 200000`; 413 `request_too_large` when the
  body passes the byte limit (no numbers).
- llama.cpp's server: 400 `exceed_context_size_error`, `request (4476 tokens) exceeds the
  available context size (4096 tokens), try increasing it`, with `n_prompt_tokens` and `n_ctx`
  in the error object (older builds: `the request exceeds the available context size`, no numbers).
- vLLM, OpenAI and OpenAI-compatible proxies such as LiteLLM (`ContextWindowExceededError`):
  `This model's maximum context length is 8192 tokens. However, you requested 9500 tokens (9000
  in the messages, 500 in the completion)`, `… your messages resulted in 9000 tokens`, `… your
  request has 5000 input tokens`; vLLM also `The decoder prompt (length 9000) is longer than the
  maximum model length of 8192`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, TypeGuard

TOO_LONG = re.compile(
    r"prompt is too long|exceeds? (?:the )?context (?:limit|window)|exceeds the available context size"
    r"|exceed_context_size_error|maximum context length|context_length_exceeded|ContextWindowExceeded"
    r"|longer than the maximum model length",
    re.IGNORECASE,
)
_NUMBER = r"(\d[\d,]*)"
# Patterns naming both numbers: (pattern, group of the prompt's tokens, group of the window).
_BOTH = (
    (re.compile(rf"{_NUMBER} tokens? > {_NUMBER} maximum"), 1, 2),
    (re.compile(rf"context limit: {_NUMBER} \+ {_NUMBER} > {_NUMBER}"), 1, 3),
    (
        re.compile(rf"request \({_NUMBER} tokens\) exceeds the available context size \({_NUMBER} tokens\)"),
        1,
        2,
    ),
    (re.compile(rf"prompt \(length {_NUMBER}\) is longer than the maximum model length of {_NUMBER}"), 1, 2),
)
_WINDOW = re.compile(rf"maximum context length is {_NUMBER} tokens", re.IGNORECASE)
_PROMPT = re.compile(
    rf"{_NUMBER} in the messages|resulted in {_NUMBER} tokens"
    rf"|(?:has|contains(?: at least)?) {_NUMBER} input tokens"
)


@dataclass(frozen=True)
class Overflow:
    tokens: int  # the prompt's tokens as the server counted them (0: not said)
    window: int  # the server's context window in tokens (0: not said)


def context_overflow(status: int, detail: str, body: Any = None) -> Overflow | None:
    """For an error status with the server's words (`detail`) and JSON body: the overflow, when
    the refusal is one because the request does not fit the window; else None."""
    if status != 413 and not (status == 400 and TOO_LONG.search(detail)):
        return None
    for pattern, prompt_group, window_group in _BOTH:
        if match := pattern.search(detail):
            return Overflow(_number(match.group(prompt_group)), _number(match.group(window_group)))
    fields = body.get("error") if isinstance(body, dict) else None
    window_field = fields.get("n_ctx") if isinstance(fields, dict) else None
    if isinstance(fields, dict) and _is_count(window_field):
        tokens = fields.get("n_prompt_tokens")
        return Overflow(tokens if _is_count(tokens) else 0, window_field)
    window = _WINDOW.search(detail)
    prompt = _PROMPT.search(detail)
    tokens = next((group for group in prompt.groups() if group), "0") if prompt else "0"
    return Overflow(_number(tokens), _number(window.group(1)) if window else 0)


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def _is_count(value: object) -> TypeGuard[int]:
    return type(value) is int and value > 0
