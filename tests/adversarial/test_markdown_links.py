"""A markdown link from the model is shown with its address as text, never as a terminal
hyperlink (OSC 8) whose text names one site while a click opens another: inline, reference
and autolinks, links whose address holds escape codes, character references or spaces, in
the REPL's renderer and in a real pty."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from mini_claude.core.events import TextDelta, TextDone, TurnEnded
from mini_claude.ui.render.console import make_renderer
from tests.adversarial import test_terminal_escapes as escapes
from tests.adversarial.cases import case
from tests.cli_harness import Cli, strip_ansi
from tests.fake_api import FakeAnthropic, text_reply

HYPERLINK = "\x1b]8;"
RICH_OWN, raw_controls = escapes.RICH_OWN, escapes.raw_controls
terminal_console = escapes.terminal_console  # the REPL's console on a colour terminal (a fixture)
# The reply, and what must be seen of its address.
LINKS = {
    "inline": ("See [docs.python.org](https://evil.example/x) now.", "https://evil.example/x"),
    # In one delta the definition is printed with the paragraph before it: a link, its address
    # shown (streamed slowly, the paragraph is printed before the definition arrives: as typed).
    "reference": ("See [docs][1].\n\n[1]: https://evil.example/ref", "docs (https://evil.example/ref)"),
    "autolink": ("See <https://evil.example/auto> now.", "https://evil.example/auto"),
    "title": ('See [docs](https://evil.example/t "docs.python.org").', "https://evil.example/t"),
    "escape_in_url": ("See [docs](https://evil.example/\x1b]52;c;eA==\x07) now.", "evil.example"),
    "char_reference_in_url": ("See [docs](https://evil.example/&#x1b;[2J) now.", "evil.example"),
    "percent_escape_in_url": (
        "See [docs](https://evil.example/%1b%5b2J) now.",
        "https://evil.example/%1b%5b2J",
    ),
    "angle_url_with_space": ("See [docs](<https://evil.example/a b>) now.", "evil.example/a"),
    "mailto": ("Write [support](mailto:evil@evil.example).", "mailto:evil@evil.example"),
}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=case("terminal", "no OSC 8 hyperlink; the address shown as text"), id=n)
        for n in LINKS
    ],
)
def test_renderer_shows_link_addresses(name: str, terminal_console: Callable[..., Console]) -> None:
    reply, address = LINKS[name]
    console = terminal_console(width=400)
    renderer = make_renderer(console, plain=False)
    renderer(TextDelta(reply + "\n"))
    renderer(TextDone())
    renderer(TurnEnded("done", reply))

    raw = console.file.getvalue()  # type: ignore[attr-defined]
    assert HYPERLINK not in raw, repr(raw)
    shown = re.sub(r"(^|\n)\r", r"\1", RICH_OWN.sub("", raw))  # the live region's own line starts
    assert raw_controls(shown) == [], repr(shown)
    assert address in re.sub(r"\s+", " ", shown), shown


@case("terminal", "an image's address: no hyperlink either")
def test_renderer_image_is_no_hyperlink(terminal_console: Callable[..., Console]) -> None:
    console = terminal_console(width=200)
    renderer = make_renderer(console, plain=False)
    renderer(TextDelta("![docs.python.org](https://evil.example/i.png)\n"))
    renderer(TurnEnded("done", ""))
    assert HYPERLINK not in console.file.getvalue()  # type: ignore[attr-defined]


@case("terminal", "REPL in a pty: a link's address is printed, no OSC 8 reaches the terminal")
def test_repl_link_shows_its_address(api_env: FakeAnthropic, project_dir: Path) -> None:
    api_env.stream_replies.append(text_reply("Read [docs.python.org](https://evil.example/x) first.\n"))
    with Cli(project_dir).terminal(columns=200) as term:
        raw = io.StringIO()
        term.child.logfile_read = raw
        term.wait_until_ready()
        term.submit("hello")
        shown = term.expect_prompt()
        term.submit("/exit")
        assert term.wait_exit() == 0

    assert HYPERLINK not in raw.getvalue()
    assert "docs.python.org (https://evil.example/x)" in strip_ansi(shown)
