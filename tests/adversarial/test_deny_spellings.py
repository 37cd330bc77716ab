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


@case("permissions", "a deny rule refuses a path-named program and wrappers given options, in bypass too")
@pytest.mark.parametrize(
    "command",
    [
        "/bin/rm keep.txt",
        "find . -name keep.txt -exec /bin/rm {} ;",
        "env -i rm keep.txt",
        "env -u HOME rm keep.txt",
        "env -C . rm keep.txt",
        "env -S 'rm keep.txt'",
        "exec -a x rm keep.txt",
        "sudo -iu root rm keep.txt",
        "sudo sh -c 'rm keep.txt'",
        "bash -c -- 'rm keep.txt'",
        "bash -e -c 'rm keep.txt'",
        "eval -- rm keep.txt",
    ],
)
def test_a_deny_rule_holds_through_another_spelling(project_dir: Path, command: str) -> None:
    tools = _tools(project_dir, "bypass")
    result = tools.run("run_shell", command=command)
    assert result.denied and "Bash(rm:*)" in result.content, result.content
    assert (project_dir / "keep.txt").exists()


@case("permissions", "bypass with a shell deny rule: a line that cannot be judged asks instead of running")
@pytest.mark.parametrize(
    "command",
    ["$'rm' keep.txt", "{rm,keep.txt}", "r[m] keep.txt", "f() { rm keep.txt; }; f", "coproc rm keep.txt"],
)
def test_bypass_asks_when_a_deny_rule_cannot_be_checked(project_dir: Path, command: str) -> None:
    tools = _tools(project_dir, "bypass")
    result = tools.run("run_shell", command=command)
    assert result.denied and len(tools.user.questions) == 1
    assert (project_dir / "keep.txt").exists()


@case("permissions", "bypass without a shell deny or ask rule still runs what it cannot judge")
def test_bypass_without_deny_rules_runs_unjudged_lines(project_dir: Path) -> None:
    tools = Tools(project_dir, "bypass")
    result = tools.run("run_shell", command="$'echo' hi")
    assert not result.denied and "hi" in result.content
