"""A deny rule for a command met through another spelling of it: a backtick inside an unquoted
here-document, an array subscript that runs a command, a program named by its path (`/bin/rm`),
a wrapper given options (`env -i`, `exec -a`, `sudo -iu root`, `bash -c --`, `sudo sh -c`), and,
in bypass mode, a line that cannot be judged at all. The rule must refuse (or, where it cannot
be checked, the line must ask), in bypass mode as in the others; the file must survive."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude.safety.decision import RuleSet
from mini_claude.safety.rules import RuleEntry, parse_rule
from tests.adversarial.cases import case
from tests.tool_harness import Tools


def _tools(project_dir: Path, mode: str) -> Tools:
    tools = Tools(project_dir, mode, "n")
    tools.ctx.permissions.rules = RuleSet(
        [parse_rule(RuleEntry("Bash(rm:*)", "deny", "settings.json", project_dir), project_dir)]
    )
    (project_dir / "keep.txt").write_text("precious")
    return tools


@case("permissions", "a deny rule refuses the command hidden in a here-document's backticks or a subscript")
@pytest.mark.parametrize("mode", ["ask", "bypass"])
@pytest.mark.parametrize(
    "command",
    [
        "cat <<EOF\n`rm keep.txt`\nEOF",
        "cat <<EOF\nsaid \\`x\\` then `rm keep.txt`\nEOF",
        "a[$(rm keep.txt)]=1",
    ],
)
def test_a_substitution_the_grammar_leaves_as_text_is_still_judged(
    project_dir: Path, mode: str, command: str
) -> None:
    tools = _tools(project_dir, mode)
    result = tools.run("run_shell", command=command)
    assert result.denied and "Bash(rm:*)" in result.content
    assert (project_dir / "keep.txt").exists()
