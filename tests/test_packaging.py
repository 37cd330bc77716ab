"""The wheel carries every prompt, and an installed copy finds them outside the source tree."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_wheel_ships_prompts_and_the_installed_package_loads_them(tmp_path: Path) -> None:
    # The build backend itself (what pip would call), offline: a second or two less than `pip wheel`.
    build = [sys.executable, "-m", "hatchling", "build", "--target", "wheel", "--directory", str(tmp_path)]
    subprocess.run(build, cwd=REPO, check=True, capture_output=True)
    [wheel] = tmp_path.glob("mini_claude-*.whl")
    shipped = {name for name in zipfile.ZipFile(wheel).namelist() if name.startswith("mini_claude/prompts/")}
    expected = {f"mini_claude/prompts/{p.name}" for p in (REPO / "prompts").iterdir() if p.is_file()}
    assert expected and expected <= shipped

    # A bare venv, installed into by this pip (`--python`): seeding the venv with its own pip took
    # most of the test's time.
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", "--no-index", wheel],
        check=True,
        capture_output=True,
    )
    probe = (
        "from mini_claude.core import prompts\n"
        "print(prompts.prompts_dir())\n"
        "assert 'Memory' in prompts.load('memory.md')\n"
        "assert prompts.load_toml('tools.toml')['tool']\n"
    )
    found = subprocess.run([python, "-c", probe], cwd=tmp_path, check=True, capture_output=True, text=True)
    assert Path(found.stdout.strip()).is_relative_to(env_dir)
    version = subprocess.run([env_dir / "bin" / "mini-claude", "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("mini-claude ")
