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


FAKE_PYTHON = """#!/bin/sh
# Stands for python: `-m venv DIR` makes DIR/bin/python (this script again, as pip); as pip it is noisy.
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python"; exit 0; fi
echo "Collecting rich"; echo "Downloading 3 MB of wheels"
if [ -n "$PIP_FAILS" ]; then echo "ERROR: no network"; exit 1; fi
"""


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
@pytest.mark.parametrize("fails", [False, True], ids=["installed", "failed"])
def test_the_first_install_prints_one_line_a_step_and_keeps_pips_output_in_a_log(
    tmp_path: Path, fails: bool
) -> None:
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(REPO / name, tmp_path / name)
    python = tmp_path / "fake-python"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    if fails:
        env["PIP_FAILS"] = "1"

    done = subprocess.run(
        ["make", "-s", "--no-print-directory", f"PYTHON={python}", ".venv/.installed-run"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip

    log = (tmp_path / ".venv" / "install.log").read_text()
    assert "Downloading 3 MB of wheels" in log and "Downloading" not in done.stdout
    steps = done.stdout.splitlines()
    assert steps[0] == f"mini-claude: creating .venv with {python}"
    assert (
        steps[1].startswith("mini-claude: installing what it needs to run")
        and ".venv/install.log" in steps[1]
    )
    if fails:
        assert done.returncode != 0 and len(steps) == 2
        assert "ERROR: no network" in done.stderr  # the end of the log, shown where the failure is
        assert done.stderr.splitlines()[-2].endswith("pip's whole output is in .venv/install.log")
    else:
        assert done.returncode == 0 and steps[2:] == ["mini-claude: installed"] and done.stderr == ""
