"""Shared fixtures: every test runs with a private HOME and no Anthropic settings from the developer's
shell; tests that talk to "the API" get a local fake server instead of the network."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent_harness import Harness
from tests.cli_harness import Cli, program_env
from tests.fake_api import FakeAnthropic
from tests.mcp_kit import share_warm_servers, stop_warm_servers
from tests.warm_client import share_warm_starter, stop_warm_starter, warm_for
from tests.warm_start import interpreter_settings, share_tls_contexts

# Settings a developer's shell may carry that would leak into tests (MINI_CLAUDE_* are cleared too).
LEAKY_ENV_VARS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "ANTHROPIC_CONFIG_DIR",
    "ANTHROPIC_PROFILE",
    "MINI_CLAUDE_SIDE_MODEL",
    "NO_COLOR",
)


RAM_DISK = Path("/dev/shm")
RAM_DISK_MIN_FREE = 2 << 30  # bytes: three workers' scratch at once, with room to spare


def pytest_configure(config: pytest.Config) -> None:
    """What every test process shares: scratch folders on a RAM disk, the SDK's TLS contexts made
    once rather than by each test's client (`share_tls_contexts`), and under pytest-xdist one warm
    start server and one the MCP test servers fork from, which the controller launches for all its
    workers (`share_warm_starter`, `share_warm_servers`)."""
    share_tls_contexts()
    _scratch_on_the_ram_disk()
    settings = interpreter_settings(program_env())
    warm_for(settings)
    if config.getoption("numprocesses", None) and "PYTEST_XDIST_WORKER" not in os.environ:
        share_warm_starter(settings)
        share_warm_servers()


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection imported (the SDK's 3,000 modules, pydantic's schemas) lives as long as the
    process: out of the collector's sight, it is not walked again at every full collection."""
    gc.collect()
    gc.freeze()


def pytest_unconfigure(config: pytest.Config) -> None:
    """The warm servers go with the process that launched them (tests/warm_start.py)."""
    stop_warm_starter()
    stop_warm_servers()


def _scratch_on_the_ram_disk() -> None:
    """TMPDIR on the RAM disk when there is one and TMPDIR is not set: thousands of tests each
    make and remove a home, and on a disk mounted with `discard` that cost a third of the suite's
    time. The tests, and every program they start, see it."""
    if "TMPDIR" in os.environ or not RAM_DISK.is_dir():
        return
    room = os.statvfs(RAM_DISK)
    if room.f_bavail * room.f_frsize < RAM_DISK_MIN_FREE:  # a container's 64 MB /dev/shm, say
        return
    scratch = RAM_DISK / f"mini-claude-tests-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        scratch.mkdir(mode=0o700)
    # /dev/shm is shared by every user: the folder must be our own private one, not a look-alike.
    info = os.lstat(scratch)
    if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and info.st_mode & 0o077 == 0:
        os.environ["TMPDIR"] = str(scratch)
        tempfile.tempdir = None  # asked again of TMPDIR at the next use


@pytest.fixture(autouse=True, scope="session")
def ctrl_c_delivered() -> None:
    """A shell that starts pytest in the background makes it ignore SIGINT, and every program it
    starts inherits that: the Ctrl+C tests would wait for an interrupt that never comes."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point HOME and the XDG dirs into tmp_path, so nothing reads or writes the real home."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var, sub in [
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_STATE_HOME", ".local/state"),
        ("XDG_CACHE_HOME", ".cache"),
    ]:
        monkeypatch.setenv(var, str(home / sub))
    for var in [*LEAKY_ENV_VARS, *(name for name in os.environ if name.startswith("MINI_CLAUDE_"))]:
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def project_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project directory (outside HOME), made the current directory."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return project


@pytest.fixture
def fake_api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        yield fake


@pytest.fixture
def api_env(fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> FakeAnthropic:
    """Environment that makes mini-claude talk to the fake server."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("MINI_CLAUDE_MAX_RETRIES", "2")
    return fake_api


@pytest.fixture
def cli(api_env: FakeAnthropic, project_dir: Path) -> Cli:
    """The real program, started in the project and talking to the fake server."""
    return Cli(project_dir)


@pytest.fixture
def harness(api_env: FakeAnthropic, project_dir: Path) -> Harness:
    """A whole session (agent, tools, permissions, memory) against the fake server, in ask mode."""
    return Harness().start()


@pytest.fixture(params=[0o022, 0o002, 0], ids=["umask-022", "umask-002", "umask-000"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """The umask a private file must not depend on: the usual one, a group-writable one, none."""
    old = os.umask(request.param)
    yield request.param
    os.umask(old)
