"""The small rules of extensions, as tables: a hook's matcher, what `allowed-tools` allow (judged as
the permission rules they are), `$ARGUMENTS` and `$1`…`$9`, and the YAML forms frontmatter takes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mini_claude.core.errors import PermissionDenied
from mini_claude.core.frontmatter.codec import parse
from mini_claude.extensions.approvals import Approvals
from mini_claude.extensions.hooks.matching import MatcherError, check_matcher, matches
from mini_claude.extensions.skills.arguments import substitute
from mini_claude.safety.permissions import Permissions


@pytest.mark.parametrize(
    ("matcher", "tool", "expected"),
    [
        ("", "run_shell", True),
        ("*", "edit_file", True),
        ("Bash", "run_shell", True),
        ("run_shell", "run_shell", True),
        ("Edit|Write", "write_file", True),
        ("Edit|Write", "edit_file", True),
        ("Edit|Write", "read_file", False),
        ("MultiEdit", "edit_file", True),
        ("Glob", "list_files", True),
        ("LS", "list_files", True),
        ("Grep", "grep_search", True),
        ("Skill", "skill", True),
        ("ExitPlanMode", "exit_plan_mode", True),
        ("bash", "run_shell", False),  # names are case-sensitive, as in Claude Code
        ("Bas", "run_shell", False),  # a name is whole
        ("^Ba", "run_shell", True),  # a regex is searched for
        ("Notebook.*", "edit_file", False),
        ("mcp__.*", "mcp__github__search", True),
        (".*_file", "read_file", True),
    ],
)
def test_hook_matchers(matcher: str, tool: str, expected: bool) -> None:
    assert matches(matcher, tool, tool=True) is expected


def test_a_matcher_that_is_no_regex_is_refused_and_values_match_exactly() -> None:
    with pytest.raises(MatcherError):
        check_matcher("(unclosed")
    assert matches("startup|resume", "resume") and not matches("startup", "clear")


def _approved(rules: tuple[str, ...], project: Path, check: Callable[[Permissions], None]) -> bool:
    """Whether `check` passes without a question once a skill's `allowed-tools` are `rules`
    (no one can answer here: a question is a refusal)."""
    permissions = Permissions(project, mode="ask", ask=None, home=project / "home")
    Approvals(permissions, project).allow_for_turn(rules, "skill x (SKILL.md)")
    try:
        check(permissions)
    except PermissionDenied:
        return False
    return True


def _shell(command: str) -> Callable[[Permissions], None]:
    return lambda permissions: permissions.check_shell("run_shell", command)


def _read(path: str) -> Callable[[Permissions], None]:
    return lambda permissions: permissions.check_read("read_file", Path(path))


def _edit(relative: str, tool: str = "edit_file") -> Callable[[Permissions], None]:
    return lambda permissions: permissions.check_write(tool, permissions.project_dir / relative)


@pytest.mark.parametrize(
    ("rule", "check", "expected"),
    [
        ("Bash", _shell("make build; make test"), True),
        ("Bash(make build)", _shell("make build"), True),
        ("Bash(make build)", _shell("make build -j"), False),
        ("Bash(npm run *)", _shell("npm run test"), True),
        ("Bash(npm run:*)", _shell("npm run test && curl x | sh"), False),  # every command on its own
        ("Read", _read("/etc/hosts"), True),  # outside the project
        ("read_file", _read("/etc/hosts"), True),
        ("Read(//etc/**)", _read("/etc/hosts"), True),
        ("Read(//usr/**)", _read("/etc/hosts"), False),
        ("Edit", _edit("a.py"), True),
        ("Edit(src/**)", _edit("src/a.py"), True),
        ("Edit(src/**)", _edit("lib/a.py"), False),
        ("Edit(src/**)", _edit("src/a.py", "write_file"), True),  # a path rule covers every writer
        ("Write", _edit("a.py"), False),  # a bare rule names one tool
        ("Read", _shell("make"), False),
    ],
)
def test_allowed_tools_are_judged_as_permission_rules(
    tmp_path: Path, rule: str, check: Callable[[Permissions], None], expected: bool
) -> None:
    assert _approved((rule,), tmp_path.resolve(), check) is expected


def test_allowed_tools_end_with_the_turn_and_a_rule_that_does_not_parse_is_skipped(tmp_path: Path) -> None:
    permissions = Permissions(tmp_path, mode="ask", ask=None, home=tmp_path / "home")
    approvals = Approvals(permissions, tmp_path)
    approvals.allow_for_turn(("Bsh(make)", "Bash(make:*)"), "/build (build.md)")
    assert [rule.text for rule in permissions.rules.rules] == ["Bash(make:*)"]
    permissions.check_shell("run_shell", "make all")
    approvals.end_turn()
    assert list(permissions.rules.rules) == []
    with pytest.raises(PermissionDenied):
        permissions.check_shell("run_shell", "make all")


@pytest.mark.parametrize(
    ("text", "arguments", "expected"),
    [
        ("Fix $ARGUMENTS now", "issue 12", "Fix issue 12 now"),
        ("From $1 to $2", "a.py 'b c.py'", "From a.py to b c.py"),
        ("Only $3", "x", "Only "),
        ("Keep $10 and $ARGUMENTSX", "a", "Keep $10 and $ARGUMENTSX\n\nARGUMENTS: a"),
        ("No placeholder", "a b", "No placeholder\n\nARGUMENTS: a b"),
        ("No placeholder", "", "No placeholder"),
        ("$1", "'$2 stays' x", "$2 stays"),  # filled in one pass
        ("$1 $2", "unclosed 'quote", "unclosed 'quote"),
    ],
)
def test_arguments(text: str, arguments: str, expected: str) -> None:
    assert substitute(text, arguments) == expected


def test_frontmatter_reads_the_yaml_forms_skill_files_use() -> None:
    header = parse(
        "---\nname: review\ndescription: >\n  Reviews a change\n  line by line\nallowed-tools:\n"
        "  - Read\n  - 'Bash(git diff:*)'\nargument-hint: [pr] [focus]\nmetadata:\n  author: me\n"
        "summary: starts here\n  and goes on\n---\nbody"
    )
    assert header.fields["description"] == "Reviews a change line by line"
    assert header.lists["allowed-tools"] == ("Read", "Bash(git diff:*)")
    assert header.fields["allowed-tools"] == "Read, Bash(git diff:*)"
    assert header.fields["argument-hint"] == "[pr] [focus]"
    assert header.fields["summary"] == "starts here and goes on"
    assert "author" not in header.fields and header.warnings == ()
    assert header.body == "body"


def test_a_list_item_needs_an_empty_key_above_it() -> None:
    header = parse("---\nname: x\n- stray item\n  Indented: key\n---\n")
    assert header.fields == {"name": "x", "indented": "key"} and header.lists == {}
    assert [warning.split(":")[0] for warning in header.warnings] == ["line 3"]
