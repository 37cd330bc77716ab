"""A Python that has already imported mini-claude, forking a fresh `mini-claude` process per test.

Starting `python -m mini_claude` costs one to three seconds on a loaded two-CPU machine, nearly all
of it importing the SDK, and the suite starts the program hundreds of times. This server imports
everything once; for each request it forks a child that becomes the program as a fresh start would:
its own session (and controlling terminal, for a pseudo-terminal), the test's stdin/stdout/stderr,
working directory, umask, environment and argv, new `sys.std*` objects, then `mini_claude.cli.main`,
and the exit a program can notice (`_exit_as_the_interpreter_would`). Only what an import leaves behind
is shared (and the SDK's TLS contexts, `share_tls_contexts`), so tests that depend on a fresh
interpreter (locale, `PYTHON*` variables, what is imported at start) start cold instead (see
`cli_harness`).

Run as `python -P warm_start.py SOCKET`; it listens once it has preloaded (clients retry until
then) and exits when its stdin closes. Protocol (SOCK_SEQPACKET): the client sends one JSON request
(with a file size limit for the child, or null) and three file descriptors (stdin, stdout,
stderr); the server answers {"pid": …}, then {"returncode": …} when the child ends (negative:
killed by that signal, as `subprocess` says). A client that hangs up kills its child.
Standard library and mini_claude only: this file must not import the tests.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import gc
import io
import json
import os
import pkgutil
import select
import signal
import socket
import sys
import termios
import threading
import time
from collections.abc import Callable, Mapping
from importlib import import_module

SHARED_SERVER = "MINI_CLAUDE_TEST_WARM_SERVER"  # {"socket", "settings"} of the controller's
READY_SECONDS = 60
POLL_SECONDS = 1.0  # a child's end wakes the server at once (SIGCHLD); this is only a backstop
MAX_REQUEST = 1 << 20
CERTIFICATE_SETTINGS = ("SSL_CERT_FILE", "SSL_CERT_DIR")
_REPLACED: list[object] = []  # the server's own sys.std* objects: collected, they would close 0-2


def interpreter_settings(env: Mapping[str, str]) -> dict[str, str]:
    """What a Python reads once at start (stdio encoding, buffering, paths, modes): a child forked
    from the server has the server's, so only a request with the same ones can be served warm."""
    return {k: v for k, v in env.items() if k.startswith(("PYTHON", "LC_", "LANG"))}


def connect(path: str, server_alive: Callable[[], bool]) -> socket.socket | None:
    """A connection to the server listening at `path`, waiting while it preloads (it listens once
    that is done); None if it ends first or takes over READY_SECONDS."""
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline and server_alive():
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            conn.connect(path)
            return conn
        except (FileNotFoundError, ConnectionRefusedError):
            conn.close()
            time.sleep(0.01)
    return None


def current_umask() -> int:
    """This process's umask, which a program it starts inherits (read from /proc: setting it to
    read it back would, for a moment, give another thread's new files the wrong mode)."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1], 8) for line in status if line.startswith("Umask:"))


def preload() -> None:
    import anthropic  # (what makes a cold start slow)

    import mini_claude

    for module in pkgutil.walk_packages(mini_claude.__path__, "mini_claude."):
        if module.name != "mini_claude.__main__":  # importing it would run the program
            import_module(module.name)
    # What the program imports on first use, each child again otherwise: the markdown renderer,
    # and what the SDK's client imports when it is made (its HTTP transport), a third of a child's CPU.
    for module in ("rich.markdown", "rich.syntax"):
        import_module(module)
    anthropic.Anthropic(api_key="preload", base_url="http://127.0.0.1:9").close()
    share_tls_contexts()
    warm_first_use_caches()


# Imported on first use by the program or the SDK (a third of a child's CPU went to these and to
# the caches below): the folders' library, the Unicode-property regex engine, the SDK's tracing;
# the MCP client and its schemas' validator (half a second a child that configures a server; its
# 30 MB make every fork about 2 ms dearer, twenty times less than that over the suite).
FIRST_USE_MODULES = (
    "platformdirs", "regex", "opentelemetry.propagate", "encodings.idna", "ctypes", "tty",
    "rich.live", "rich.ansi", "rich.spinner", "prompt_toolkit.input.vt100",
    "mcp", "mcp.client.stdio", "mcp.client.sse", "mcp.client.streamable_http", "jsonschema",
)  # fmt: skip
SSE_EVENTS = (
    ("message_start", {"type": "message_start", "message": {
        "id": "msg_preload", "type": "message", "role": "assistant", "model": "preload", "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}}),
    ("content_block_start", {"type": "content_block_start", "index": 0,
        "content_block": {"type": "text", "text": ""}}),
    ("ping", {"type": "ping"}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0,
        "delta": {"type": "text_delta", "text": "hi"}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ("content_block_start", {"type": "content_block_start", "index": 1,
        "content_block": {"type": "tool_use", "id": "toolu_preload", "name": "t", "input": {}}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 1,
        "delta": {"type": "input_json_delta", "partial_json": "{}"}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 1}),
    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"output_tokens": 2}}),
    ("message_stop", {"type": "message_stop"}),
)  # fmt: skip


def warm_first_use_caches() -> None:
    """What each child would otherwise build again on first use and then keep for its life."""
    for module in FIRST_USE_MODULES:
        with contextlib.suppress(ImportError):
            import_module(module)
    from mini_claude.core import prompts, untrusted
    from mini_claude.safety.shell import parse

    for path in prompts.prompts_dir().iterdir():
        if path.is_file():
            (prompts.load_toml if path.suffix == ".toml" else prompts.load)(path.name)
    untrusted.visible_text("preload")  # compiles the terminal filter's patterns
    parse.parse_line("true", "/")  # loads the bash grammar
    _warm_sdk_validators()
    _warm_prompt_toolkit()


def _warm_prompt_toolkit() -> None:
    """A prompt answered once: prompt-toolkit memoizes what its key bindings' filters combine to
    and how keys parse, a tenth of each REPL child's CPU otherwise (none of it tied to a terminal)."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    with create_pipe_input() as keys:
        keys.send_text("preload\r")
        PromptSession(input=keys, output=DummyOutput()).prompt("> ")


def _warm_sdk_validators() -> None:
    """The SDK builds a pydantic validator per response type the first time it parses one (30 ms
    a child): parse a canned stream, a message and an error here, through a transport that never
    leaves the process."""
    import anthropic
    import httpx2

    def answer(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        if body["max_tokens"] == 2:
            error = {"type": "invalid_request_error", "message": "preload"}
            return httpx2.Response(400, json={"type": "error", "error": error})
        if body.get("stream"):
            sse = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in SSE_EVENTS)
            return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=sse.encode())
        message = SSE_EVENTS[0][1]["message"]
        return httpx2.Response(200, json={**message, "content": [{"type": "text", "text": "hi"}]})

    http = httpx2.Client(transport=httpx2.MockTransport(answer))
    client = anthropic.Anthropic(api_key="preload", http_client=http, max_retries=0)
    request = {"model": "preload", "messages": [{"role": "user", "content": "hi"}]}
    with client.messages.create(max_tokens=1, stream=True, **request) as stream:
        for _ in stream:
            pass
    client.messages.create(max_tokens=1, **request)
    with contextlib.suppress(anthropic.BadRequestError):
        client.messages.create(max_tokens=2, **request)
    client.close()


def share_tls_contexts() -> None:
    """Each SDK client loads the system's CA certificates into a new TLS context (40 ms a child,
    20 ms an in-process test). The tests speak plain HTTP to 127.0.0.1, so every client takes one
    made here, one per place the certificates are looked for (SSL_CERT_FILE/DIR, as the SDK reads
    them). Also called by each pytest process (conftest)."""
    try:
        import httpcore2  # the SDK's HTTP transport (through httpx2)
    except ImportError:  # another SDK version, another transport: each child makes its own
        return
    make = getattr(httpcore2, "default_ssl_context", None)
    if make is None:
        return
    made: dict[tuple, object] = {}

    def default_ssl_context(*, _trust_env: bool = True):
        key = (_trust_env, *(os.environ.get(name) for name in CERTIFICATE_SETTINGS)) if _trust_env else ()
        if key not in made:
            made[key] = make(_trust_env=_trust_env)
        return made[key]

    # Made now for the children's usual environments: this one's, and none of SSL_CERT_*.
    default_ssl_context()
    saved = {name: os.environ.pop(name) for name in CERTIFICATE_SETTINGS if name in os.environ}
    default_ssl_context()
    os.environ.update(saved)
    httpcore2.default_ssl_context = default_ssl_context


def serve(path: str) -> tuple[dict, list[int]]:
    """Answer requests until stdin closes (then exit); in a forked child, return its request."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    # A child's end writes to this pipe (SIGCHLD's wakeup fd), so select need not poll for it.
    child_ended, wake = os.pipe()
    for fd in (child_ended, wake):
        os.set_blocking(fd, False)
    signal.set_wakeup_fd(wake)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    # A Ctrl+C at the terminal reaches the server too (it is in pytest's process group); it ends
    # when pytest does (its stdin closes), killing what still runs, not before.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    children: dict[int, socket.socket] = {}  # pid -> the client waiting for it
    while True:
        waiting = [listener, sys.stdin, child_ended, *children.values()]
        readable, _, _ = select.select(waiting, [], [], POLL_SECONDS)
        if child_ended in readable:
            with contextlib.suppress(BlockingIOError):
                os.read(child_ended, 4096)
        if sys.stdin in readable and not os.read(sys.stdin.fileno(), 1):
            _kill_all(children)
            raise SystemExit(0)
        for pid, conn in list(children.items()):
            if conn in readable and not conn.recv(16):  # the test is gone: so goes its program
                _kill(pid)
        if listener in readable:
            conn, _ = listener.accept()
            message, fds, _, _ = socket.recv_fds(conn, MAX_REQUEST, 3)
            if not message:  # a client that connected and hung up: nothing to start
                conn.close()
                continue
            pid = os.fork()
            if pid == 0:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                for fd in (child_ended, wake):
                    os.close(fd)
                for other in (listener, conn, *children.values()):
                    other.close()
                return json.loads(message), fds
            for fd in fds:
                os.close(fd)
            conn.send(json.dumps({"pid": pid}).encode())
            children[pid] = conn
        _reap(children)


def _reap(children: dict[int, socket.socket]) -> None:
    while children:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is not None:
            with contextlib.suppress(OSError):
                conn.send(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode())
            conn.close()


def _kill(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except (ProcessLookupError, PermissionError):
            continue


def _kill_all(children: dict[int, socket.socket]) -> None:
    for pid in children:
        _kill(pid)


def take_stdio(fds: list[int]) -> None:
    """In a forked child: a session of its own, with the client's descriptors as stdin/out/err."""
    os.setsid()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in set(fds) - {0, 1, 2}:
        os.close(fd)


def become_the_program(request: dict, fds: list[int]) -> None:
    """In the forked child: everything a fresh `python -m mini_claude` would have, then run it."""
    take_stdio(fds)
    if request["tty"]:
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    os.chdir(request["cwd"])
    os.umask(request["umask"])  # the test's, as a child of its own process would have
    os.environ.clear()
    os.environ.update(request["env"])
    if request.get("file_size_limit") is not None:
        limit_file_size(request["file_size_limit"])
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.argv = [request["main"], *request["argv"]]
    _new_stdio(unbuffered=bool(os.environ.get("PYTHONUNBUFFERED")))

    from mini_claude.cli import main

    try:
        code = main(request["argv"])
    except SystemExit as leaving:
        code = leaving.code
    _exit_as_the_interpreter_would(code)


def limit_file_size(limit: int) -> None:
    """RLIMIT_FSIZE: a write past `limit` bytes fails with EFBIG (SIGXFSZ ignored, which would
    kill the process instead), as on a disk that fills up part-way through a write."""
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _exit_as_the_interpreter_would(code: object) -> None:
    """What a program can notice of Python's exit, in its order: non-daemon threads joined, atexit
    handlers run, sys.std* flushed. Then the process ends without tearing the inherited heap down,
    which in a fork touches (and copies) every page of it: a quarter of a child's CPU."""
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code & 0xFF
    else:  # SystemExit("message"): printed, status 1
        print(code, file=sys.stderr)
        status = 1
    threading._shutdown()  # type: ignore[attr-defined]  (what Py_FinalizeEx calls first)
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # a closed pipe: the interpreter's own exit says so (status 120)
        raise SystemExit(code) from None
    os._exit(status)


def _new_stdio(*, unbuffered: bool) -> None:
    """As the interpreter makes them at start, for the descriptors the child now has."""
    old = sys.stdin, sys.stdout, sys.stderr
    _REPLACED.extend(old)
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(
        io.BufferedReader(io.FileIO(0, "r", closefd=False)),
        encoding=old[0].encoding, errors=old[0].errors, line_buffering=os.isatty(0),
    )  # fmt: skip
    made = []
    for fd, previous in ((1, old[1]), (2, old[2])):
        raw = io.FileIO(fd, "w", closefd=False)
        binary = raw if unbuffered else io.BufferedWriter(raw)
        made.append(
            io.TextIOWrapper(
                binary,
                encoding=previous.encoding,
                errors=previous.errors,
                line_buffering=fd == 2 or os.isatty(fd),
                write_through=unbuffered,
            )
        )
    sys.stdout = sys.__stdout__ = made[0]
    sys.stderr = sys.__stderr__ = made[1]


def exit_if_abandoned_while(work: Callable[[], None]) -> None:
    """Run `work` (the preload) and end the process meanwhile if its launcher goes: nothing is
    written to stdin, so readable means closed. An import that hangs (a test's sitecustomize,
    say) would otherwise leave a server that never reaches `serve`, the only other place looking."""
    done_read, done_write = os.pipe()

    def watch() -> None:
        if sys.stdin in select.select([sys.stdin, done_read], [], [])[0]:
            os._exit(0)

    watcher = threading.Thread(target=watch, name="launcher-watch", daemon=True)
    watcher.start()
    try:
        work()
    finally:
        os.write(done_write, b"x")  # wakes the watch at once: serving starts without a delay
        watcher.join()  # no thread left when the children are forked
        os.close(done_read)
        os.close(done_write)


if __name__ == "__main__":
    exit_if_abandoned_while(preload)
    # What the imports made is never collected: without this, each child's collections (the last
    # one at exit most of all) touch every object and copy the whole heap, about a second each.
    gc.freeze()
    request, fds = serve(sys.argv[1])
    become_the_program(request, fds)
