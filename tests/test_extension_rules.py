"""The small rules of extensions, as tables: a hook's matcher, what `allowed-tools` cover (and the
ways around them), `$ARGUMENTS` and `$1`…`$9`, and the YAML forms frontmatter takes."""

from __future__ import annotations

import pytest

from mini_claude.core.frontmatter.codec import parse
from mini_claude.extensions.approvals import covers
from mini_claude.extensions.hooks.matching import MatcherError, check_matcher, matches
from mini_claude.extensions.skills.arguments import substitute
from mini_claude.safety.permissions import PermissionRequest


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


def _shell(command: str) -> PermissionRequest:
    return PermissionRequest("run_shell", "shell", command, "run a shell command")


@pytest.mark.parametrize(
    ("rule", "request_", "expected"),
    [
        ("Bash", _shell("anything at all; really"), True),
        ("Bash(git status)", _shell("git status"), True),
        ("Bash(git status)", _shell("git status -s"), False),
        ("Bash(npm run *)", _shell("npm run test"), True),
        ("Read", PermissionRequest("read_file", "read", "/etc/hosts", "outside the project"), True),
        ("read_file", PermissionRequest("read_file", "read", "/etc/hosts", "outside the project"), True),
        ("Read(/etc/**)", PermissionRequest("read_file", "read", "/etc/hosts", "outside the project"), False),
        ("Write", PermissionRequest("edit_file", "write", "/p/a.py", "edit a project file"), False),
        ("Edit", PermissionRequest("edit_file", "write", "/p/a.py", "edit a project file"), True),
        ("Read", _shell("cat x"), False),
        ("not a rule(", _shell("x"), False),
    ],
)
def test_what_a_rule_covers(rule: str, request_: PermissionRequest, expected: bool) -> None:
    assert covers(rule, request_) is expected


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
