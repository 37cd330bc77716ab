"""The shell subcommands' arguments: `mini-claude memory ...`, `mini-claude sessions ...` and
`mini-claude mcp ...` (cli.py parses the options before them, then hands the rest here), and which
command they run."""

from __future__ import annotations

import argparse

from mini_claude.core.config import Settings
from mini_claude.tools.mcp.config import SCOPES, TRANSPORTS


def build_command_parser() -> argparse.ArgumentParser:
    """`memory`, `sessions` and `mcp`; without an action, each lists (as `/memory` does in the REPL)."""
    parser = argparse.ArgumentParser(prog="mini-claude", allow_abbrev=False)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    memory = commands.add_parser("memory", help="this project's memories (list when no action is given)")
    actions = memory.add_subparsers(dest="action", metavar="ACTION")
    actions.add_parser("list", help="list memories")
    for action, what in (
        ("show", "print one memory"),
        ("edit", "open one memory in $VISUAL or $EDITOR"),
        ("rm", "delete one memory (asks first on a terminal)"),
        ("promote", "move one of this project's memories to yours, in every project"),
        ("demote", "move one of yours, or of the team's, to this project's"),
        ("share", "move a memory to the team's folder in the repository (to be committed)"),
    ):
        actions.add_parser(action, help=what).add_argument("name", help="the memory's name or file name")
    actions.choices["rm"].add_argument(
        "-y", "--yes", action="store_true", help="delete without asking (needed without a terminal)"
    )
    search = actions.add_parser("search", help="memories matching QUERY, best first, as recall ranks them")
    search.add_argument("query", nargs="*", help="the words to search for")
    # Checked by the command, so that a bad value is one line, as every memory command's errors are.
    search.add_argument("--limit", metavar="N", help="show at most N memories (default: 10)")
    search.add_argument("--json", action="store_true", help="print a JSON list: file, name, scope, score, …")
    actions.add_parser("path", help="print the memory directory")
    projects = actions.add_parser(
        "projects", help="every project with memories or sessions: memory count and path"
    )
    projects.add_argument(
        "deal",
        nargs="?",
        choices=("adopt", "remove"),
        metavar="adopt|remove",
        help="adopt: the memories are the repository's now at their path; remove: delete them",
    )
    projects.add_argument("folder", nargs="?", help="the project's folder (as listed) or path")
    projects.add_argument("-y", "--yes", action="store_true", help="remove without asking")
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
    _add_mcp_parser(commands)
    return parser


def run_command(settings: Settings, command: argparse.Namespace) -> int:
    """Run the command `build_command_parser` parsed; its exit status."""
    if command.command == "memory" and command.action == "tidy":
        from mini_claude.ui.subcommands.tidy import run_tidy_command

        return run_tidy_command(settings, " ".join(command.focus), dry_run=command.dry_run, yes=command.yes)
    if command.command == "memory" and command.action == "search":
        from mini_claude.ui.subcommands.memory import run_search_command

        return run_search_command(settings, " ".join(command.query), command.limit, as_json=command.json)
    if command.command == "memory" and command.action == "projects":
        from mini_claude.ui.subcommands.projects import run_projects_command

        return run_projects_command(settings, command.deal, command.folder, yes=command.yes)
    if command.command == "memory":
        from mini_claude.ui.subcommands.memory import run_memory_command

        action, name = command.action or "list", getattr(command, "name", None)
        return run_memory_command(settings, action, name, yes=getattr(command, "yes", False))
    if command.command == "mcp":
        from mini_claude.ui.subcommands.mcp import run_mcp_command

        return run_mcp_command(settings, command)
    from mini_claude.ui.subcommands.sessions import run_sessions_command

    return run_sessions_command(settings)


def _add_mcp_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = commands.add_parser(
        "mcp", help="MCP servers: add, list, get, remove (list when no action is given)"
    )
    actions = mcp.add_subparsers(dest="action", metavar="ACTION")
    add = actions.add_parser(
        "add", help="add a server: NAME -- COMMAND [ARGS…], or --transport http|sse NAME URL",
        usage="mini-claude mcp add [-t stdio|http|sse] [-s user|project] [-e KEY=VALUE] "
        "[-H 'Name: value'] NAME (-- COMMAND [ARGS…] | URL)",
    )  # fmt: skip
    add.add_argument("-t", "--transport", choices=TRANSPORTS, default="stdio", help="default: stdio")
    add.add_argument("-s", "--scope", choices=SCOPES, default="user", help="user (default): every project; "
                     "project: this project's .mcp.json, shared through the repository")  # fmt: skip
    add.add_argument(
        "-e", "--env", action="append", default=[], metavar="KEY=VALUE", help="stdio: a variable"
    )
    add.add_argument("-H", "--header", action="append", default=[], metavar="'NAME: VALUE'", help="http, sse")
    add.add_argument("name")
    add.add_argument("target", nargs="*", metavar="COMMAND_OR_URL")
    actions.add_parser("list", help="every server, with its state (each is connected to)")
    actions.add_parser("get", help="one server's configuration and state").add_argument("name")
    remove = actions.add_parser("remove", help="remove a server (from the scope that has it)")
    remove.add_argument("name")
    remove.add_argument("-s", "--scope", choices=SCOPES, help="where, when both have it")
