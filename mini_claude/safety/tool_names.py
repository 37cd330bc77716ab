"""Claude Code's names for our tools, the one table that permission rules (`Bash(npm test:*)`),
hook matchers (`Edit|Write`), hooks' `tool_name` and skills' `allowed-tools` all read: Bash is
run_shell, Read read_file, Edit (and MultiEdit) edit_file, Write write_file, Glob and LS
list_files, Grep grep_search, Skill skill, Task (and Agent) agent. Ours work everywhere too."""

from __future__ import annotations

# Ours → Claude Code's, the first being the name hooks are told (`tool_name`).
CLAUDE_NAMES: dict[str, tuple[str, ...]] = {
    "run_shell": ("Bash",),
    "read_file": ("Read",),
    "edit_file": ("Edit", "MultiEdit"),
    "write_file": ("Write",),
    "list_files": ("Glob", "LS"),
    "grep_search": ("Grep",),
    "web_fetch": ("WebFetch",),
    "exit_plan_mode": ("ExitPlanMode",),
    "skill": ("Skill",),
    "agent": ("Task", "Agent"),
}
# Claude Code's → ours.
TOOL_ALIASES = {alias: ours for ours, aliases in CLAUDE_NAMES.items() for alias in aliases}


def names_of(tool: str) -> tuple[str, ...]:
    """Every name `tool` (ours) goes by: ours first, then Claude Code's."""
    return (tool, *CLAUDE_NAMES.get(tool, ()))


def claude_name(tool: str) -> str:
    """The name Claude Code gives the tool (a hook script compares `tool_name` with it), or ours."""
    return CLAUDE_NAMES.get(tool, (tool,))[0]


def our_name(name: str) -> str:
    """Our tool for a name in either spelling (an unknown name is returned as it is)."""
    return TOOL_ALIASES.get(name, name)
