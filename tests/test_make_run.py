"""`make run DIR=~/code/myproject`, as README writes it, from a shell that leaves the `~` after
`=` to make (dash, zsh): the Makefile expands it; a folder that is not there is one line."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from mini_claude.core.config import project_memory_dir

REPO = Path(__file__).resolve().parent.parent
PROGRAM = REPO / ".venv" / "bin" / "mini-claude"
# `-o`: the install stamp counts as done, so the test never installs anything.
MAKE = "make -s --no-print-directory -o .venv/.installed-run run"

pytestmark = pytest.mark.skipif(
    shutil.which("make") is None or shutil.which("dash") is None or not PROGRAM.exists(),
    reason="needs make, dash and the repository's .venv",
)


def make_run(line: str) -> subprocess.CompletedProcess[str]:
    """`line` run by dash in the repository, as a dash user would type it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    return subprocess.run(
        ["dash", "-c", f"{MAKE} {line}"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("folder", ["code/myproject", "code/my project", ""], ids=["readme", "space", "home"])
def test_a_leading_tilde_in_dir_is_the_home_folder(folder: str) -> None:
    project = Path.home() / folder
    project.mkdir(parents=True, exist_ok=True)
    dir_arg = f"~/{folder}" if folder else "~"

    done = make_run(f"DIR='{dir_arg}' ARGS='memory path'")  # quoted or not, dash leaves the ~ alone

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(project_memory_dir(project))


def test_the_readme_example_works_as_written() -> None:
    readme = (REPO / "README.md").read_text()
    assert "`make run DIR=~/code/myproject`" in readme
    (Path.home() / "code" / "myproject").mkdir(parents=True)

    done = make_run("DIR=~/code/myproject ARGS=--version")

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("mini-claude ")


def test_a_dir_that_is_not_there_is_one_line_naming_it() -> None:
    done = make_run("DIR=~/code/missing ARGS=--version")

    assert done.returncode == 2 and done.stdout == ""
    assert (
        f"mini-claude: DIR={Path.home()}/code/missing is not a folder you can open"
        in done.stderr.splitlines()
    )
