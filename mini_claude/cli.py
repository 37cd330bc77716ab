"""Command line: flags, then the REPL, print mode, or a memory command."""

from __future__ import annotations

import argparse
import sys

from mini_claude import __version__
from mini_claude.config import PERMISSION_MODES, ConfigError, load_settings


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mini-claude",
        # Written out: argparse would show the optional `memory` command as a required COMMAND.
        usage="%(prog)s [options]              start the REPL"
        "\n       %(prog)s [options] -p PROMPT    answer PROMPT (or stdin) and exit"
        "\n       %(prog)s -c | -r [ID] [options] continue a saved session (-r alone: choose one)"
        "\n       %(prog)s memory {list,show NAME,path}"
        "\n       %(prog)s sessions list",
        description="A terminal coding agent with a cross-session memory.",
        epilog="Environment: ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL, ANTHROPIC_MODEL, "
        "MINI_CLAUDE_SIDE_MODEL. See README.md.",
    )
    parser.add_argument("--version", action="version", version=f"mini-claude {__version__}")
    parser.add_argument(
        "-p",
        "--print",
        dest="prompt",
        nargs="?",
        const="",
        metavar="PROMPT",
        help="answer PROMPT (or the prompt piped on stdin) and exit; the answer goes to stdout",
    )
    resume = parser.add_mutually_exclusive_group()
    resume.add_argument(
        "-c", "--continue", dest="latest", action="store_true", help="continue the last session"
    )
    resume.add_argument(
        "-r", "--resume", nargs="?", const="", metavar="ID",
        help="resume the session with this id (or a unique start of it); without an id, choose from a list",
    )  # fmt: skip
    parser.add_argument("--model", help="model to use (default: $ANTHROPIC_MODEL, else a current Sonnet)")
    parser.add_argument(
        "--max-turns", type=_positive_int, help="model calls allowed per message (default: 50)"
    )
    parser.add_argument(
        "--permission-mode", choices=PERMISSION_MODES, help="ask (default), accept-edits, or bypass"
    )
    parser.add_argument(
        "--plain", action="store_true", help="plain text output: no colour, no live rendering"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    memory = commands.add_parser("memory", help="list, show or locate this project's memories")
    memory_commands = memory.add_subparsers(dest="memory_command", metavar="ACTION", required=True)
    memory_commands.add_parser("list", help="list memories")
    show = memory_commands.add_parser("show", help="print one memory")
    show.add_argument("name", help="the memory's name or file name")
    memory_commands.add_parser("path", help="print the memory directory")
    sessions = commands.add_parser("sessions", help="list this project's saved sessions")
    sessions_commands = sessions.add_subparsers(dest="sessions_command", metavar="ACTION", required=True)
    sessions_commands.add_parser("list", help="id, last used, message count, first message; newest first")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = load_settings(
            model=args.model, max_turns=args.max_turns, permission_mode=args.permission_mode, plain=args.plain
        )
    except ConfigError as error:
        from mini_claude.untrusted import visible_text

        parser.error(visible_text(str(error)))  # it quotes values from the environment

    if (args.latest or args.resume is not None) and args.command:
        parser.error(f"-c and -r continue a conversation; they do not go with `{args.command}`")

    from mini_claude.logging_setup import setup_logging

    setup_logging()
    if args.command == "memory":
        from mini_claude.ui.memory_cli import run_memory_command

        return run_memory_command(settings, args.memory_command, getattr(args, "name", None))
    if args.command == "sessions":
        from mini_claude.ui.sessions_cli import run_sessions_command

        return run_sessions_command(settings, args.sessions_command)
    from mini_claude.resume import ResumeRequest

    resume = ResumeRequest(latest=args.latest, query=args.resume)
    if args.prompt is not None or not sys.stdin.isatty():
        from mini_claude.ui.print_mode import run_print_mode

        return run_print_mode(settings, args.prompt or None, resume)

    from mini_claude.ui.repl import run_repl

    return run_repl(settings, resume)
