"""`project.json` (which project a `~/.mini-claude/projects/<hash>` folder is for) when it has been
edited, copied, replaced by a symlink, a FIFO or a huge file: `mini-claude memory projects` never
hangs, never reads through a symlink, never shows a path the record cannot prove (its hash must be
the folder's name), writes nothing to the terminal raw; a session puts the record right without
writing through what sits at its name."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mini_claude.core.config import project_folder_name, project_state_dir, projects_dir
from mini_claude.memory.project_record import RECORD_FILE, RECORD_MAX_BYTES, read_record, record_project
from tests.adversarial.cases import case
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply


def folder_for(root: str) -> Path:
    folder = projects_dir() / project_folder_name(root)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def projects_output(project_dir: Path) -> str:
    result = Cli(project_dir).run("memory", "projects", timeout=20)
    assert result.returncode == 0, result.stderr
    return result.stdout


def naming(root: str) -> str:
    return json.dumps({"version": 1, "root": root})


HOSTILE_RECORDS = {
    "escape_codes_in_the_root": (
        lambda root: naming("/tmp/\x1b]52;c;cHduZWQ=\x07evil"),
        "\\x1b]52",
    ),
    "another_projects_root": (
        lambda root: json.dumps({"version": 1, "root": "/etc"}),
        "whose folder is another",
    ),
    "relative_root": (
        lambda root: json.dumps({"version": 1, "root": "../../etc"}),
        "not an absolute, normal path",
    ),
    "dotdot_in_the_root": (
        lambda root: json.dumps({"version": 1, "root": root + "/../" + Path(root).name}),
        "not an absolute, normal path",
    ),
    "nan_instead_of_a_path": (lambda root: '{"version": 1, "root": NaN}', "not valid JSON"),
    "nested_too_deep": (lambda root: "[" * 100_000 + "]" * 100_000, f"is over {RECORD_MAX_BYTES // 1000} KB"),
    "deep_but_small": (lambda root: "[" * 20_000 + "]" * 20_000, "not valid JSON"),
    "not_an_object": (lambda root: json.dumps([root]), "names no project root"),
    "latin1_bytes": (lambda root: b'{"root": "/caf\xe9"}', "not valid JSON"),
}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            name, marks=case("memory", f"project.json with {name.replace('_', ' ')}: reported, no path")
        )
        for name in HOSTILE_RECORDS
    ],
)
def test_hostile_record_is_reported_never_trusted(project_dir: Path, name: str) -> None:
    make, reason = HOSTILE_RECORDS[name]
    folder = folder_for(str(project_dir))
    content = make(str(project_dir))
    (folder / RECORD_FILE).write_bytes(content if isinstance(content, bytes) else content.encode())

    out = projects_output(project_dir)

    [line] = out.splitlines()
    assert f"  {folder.name}  ?  (unknown project: " in line and reason in line, line
    assert "\x1b" not in out and "\x07" not in out
    assert "/etc" not in line.split("(unknown project")[0]


@case("memory", "project.json a symlink to a valid record elsewhere: not followed, reported as a symlink")
def test_record_symlink_is_not_followed(project_dir: Path, tmp_path: Path) -> None:
    folder = folder_for(str(project_dir))
    elsewhere = tmp_path / "planted.json"
    elsewhere.write_text(json.dumps({"version": 1, "root": str(project_dir)}))
    (folder / RECORD_FILE).symlink_to(elsewhere)

    assert read_record(folder).root is None
    assert "a symlink" in projects_output(project_dir)


@case("memory", "project.json a FIFO nobody writes: listing does not hang, says what it is")
def test_record_fifo_does_not_hang(project_dir: Path) -> None:
    folder = folder_for(str(project_dir))
    os.mkfifo(folder / RECORD_FILE)
    assert "a named pipe (FIFO)" in projects_output(project_dir)


@case("memory", "a project folder that is a symlink to another one: skipped, not listed twice")
def test_symlinked_project_folder_is_skipped(project_dir: Path) -> None:
    folder = folder_for(str(project_dir))
    record_project(folder, project_dir)
    (projects_dir() / ("0" * 16)).symlink_to(folder)
    (projects_dir() / "notes.txt").write_text("not a project")

    [line] = projects_output(project_dir).splitlines()
    assert folder.name in line and str(project_dir) in line


@case("memory", "a memory folder symlinked out of its project folder: its files are not counted")
def test_escaping_memory_folder_is_not_counted(project_dir: Path, tmp_path: Path) -> None:
    folder = folder_for(str(project_dir))
    record_project(folder, project_dir)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "user_x.md").write_text("---\nname: x\ndescription: y\ntype: user\n---\n")
    (folder / "memory").symlink_to(outside)

    [line] = projects_output(project_dir).splitlines()
    assert line.startswith(f"    -  {folder.name}  {project_dir}")


@case("memory", "a session meets a symlink at project.json: replaced by a real record, target untouched")
def test_session_replaces_a_symlinked_record(
    api_env: FakeAnthropic, project_dir: Path, tmp_path: Path
) -> None:
    folder = project_state_dir(str(project_dir))
    folder.mkdir(parents=True)
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    (folder / RECORD_FILE).symlink_to(target)
    api_env.stream_replies.append(text_reply("ok"))

    assert Cli(project_dir).run("-p", "hello").returncode == 0

    assert target.read_text() == "keep me"
    assert not (folder / RECORD_FILE).is_symlink()
    assert read_record(folder).root == str(project_dir)


@case("memory", "a project path with a line break and bytes that are not UTF-8: recorded and listed quoted")
def test_odd_project_path_round_trips(tmp_path: Path) -> None:
    odd = tmp_path / "two\nlines \udcff"
    odd.mkdir()
    folder = folder_for(str(odd))
    record_project(folder, odd)

    assert read_record(folder).root == str(odd)
    [line] = projects_output(tmp_path).splitlines()
    assert "$'" in line and "\\n" in line and "\\xff" in line


@case("memory", "project.json under umask 0, or left 0666 by an older version: 0600, like the transcripts")
def test_the_record_is_private_whatever_the_umask(api_env: FakeAnthropic, project_dir: Path) -> None:
    folder = project_state_dir(str(project_dir))
    previous = os.umask(0)
    try:
        record_project(folder, project_dir)
    finally:
        os.umask(previous)
    record = folder / RECORD_FILE
    assert oct(record.stat().st_mode & 0o777) == "0o600"

    record.chmod(0o666)  # as an older version left it
    api_env.stream_replies.append(text_reply("ok"))
    assert Cli(project_dir).run("-p", "hello").returncode == 0
    assert oct(record.stat().st_mode & 0o777) == "0o600" and read_record(folder).root == str(project_dir)
