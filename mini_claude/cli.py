"""Command line: flags, then the REPL, print mode, or a memory or sessions command.

`mini-claude [options] [PROMPT]` and `mini-claude COMMAND ...` share one command line: a first
word that names a command (`memory`, `sessions`) is that command, any other words are the prompt.
After `--` every word is the prompt (`mini-claude -- memory` asks the model about "memory"), and
with `-p` so are they all (`mini-claude -p memory`)."""

from __future__ import annotations

import argparse
import re
import sys
from functools import partial

from mini_claude import __version__
from mini_claude.app.settings.flag_values import dollars, positive_int, thinking_budget, thinking_budget_given
from mini_claude.core.config import PERMISSION_MODE_ALIASES, PERMISSION_MODES, Settings
from mini_claude.core.env_values import ConfigError

COMMANDS = ("memory", "sessions", "mcp")
OUTPUT_FORMATS = ("text", "json", "stream-json")
PRINT_FLAGS = ("-p", "--print")
USAGE = """%(prog)s [options] [PROMPT]        start the REPL (PROMPT, if given, is the first message)
       %(prog)s [options] -p [PROMPT]     answer PROMPT and exit; piped stdin goes before it
       CMD | %(prog)s [options] [PROMPT]  the same: stdin that is not a terminal means print mode
       %(prog)s [options] -- PROMPT       a prompt that starts with - or is a command's name
       %(prog)s -c | -r [ID] [options]    continue a saved session (-r alone: choose one)
       %(prog)s memory [list | show NAME | edit NAME | rm [-y] NAME | path]
       %(prog)s memory promote | demote | share NAME
       %(prog)s memory search QUERY [--limit N] [--json]
       %(prog)s memory projects [adopt | remove [-y] FOLDER]
       %(prog)s memory tidy [FOCUS] [--dry-run | --yes] | memory undo
       %(prog)s sessions [list]
       %(prog)s mcp [list | get NAME | remove NAME | add [-t http|sse] [-s project] NAME -- CMD… | URL]"""
EPILOG = """Print mode exits 0 when the answer is complete, 1 on an API error, 2 on a usage error, 3 at the
--max-turns limit, 4 when the reply was cut at max_tokens, 5 when the model declined, 7 at the
--max-cost cap, 130 when interrupted; any command whose stdout is closed (| head) ends quietly
with 141. Environment:
ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL, ANTHROPIC_MODEL, MINI_CLAUDE_SIDE_MODEL.
Settings files: ~/.mini-claude/settings.json, .mini-claude/settings.json and Claude Code's .claude/
twins; instructions: CLAUDE.md and its kin. See docs/configuration.md."""


def build_parser() -> argparse.ArgumentParser:
    """The options and the prompt. No abbreviations: finding the first word (`first_word_index`)
    must know exactly which options take a value."""
    parser = argparse.ArgumentParser(
        prog="mini-claude",
        usage=USAGE,
        description="A terminal coding agent with a cross-session memory.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument("-v", "--version", action="version", version=f"mini-claude {__version__}")
    parser.add_argument(
        *PRINT_FLAGS,
        dest="print_mode",
        action="store_true",
        help="print mode: answer the prompt (after piped stdin, if any) and exit; the answer goes to stdout",
    )
    parser.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        help="print mode's stdout: the answer as text (default), one JSON object, or JSON lines as it runs",
    )
    parser.add_argument(
        "--verbose", action="store_true",
        help="taken for Claude Code's scripts, which pass it with stream-json (the output is the same)",
    )  # fmt: skip
    parser.add_argument(
        "--include-partial-messages", action="store_true",
        help="stream-json: also the reply's text as it streams (stream_event lines)",
    )  # fmt: skip
    resume = parser.add_mutually_exclusive_group()
    resume.add_argument(
        "-c", "--continue", dest="latest", action="store_true", help="continue the last session"
    )
    resume.add_argument(
        "-r", "--resume", nargs="?", const="", metavar="ID",
        help="resume the session with this id (or a unique start of it); without an id, choose from a list",
    )  # fmt: skip
    parser.add_argument(
        "--fork-session",
        action="store_true",
        help="with -c or -r: go on in a new session, the old one left as it was",
    )
    parser.add_argument(
        "--model",
        help="model to use: a name, or opus, sonnet, haiku (default: $ANTHROPIC_MODEL, else Sonnet)",
    )
    parser.add_argument(
        "--max-turns", type=positive_int, help="model calls allowed per message (default: 50)"
    )
    parser.add_argument(
        "--permission-mode",
        choices=(*PERMISSION_MODES, *PERMISSION_MODE_ALIASES),
        metavar="MODE",
        help="ask (default), accept-edits, plan (read-only: it plans, you approve) or bypass; Claude "
        "Code's default, acceptEdits and bypassPermissions work too",
    )
    for flag, dest, what in (
        ("--allowedTools", "allowed_tools", "allow without asking"),
        ("--disallowedTools", "disallowed_tools", "refuse"),
    ):
        dashed = "--" + re.sub(r"([A-Z])", r"-\1", flag[2:]).lower()
        parser.add_argument(
            flag, dashed, dest=dest, action="append", default=[], metavar="RULES",
            help=f"permission rules to {what}, in Claude Code's syntax (\"Bash(npm test:*)\", Read, "
            "\"Edit(src/**)\"): comma- or space-separated, repeatable",
        )  # fmt: skip
    parser.add_argument(
        "--dangerously-skip-permissions",
        action="store_true",
        help="the same as --permission-mode bypass (Claude Code's name): nothing asks first",
    )
    parser.add_argument(
        "--thinking", nargs="?", type=thinking_budget, metavar="BUDGET",
        help="ask the model to think before it answers, up to BUDGET tokens (default 8000, at least 1024; "
        "off: not asked); /think switches it in the REPL",
    )  # fmt: skip
    parser.add_argument(
        "--max-cost", type=dollars, metavar="USD",
        help="a spend cap: no model call that could take this run past USD dollars (at list prices)",
    )  # fmt: skip
    parser.add_argument(
        "--plain", action="store_true", help="plain text output: no colour, no live rendering"
    )
    parser.add_argument(
        "--settings", metavar="FILE", help="a settings file (or a JSON object) over the settings files"
    )
    parser.add_argument(
        "--add-dir", action="append", default=[], metavar="DIR",
        help="a further folder the file tools treat as inside the project (repeat for more)",
    )  # fmt: skip
    parser.add_argument(
        "--append-system-prompt", metavar="TEXT", help="text added at the end of the system prompt"
    )
    parser.add_argument(
        "--system-prompt", metavar="TEXT",
        help="print mode: TEXT instead of mini-claude's own system prompt (instructions and memory stay)",
    )  # fmt: skip
    parser.add_argument(
        "--trust-folder", action="store_true",
        help="let this folder's project settings do more than instruct, without asking (this run only)",
    )  # fmt: skip
    parser.add_argument("prompt", nargs="*", metavar="PROMPT", help="the message (its words are joined)")
    return parser


def first_word_index(parser: argparse.ArgumentParser, argv: list[str]) -> int | None:
    """Where the first word that is neither an option nor an option's value stands; None when
    there is none before `--`."""
    takes_value = {flag for action in parser._actions if action.nargs != 0 for flag in action.option_strings}
    index = 0
    while index < len(argv):
        token = argv[index]
        if token == "--":
            return None
        if token.startswith("-") and token != "-":
            index += 2 if token in takes_value else 1
            continue
        return index
    return None


def main(argv: list[str] | None = None) -> int:
    from mini_claude.ui.print.closed_stdout import stdout_closed_quietly

    return stdout_closed_quietly(partial(_main, sys.argv[1:] if argv is None else list(argv)))


def _main(argv: list[str]) -> int:
    argv = thinking_budget_given(argv)
    parser = build_parser()
    index = first_word_index(parser, argv)
    if index is not None and argv[index] in COMMANDS and not set(argv[:index]) & set(PRINT_FLAGS):
        from mini_claude.ui.subcommands.parser import build_command_parser

        options, command = parser.parse_args(argv[:index]), build_command_parser().parse_args(argv[index:])
        return _run_command(parser, options, command)
    # After `--` everything is the prompt; argparse's intermixed parsing gets `--` wrong (3.11).
    at = argv.index("--") if "--" in argv else len(argv)
    options = parser.parse_intermixed_args(argv[:at])
    words = [*options.prompt, *argv[at + 1 :]]
    from mini_claude.core.interrupts import Terminated

    try:
        return _run_conversation(parser, options, " ".join(words) if words else None)
    except Terminated as terminated:  # SIGTERM or SIGHUP during a turn: its reply is saved
        return terminated.exit_status


def _permission_mode(parser: argparse.ArgumentParser, options: argparse.Namespace) -> str | None:
    mode: str | None = options.permission_mode
    if not options.dangerously_skip_permissions:
        return mode
    if mode is not None and PERMISSION_MODE_ALIASES.get(mode, mode) != "bypass":
        parser.error(
            f"--dangerously-skip-permissions means bypass; it does not go with --permission-mode {mode}"
        )
    return "bypass"


def _settings(parser: argparse.ArgumentParser, options: argparse.Namespace, *, interactive: bool) -> Settings:
    """Settings from the files, the environment and the flags; in the REPL (`interactive`), a
    folder whose files would do more than instruct is asked about first."""
    from mini_claude.app.settings.configure import Flags, configure

    flags = Flags(
        model=options.model, max_turns=options.max_turns, permission_mode=_permission_mode(parser, options),
        plain=options.plain, settings=options.settings, add_dirs=tuple(options.add_dir),
        append_system_prompt=options.append_system_prompt, system_prompt=options.system_prompt,
        trust_folder=options.trust_folder, allowed_tools=tuple(options.allowed_tools),
        disallowed_tools=tuple(options.disallowed_tools), thinking=options.thinking,
        max_cost=options.max_cost,
    )  # fmt: skip
    ask = None
    if interactive:
        from mini_claude.ui.questions.trust_question import ask_trust

        ask = partial(ask_trust, plain=options.plain)
    try:
        settings = configure(flags, ask)
    except ConfigError as error:
        # One line: the usage would bury a setting's fix; it quotes values from the environment.
        parser.exit(2, f"{parser.prog}: error: {_visible(str(error))}\n")
    from mini_claude.core.debug_log import setup_logging

    warning = setup_logging()
    if warning is not None:
        print(f"mini-claude: {warning}", file=sys.stderr)
    return settings


def _visible(text: str) -> str:
    from mini_claude.core.untrusted import visible_text  # not imported for --help and --version

    return visible_text(text)


def _run_command(
    parser: argparse.ArgumentParser, options: argparse.Namespace, command: argparse.Namespace
) -> int:
    if options.latest or options.resume is not None:
        parser.error(f"-c and -r continue a conversation; they do not go with `{command.command}`")
    settings = _settings(parser, options, interactive=False)
    for note in settings.notes:  # no session tells them here
        print(_visible(note), file=sys.stderr)
    if command.command == "memory" and command.action == "projects" and command.deal and not command.folder:
        parser.error(f"memory projects {command.deal} needs the project's folder (as listed) or path")
    from mini_claude.ui.subcommands.parser import run_command

    return run_command(settings, command)


def _run_conversation(
    parser: argparse.ArgumentParser, options: argparse.Namespace, prompt: str | None
) -> int:
    from mini_claude.app.resume import ResumeRequest

    print_mode = options.print_mode or not sys.stdin.isatty()
    if options.output_format and not print_mode:
        parser.error("--output-format is for print mode: add -p (or pipe the input)")
    if options.include_partial_messages and options.output_format != "stream-json":
        parser.error("--include-partial-messages goes with --output-format stream-json")
    if options.fork_session and not (options.latest or options.resume is not None):
        parser.error("--fork-session goes with -c or -r: it continues a saved session in a new one")
    if options.system_prompt is not None and not print_mode:
        parser.error(
            "--system-prompt is for print mode (-p); in the REPL, add to ours with --append-system-prompt"
        )
    settings = _settings(parser, options, interactive=not print_mode)
    resume = ResumeRequest(latest=options.latest, query=options.resume, fork=options.fork_session)
    if print_mode:
        from mini_claude.ui.print.print_mode import run_print_mode

        return run_print_mode(
            settings, prompt, resume, output_format=options.output_format or "text",
            partial_messages=options.include_partial_messages,
        )  # fmt: skip
    from mini_claude.ui.repl.repl import run_repl

    return run_repl(settings, resume, first_message=prompt)
