"""The arguments of `mini-claude memory …` and `mini-claude sessions …` (cli.py hands them here)."""

from __future__ import annotations

import argparse


def build_command_parser() -> argparse.ArgumentParser:
    """`memory` and `sessions`; without an action, each lists (as `/memory` does in the REPL)."""
    parser = argparse.ArgumentParser(prog="mini-claude", allow_abbrev=False)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    memory = commands.add_parser("memory", help="this project's memories (list when no action is given)")
    actions = memory.add_subparsers(dest="action", metavar="ACTION")
    actions.add_parser("list", help="list memories")
    for action, what in (("show", "print one memory"), ("edit", "open one memory in $VISUAL or $EDITOR")):
        actions.add_parser(action, help=what).add_argument("name", help="the memory's name or file name")
    remove = actions.add_parser("rm", help="delete one memory (asks first on a terminal)")
    remove.add_argument("name", help="the memory's name or file name")
    remove.add_argument(
        "-y", "--yes", action="store_true", help="delete without asking (needed without a terminal)"
    )
    actions.add_parser("path", help="print the memory directory")
    actions.add_parser("projects", help="every project with memories or sessions: memory count and path")
    tidy = actions.add_parser("tidy", help="review the memories with the model, then apply what you accept")
    tidy.add_argument("focus", nargs="*", help="what to pay attention to (e.g. deadlines)")
    tidy_mode = tidy.add_mutually_exclusive_group()
    tidy_mode.add_argument("--dry-run", action="store_true", help="print the proposal; change nothing")
    tidy_mode.add_argument("-y", "--yes", action="store_true", help="apply the whole proposal without asking")
    actions.add_parser("undo", help="undo the last change to the memories: a tidy, an rm, an update")
    sessions = commands.add_parser(
        "sessions", help="this project's saved sessions (list when no action is given)"
    )
    sessions_actions = sessions.add_subparsers(dest="action", metavar="ACTION")
    sessions_actions.add_parser("list", help="id, last used, message count, first message; newest first")
    return parser
