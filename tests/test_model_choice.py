"""Choosing the model: `opus`, `sonnet`, `haiku` stand for the current models wherever a model is
named; `/model` alone opens a list with the model in use marked; a model without a known price
says so; the banner names a server that is not Anthropic's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mini_claude.core.config import load_settings
from mini_claude.ui.commands.model import banner, other_server
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply
from tests.kit import main_calls

DOWN = "\x1b[B"
UP = "\x1b[A"


@pytest.mark.parametrize(
    ("typed", "model"),
    [
        ("opus", "claude-opus-5-5"),
        ("Sonnet", "claude-sonnet-5-5"),
        ("haiku", "claude-haiku-5-5"),
        ("qwen3", "qwen3"),
    ],
)
def test_an_alias_is_the_current_model_of_its_family(typed: str, model: str) -> None:
    assert load_settings(model=typed).model == model


def test_the_environment_takes_aliases_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_MODEL", "opus")
    monkeypatch.setenv("MINI_CLAUDE_SIDE_MODEL", "haiku")
    settings = load_settings()
    assert (settings.model, settings.side_model) == ("claude-opus-5-5", "claude-haiku-5-5")


def test_a_settings_files_model_takes_aliases_and_status_names_the_model_it_stands_for(
    cli: Cli, api_env: FakeAnthropic, isolated_env: Path
) -> None:
    settings = isolated_env / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"model": "haiku"}))
    api_env.stream_replies.append(text_reply("From haiku."))
    assert cli.run("-p", "hi").returncode == 0
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("/status")
        shown = term.expect_prompt()
    assert [request.model for request in main_calls(api_env)] == ["claude-haiku-5-5"]
    assert "Model: claude-haiku-5-5" in shown and "settings.json" in shown


def test_model_alone_opens_a_list_and_the_choice_is_used(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("From opus."))
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("/model")
        shown = term.expect("Enter choose")
        assert "sonnet claude-sonnet-5-5 ✔ (in use)" in shown and "opus   claude-opus-5-5" in shown
        term.type(UP)
        term.type("\r")
        term.expect("Model set to claude-opus-5-5 for this session.")
        term.submit("hi")
        term.expect("From opus.")
        term.expect_prompt()
    assert api_env.requests[-1].model == "claude-opus-5-5"


def test_a_model_without_a_price_says_so(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("Local answer."))
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("/model my-local-model")
        term.expect(r"Model set to my-local-model for this session \(price unknown: tokens only\)\.")
        term.submit("hi")
        term.expect("Local answer.")
        term.submit("/cost")
        term.expect("Price unknown for my-local-model")
        term.expect_prompt()
    assert api_env.requests[-1].model == "my-local-model"


def test_the_banner_names_a_server_that_is_not_anthropics(cli: Cli, api_env: FakeAnthropic) -> None:
    with cli.terminal() as term:
        shown = term.expect("/help for commands")
        assert f"server {api_env.base_url.removeprefix('http://')}" in shown


def test_the_server_is_shown_without_credentials_and_anthropic_not_at_all() -> None:
    assert other_server("http://user:secret@localhost:8080/v1/") == "localhost:8080/v1"
    assert other_server("https://api.anthropic.com") is None and other_server(None) is None
    assert (
        banner("1.0", "qwen", "http://10.0.0.5:8000")
        == "mini-claude 1.0 · qwen · server 10.0.0.5:8000 · /help for commands"
    )
