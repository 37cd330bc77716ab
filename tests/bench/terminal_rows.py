"""Rows that run the real `mini-claude` program: in a pseudo-terminal (pexpect) or as a process."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pexpect

from tests.bench.stats import Row, Samples, ratio_at_most, seconds_at_most
from tests.cli_harness import PROMPT_PATTERN
from tests.fake_api import FakeAnthropic

BIN = Path(sys.executable).parent
MINI_CLAUDE = str(BIN / "mini-claude")
COLUMNS, ROWS = 100, 40
TIMEOUT = 30.0
HELP_SHOWN = r"Ctrl\+D"  # in /help's list of keys, printed nowhere else
FIRST_TOKEN = "READY"
MAIN_REPLY = f"## {FIRST_TOKEN}\n\nThe migration tests run against the real database.\n"
QUESTION = "how do we run the database migration tests before a release?"
TYPING_SETTLE = 0.05  # seconds between the typed message showing and Enter
CLIENT_READY = "model client ready"  # debug log lines that say start-up work has finished
MEMORY_READY = "memory start-up done"
MARKDOWN_READY = "markdown renderer loaded"
CURSOR_POSITION_REQUEST = "\x1b[6n"
CURSOR_POSITION_ANSWER = "\x1b[1;1R"
SLOW_SERVER_S = 5  # how long the slow MCP server of the time-to-interactive row takes to start


# Settings of this shell that would make the program behave unlike a user's (PYTHONDONTWRITEBYTECODE
# would recompile every changed module at each start).
IGNORED_ENV = ("NO_COLOR", "COLUMNS", "LINES", "PYTHONDONTWRITEBYTECODE", "PYTHONPATH")


def program_env(home: Path, fake: FakeAnthropic | None) -> dict[str, str]:
    """The user's environment minus their settings, with HOME and the XDG dirs under `home`."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ANTHROPIC_", "MINI_CLAUDE_", "PYTEST")) and key not in IGNORED_ENV
    }
    env.update(HOME=str(home), TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8")
    for name, sub in (("DATA", ".local/share"), ("CONFIG", ".config"), ("STATE", ".local/state")):
        env[f"XDG_{name}_HOME"] = str(home / sub)
    env["XDG_CACHE_HOME"] = str(home / ".cache")
    if fake is not None:
        env.update(ANTHROPIC_BASE_URL=fake.base_url, ANTHROPIC_API_KEY="bench-key")
    return env


_program_cpus: set[int] = set()


def split_cpus() -> str:
    """Keep the harness (fake server, pexpect) on one CPU and the measured programs on the others:
    taking turns on one CPU would add the harness's own work to the programs' times at random."""
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_setaffinity") else []
    if len(cpus) < 2:
        return "harness and programs share the CPU"
    os.sched_setaffinity(0, {cpus[0]})
    _program_cpus.update(cpus[1:])
    return f"harness on CPU {cpus[0]}, measured programs on CPU {','.join(map(str, cpus[1:]))}"


def _on_program_cpus() -> None:
    if _program_cpus:
        os.sched_setaffinity(0, _program_cpus)


@contextmanager
def spawned(program: str, args: list[str], env: dict[str, str], cwd: Path) -> Iterator[pexpect.spawn]:
    child = pexpect.spawn(
        program, args, cwd=str(cwd), env=env, encoding="utf-8", codec_errors="replace",
        dimensions=(ROWS, COLUMNS), timeout=TIMEOUT, preexec_fn=_on_program_cpus,
    )  # fmt: skip
    child.delaybeforesend = None  # pexpect waits 50 ms before each send by default
    try:
        yield child
    finally:
        child.terminate(force=True)
        child.close(force=True)


def expect_answering(child: pexpect.spawn, pattern: str) -> None:
    """Wait for `pattern`, answering cursor position requests at once, as a real terminal does
    (unanswered, prompt-toolkit waits up to a second for them when the prompt ends)."""
    while True:
        index = child.expect([re.escape(CURSOR_POSITION_REQUEST), pattern])
        # A request may sit inside the text that matched `pattern` (the prompt pattern skips codes).
        seen = (child.before or "") + (child.after if isinstance(child.after, str) else "")
        for _ in range(seen.count(CURSOR_POSITION_REQUEST)):
            child.send(CURSOR_POSITION_ANSWER)
        if index == 1:
            return


# -- time to interactive ------------------------------------------------------------------------


def time_to_help(env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    with spawned(MINI_CLAUDE, [], env, cwd) as child:
        child.send("/help\r")  # typed at once, before the prompt is even drawn
        expect_answering(child, HELP_SHOWN)
        return time.perf_counter() - started


def time_to_import_sdk(env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    with spawned(sys.executable, ["-c", "import anthropic"], env, cwd) as child:
        child.expect(pexpect.EOF)
        return time.perf_counter() - started


def time_to_interactive_row(home: Path, project: Path, fake: FakeAnthropic, runs: int) -> Row:
    env = program_env(home, fake)  # a server is configured, so the SDK preload really runs
    measured, baseline = Samples(), Samples()
    for _ in range(runs):
        measured.add(time_to_help(env, project))
        baseline.add(time_to_import_sdk(env, project))
    return Row("time to interactive", measured, baseline, *ratio_at_most(0.35))


def mcp_time_to_interactive_row(root: Path, project: Path, fake: FakeAnthropic, runs: int) -> Row:
    """The same start with an MCP server configured that takes SLOW_SERVER_S to start (its
    connection runs in the background), against the same start without it, run by run."""
    import json

    from tests.mcp_kit import server_command

    slow_home = root / "home-with-a-slow-mcp-server"
    (slow_home / ".mini-claude").mkdir(parents=True)
    slow = {**server_command("slow"), "env": {"MCP_TEST_START_DELAY": str(SLOW_SERVER_S)}}
    (slow_home / ".mini-claude" / "mcp.json").write_text(json.dumps({"mcpServers": {"slow": slow}}))
    plain_home = root / "home-without-mcp-servers"
    plain_home.mkdir()
    measured, baseline = Samples(), Samples()
    for _ in range(runs):
        measured.add(time_to_help(program_env(slow_home, fake), project))
        baseline.add(time_to_help(program_env(plain_home, fake), project))
    return Row("time to interactive, a slow MCP server", measured, baseline, *ratio_at_most(1.1))


# -- recall costs no wait -----------------------------------------------------------------------


def wait_for_log(log: Path, start: int, lines: tuple[str, ...]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        try:
            with log.open("rb") as handle:
                handle.seek(start)
                new = handle.read().decode("utf-8", "replace")
        except FileNotFoundError:
            new = ""
        if all(line in new for line in lines):
            return
        time.sleep(0.02)
    raise TimeoutError(f"no {lines} in {log} after {TIMEOUT:g} s; it says: {new[-2000:]!r}")


def log_size(log: Path) -> int:
    try:
        return log.stat().st_size
    except FileNotFoundError:
        return 0


def time_to_first_token(
    env: dict[str, str], cwd: Path, log: Path, before_exit: Callable[[], object] = lambda: None
) -> tuple[float, int]:
    """Submit → first token of the reply, once the SDK preload and memory start-up are done.
    Also returns the idle REPL's peak RSS in KiB."""
    start = log_size(log)
    with spawned(MINI_CLAUDE, [], env, cwd) as child:
        expect_answering(child, PROMPT_PATTERN)
        wait_for_log(log, start, (CLIENT_READY, MEMORY_READY, MARKDOWN_READY))
        peak_kib = peak_rss_kib(child.pid)
        child.send(QUESTION)  # typed as a person would, then sent: the clock starts at Enter
        expect_answering(child, re.escape(QUESTION[-20:]))
        time.sleep(TYPING_SETTLE)
        started = time.perf_counter()
        child.send("\r")
        expect_answering(child, FIRST_TOKEN)
        seconds = time.perf_counter() - started
        before_exit()
        return seconds, peak_kib


def peak_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


# -- `mini-claude memory list` ------------------------------------------------------------------


def time_process(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(
        [MINI_CLAUDE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT,
        check=True, preexec_fn=_on_program_cpus,
    )  # fmt: skip
    return time.perf_counter() - started, done.stdout


def memory_list_row(home: Path, project: Path, expected: int, runs: int) -> Row:
    env = program_env(home, None)
    measured, baseline = Samples(), Samples()
    for _ in range(runs):
        seconds, listing = time_process(["memory", "list"], env, project)
        if not listing.startswith(f"{expected} memories:"):
            raise RuntimeError(f"memory list did not list {expected} memories: {listing[:80]!r}")
        measured.add(seconds)
        baseline.add(time_process(["--version"], env, project)[0])
    return Row("`memory list` at scale", measured, baseline, *seconds_at_most(1.5))
