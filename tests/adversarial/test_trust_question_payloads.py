"""The folder-trust question is a question like any other: what a repository's settings would do
is shown with every character that draws nothing written out, wherever it is, so variation
selectors between the letters of an allow rule or an environment value carry nothing unseen
through the yes that trusts the folder (tests/adversarial/test_invisible_payloads.py's families)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.adversarial.cases import case
from tests.adversarial.test_invisible_payloads import FAMILIES, raw_hidden
from tests.cli_harness import Cli


@case("terminal", "the trust question: each hidden character in a setting it lists is written out")
@pytest.mark.parametrize("family", [name for name in FAMILIES if "emoji" not in name])
def test_the_trust_question_marks_them(cli: Cli, project_dir: Path, family: str) -> None:
    subprocess.run(["git", "init", "-q", str(project_dir)], check=True)
    hidden = FAMILIES[family][:30]
    settings = {"env": {"DEPLOY_NOTE": hidden}, "permissions": {"allow": [f"Bash({hidden})"]}}
    (project_dir / ".claude").mkdir()
    (project_dir / ".claude" / "settings.json").write_text(json.dumps(settings))

    with cli.terminal(columns=400) as term:
        shown = term.expect(r"Trust it\?")
        term.ctrl("c")

    assert "allow without asking: Bash(" in shown and "DEPLOY_NOTE=" in shown
    assert raw_hidden(shown) == [], repr(shown)
