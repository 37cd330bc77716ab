"""Settings from flags and environment, and where mini-claude keeps its files."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mini_claude.core.config_sources import HookSpec, PermissionRule, SettingsFileReport
from mini_claude.core.env_values import (
    ConfigError,
    MemoryMode,
    env_base_url,
    env_number,
    env_switch,
    memory_mode,
    resolve_model,
)
from mini_claude.core.mcp_options import McpOptions, mcp_options

APP_NAME = "mini-claude"
DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_MAX_TURNS = 50
DEFAULT_MAX_TOOL_CALLS = 64  # run of one reply's calls; the rest are answered unrun
DEFAULT_MAX_TOKENS = 16_000
DEFAULT_API_TIMEOUT = 120.0  # seconds of silence on a stream before we give up
DEFAULT_MAX_RETRIES = 2
DEFAULT_SIDE_QUERY_TIMEOUT = 20.0
PERMISSION_MODES = ("ask", "accept-edits", "plan", "bypass")
# Claude Code's names for the same modes: `--permission-mode acceptEdits` works as it does there.
PERMISSION_MODE_ALIASES = {"default": "ask", "acceptEdits": "accept-edits", "bypassPermissions": "bypass"}
ANTHROPIC_API_URL = "https://api.anthropic.com"  # the real API: where an unset or blank base URL goes
PROJECT_HASH_CHARS = 16
GIT_MARKER = ".git"  # a folder in a plain checkout, a file in a linked worktree or submodule
MEMORY_FOLDER = "memory"
TEAM_MEMORY_FOLDER = Path(".mini-claude") / MEMORY_FOLDER  # in the repository, beside its code
SESSIONS_FOLDER = "sessions"
DEFAULT_CONTEXT_WINDOW = 200_000  # tokens a request may hold (the model's context window)
# The system prompt and tool definitions (without CLAUDE.md or memories) take about this many tokens
# (17.0 KB at 4 bytes a token, web_fetch and agent included; tests/test_context_window.py measures them
# against it). Requests must hold them, a conversation, and after a compaction a summary and the
# latest turns, below the 80% that starts the next: a window under about twice their size cannot work.
FIXED_PROMPT_TOKENS = 4_300
MIN_CONTEXT_WINDOW = 8_600
DEFAULT_SESSION_RETENTION_DAYS = 30  # saved transcripts older than this are removed; 0 keeps them all
# A value from the settings files and where it came from (app/settings reads them).
Sourced = tuple[object, str]
DEFAULT_ORIGIN = "default"


def app_home() -> Path:
    """`~/.mini-claude`: per-project state, including memories (honours HOME)."""
    return Path.home() / ".mini-claude"


def git_work_tree_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` holding a `.git` folder, or a `.git` file as a linked
    worktree or submodule has; None outside a git work tree or when a folder on the way cannot be
    read. Found by looking rather than by running git: this is on every start-up path."""
    for folder in (start, *start.parents):
        try:
            marker = os.stat(folder / GIT_MARKER)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            # Unsure whether a work tree starts here: guessing a folder further up could merge
            # this project's memories with an unrelated one's.
            return None
        if stat.S_ISDIR(marker.st_mode) or stat.S_ISREG(marker.st_mode):
            return folder
    return None


def memory_project_root(cwd: str | os.PathLike[str] | None = None) -> Path:
    """The folder whose memories a session in `cwd` shares: the root of the enclosing git work
    tree, so that every subfolder of a repository sees the same memories; else `cwd` itself.
    Symlinks are resolved first, so two routes to one folder share one memory."""
    start = Path(os.path.realpath(os.getcwd() if cwd is None else cwd))  # never raises, unlike resolve()
    return git_work_tree_root(start) or start


def project_state_dir(cwd: str | os.PathLike[str] | None = None) -> Path:
    """`~/.mini-claude/projects/<hash of memory_project_root(cwd)>`: everything kept for one
    project (memories, session transcripts); not created here."""
    return projects_dir() / project_folder_name(str(memory_project_root(cwd)))


def projects_dir() -> Path:
    """`~/.mini-claude/projects`: one folder per project (see project_state_dir)."""
    return app_home() / "projects"


def project_folder_name(root: str) -> str:
    """The name of the folder kept for the project rooted at `root` (a hash of the path)."""
    digest = hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()
    return digest[:PROJECT_HASH_CHARS]


def user_memory_dir() -> Path:
    """`~/.mini-claude/memory`: the user's own memories, in every project."""
    return app_home() / MEMORY_FOLDER


def team_memory_dir(cwd: str | os.PathLike[str] | None = None) -> Path:
    """`<project root>/.mini-claude/memory`: memories that travel with the repository."""
    return memory_project_root(cwd) / TEAM_MEMORY_FOLDER


def project_memory_dir(cwd: str | os.PathLike[str] | None = None) -> Path:
    """`<project_state_dir(cwd)>/memory`. Every front end reaches it through `Settings.memory_dir`,
    so they all agree."""
    return project_state_dir(cwd) / MEMORY_FOLDER


def project_sessions_dir(cwd: str | os.PathLike[str] | None = None) -> Path:
    """`<project_state_dir(cwd)>/sessions`: one transcript per conversation (`Settings.sessions_dir`)."""
    return project_state_dir(cwd) / SESSIONS_FOLDER


def _platform_dir(kind: str) -> Path:
    import platformdirs  # imported here: only needed once the REPL or logging starts

    return Path(getattr(platformdirs, f"user_{kind}_dir")(APP_NAME, appauthor=False))


def history_file() -> Path:
    return _platform_dir("data") / "history"


def config_dir() -> Path:
    return _platform_dir("config")


def log_file() -> Path:
    return _platform_dir("log") / "debug.log"


def protected_dirs() -> list[Path]:
    """The agent's own configuration and state, wherever XDG_* puts them: reading, searching and
    writing here always ask (memories excepted). The log folder holds what was said and run."""
    return [app_home(), config_dir(), _platform_dir("data"), _platform_dir("state"), _platform_dir("log")]


@dataclass
class Settings:
    model: str = DEFAULT_MODEL
    side_model: str = DEFAULT_MODEL
    api_key: str | None = None
    auth_token: str | None = None
    base_url: str | None = None
    max_turns: int = DEFAULT_MAX_TURNS
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS  # per reply: maxToolCallsPerReply
    max_tokens: int = DEFAULT_MAX_TOKENS
    api_timeout: float = DEFAULT_API_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES
    side_query_timeout: float = DEFAULT_SIDE_QUERY_TIMEOUT
    permission_mode: str = "ask"
    allowed_tools: tuple[str, ...] = ()  # --allowedTools rules, in Claude Code's syntax
    disallowed_tools: tuple[str, ...] = ()  # --disallowedTools
    # Read-only shell commands run unasked: MINI_CLAUDE_READ_ONLY_COMMANDS over permissions.readOnlyCommands.
    read_only_commands: bool = True
    plain: bool = False
    early_recall: bool = True  # recall on the draft while the user types (MINI_CLAUDE_EARLY_RECALL)
    # Automatic memory (the index, recall, the model's saves): MINI_CLAUDE_MEMORY over the
    # settings files' autoMemoryEnabled (false is "off").
    memory_mode: MemoryMode = "on"
    # The working directory bounds what tools may touch freely and holds CLAUDE.md; memories are
    # shared more widely, by the whole git work tree around it (see memory_project_root).
    project_dir: Path = field(default_factory=lambda: Path(os.getcwd()))
    memory_dir: Path = field(default_factory=project_memory_dir)
    user_memory_dir: Path = field(default_factory=user_memory_dir)
    team_memory_dir: Path = field(default_factory=team_memory_dir)
    sessions_dir: Path = field(default_factory=project_sessions_dir)
    session_retention_days: int = DEFAULT_SESSION_RETENTION_DAYS
    context_window: int = DEFAULT_CONTEXT_WINDOW
    # Further folders the file tools treat as inside the project (--add-dir, additionalDirectories).
    additional_dirs: tuple[Path, ...] = ()
    append_system_prompt: str | None = None  # --append-system-prompt
    system_prompt: str | None = None  # --system-prompt: replaces prompts/system.md (print mode)
    permission_rules: tuple[PermissionRule, ...] = ()  # as the settings files wrote them
    hooks: tuple[HookSpec, ...] = ()  # the settings files' hooks that count (a trusted folder's)
    folder_trusted: bool = False  # whether the project's files may do more than instruct
    mcp: McpOptions = field(default_factory=McpOptions)
    setting_files: tuple[SettingsFileReport, ...] = ()
    origins: dict[str, str] = field(default_factory=dict)  # setting → where its value came from
    notes: tuple[str, ...] = ()  # one line each: what the settings files could not give, and why
    thinking_budget: int | None = None  # --thinking, or `thinking` in the settings files (None: off)
    max_cost: float | None = None  # --max-cost, or `maxCostUsd`: the spend cap in US dollars

    @property
    def memory_enabled(self) -> bool:
        """Automatic memory is on, or asks before each save: not off."""
        return self.memory_mode != "off"

    @property
    def can_call_model(self) -> bool:
        return bool(self.api_key or self.auth_token or self.base_url)


def load_settings(
    *, model: str | None = None, max_turns: int | None = None, permission_mode: str | None = None,
    plain: bool = False, files: Mapping[str, Sourced] | None = None, thinking: int | None = None,
    max_cost: float | None = None,
) -> Settings:  # fmt: skip
    """Flags win over the environment, which wins over the settings `files` (values app/settings
    has checked, by name: model, permission_mode, context_window, early_recall, memory_enabled,
    session_retention_days, read_only_commands, thinking, max_cost), which win over defaults.
    `origins` says which gave each. `thinking`: a budget, 0 for off (None: not given)."""
    env, files = os.environ, files or {}
    given = {"model": model, "permission_mode": permission_mode}
    origins = {name: _origin(name, variable, files, given.get(name)) for name, variable in ENV_NAMES.items()}
    origins.update(thinking=_origin("thinking", "", files, thinking is not None))
    origins.update(max_cost=_origin("max_cost", "", files, max_cost is not None))

    def from_files(name: str, default: object) -> object:
        return files[name][0] if name in files else default

    chosen_model = model or env.get("ANTHROPIC_MODEL", "").strip() or str(from_files("model", DEFAULT_MODEL))
    mode = permission_mode or env.get("MINI_CLAUDE_PERMISSION_MODE", "").strip()
    mode = mode or str(from_files("permission_mode", "ask"))
    mode = PERMISSION_MODE_ALIASES.get(mode, mode)
    if mode not in PERMISSION_MODES:
        names = ", ".join((*PERMISSION_MODES, *PERMISSION_MODE_ALIASES))
        raise ConfigError(f"permission mode {mode!r} is not one of: {names}")
    window = from_files("context_window", DEFAULT_CONTEXT_WINDOW)  # checked there already
    context_window = int(env_number("MINI_CLAUDE_CONTEXT_WINDOW", _number(window), int))
    if context_window < MIN_CONTEXT_WINDOW:
        raise ConfigError(
            f"MINI_CLAUDE_CONTEXT_WINDOW={context_window} is too small: it must be at least "
            f"{MIN_CONTEXT_WINDOW:,} tokens (the system prompt and tool definitions alone take about "
            f"{FIXED_PROMPT_TOKENS:,})"
        )
    retention = from_files("session_retention_days", DEFAULT_SESSION_RETENTION_DAYS)
    calls = _number(from_files("max_tool_calls", DEFAULT_MAX_TOOL_CALLS))
    cwd = Path(os.getcwd())  # read once, so the project and its memory dir cannot disagree
    state_dir = project_state_dir(cwd)
    return Settings(
        model=resolve_model(chosen_model),  # `opus`, `sonnet`, `haiku` as the current models
        side_model=resolve_model(env.get("MINI_CLAUDE_SIDE_MODEL", "").strip() or chosen_model),
        api_key=env.get("ANTHROPIC_API_KEY", "").strip() or None,
        auth_token=env.get("ANTHROPIC_AUTH_TOKEN", "").strip() or None,
        base_url=env_base_url(),
        max_turns=max_turns if max_turns is not None else DEFAULT_MAX_TURNS,
        max_tokens=int(env_number("MINI_CLAUDE_MAX_TOKENS", DEFAULT_MAX_TOKENS, int)),
        max_tool_calls=max(1, int(env_number(ENV_NAMES["max_tool_calls"], calls, int))),
        api_timeout=env_number("MINI_CLAUDE_API_TIMEOUT", DEFAULT_API_TIMEOUT),
        max_retries=int(env_number("MINI_CLAUDE_MAX_RETRIES", DEFAULT_MAX_RETRIES, int)),
        side_query_timeout=env_number("MINI_CLAUDE_SIDE_QUERY_TIMEOUT", DEFAULT_SIDE_QUERY_TIMEOUT),
        permission_mode=mode,
        read_only_commands=env_switch(
            ENV_NAMES["read_only_commands"], default=bool(from_files("read_only_commands", True))
        ),
        plain=plain,
        early_recall=env_switch("MINI_CLAUDE_EARLY_RECALL", default=bool(from_files("early_recall", True))),
        memory_mode=memory_mode(default="on" if from_files("memory_enabled", True) else "off"),
        project_dir=cwd,
        memory_dir=state_dir / MEMORY_FOLDER,
        user_memory_dir=user_memory_dir(),
        team_memory_dir=team_memory_dir(cwd),
        sessions_dir=state_dir / SESSIONS_FOLDER,
        session_retention_days=int(env_number(ENV_NAMES["session_retention_days"], _number(retention), int)),
        context_window=context_window,
        mcp=mcp_options(files),
        origins=origins,
        thinking_budget=int(_number(thinking if thinking is not None else from_files("thinking", 0))) or None,
        max_cost=max_cost if max_cost is not None else _optional(from_files("max_cost", None)),
    )


# The environment variable behind each setting the settings files can give too.
ENV_NAMES = {
    "model": "ANTHROPIC_MODEL",
    "permission_mode": "MINI_CLAUDE_PERMISSION_MODE",
    "context_window": "MINI_CLAUDE_CONTEXT_WINDOW",
    "early_recall": "MINI_CLAUDE_EARLY_RECALL",
    "memory_enabled": "MINI_CLAUDE_MEMORY",
    "session_retention_days": "MINI_CLAUDE_SESSION_RETENTION_DAYS",
    "read_only_commands": "MINI_CLAUDE_READ_ONLY_COMMANDS",
    "max_tool_calls": "MINI_CLAUDE_MAX_TOOL_CALLS",
}


def _origin(name: str, variable: str, files: Mapping[str, Sourced], flag: object) -> str:
    """Where a setting's value comes from: "flag", the environment variable, a file, "default"."""
    if flag:
        return "flag"
    if os.environ.get(variable, "").strip():
        return variable
    return files[name][1] if name in files else DEFAULT_ORIGIN


def _optional(value: object) -> float | None:
    return None if value is None else _number(value)


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0
