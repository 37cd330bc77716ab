"""The settings of one run: the settings files read (files.py), checked and merged (merge.py)
once folder trust is decided (trust.py), their `env` applied to this process (so the model
server, key and the tools' commands see it, as in Claude Code), then the environment and flags
over them (config.load_settings)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from mini_claude.agent.spend_cap import unchecked_warning
from mini_claude.app.extension_setup import project_allowances
from mini_claude.app.instructions.reading import shown_path
from mini_claude.app.mcp.files import project_servers_part
from mini_claude.app.permission_setup import validate_flag_rules
from mini_claude.app.settings.files import (
    SettingsError,
    SettingsFile,
    parse_settings,
    read_settings_file,
    settings_locations,
)
from mini_claude.app.settings.merge import UNTRUSTED_SCOPES, Merged, checked, merge
from mini_claude.app.settings.trust import TRUST_FILE, TrustStore, gated_parts, team_memory_parts
from mini_claude.app.settings.values import FileValues
from mini_claude.core.config import Settings, git_work_tree_root, load_settings
from mini_claude.core.env_values import ConfigError, memory_mode
from mini_claude.core.files import safe_read
from mini_claude.core.paths import visible_path
from mini_claude.llm.thinking import room_note

FLAG_SETTINGS_SHOWN = "--settings"
# Asks whether to trust a folder: (the folder as shown, what its files would do, a line each) →
# True (trust it), False (do not), None (not now: asked again next time).
AskTrust = Callable[[str, list[str]], "bool | None"]


@dataclass(frozen=True)
class Flags:
    model: str | None = None
    max_turns: int | None = None
    permission_mode: str | None = None
    plain: bool = False
    settings: str | None = None  # --settings: a file, or a JSON object written out
    add_dirs: tuple[str, ...] = ()
    append_system_prompt: str | None = None
    system_prompt: str | None = None
    trust_folder: bool = False
    allowed_tools: tuple[str, ...] = ()  # --allowedTools / --disallowedTools, as given
    disallowed_tools: tuple[str, ...] = ()
    thinking: int | None = None  # --thinking: a budget, 0 for off (None: not given)
    max_cost: float | None = None  # --max-cost


def configure(flags: Flags, ask_trust: AskTrust | None = None, trust: TrustStore | None = None) -> Settings:
    """Settings for a run started in the working directory; `ask_trust` (the REPL's question, or
    None: print mode never asks) is asked once per folder whose files would do more than
    instruct. ConfigError for a flag that cannot be used."""
    problem = validate_flag_rules(flags.allowed_tools, flags.disallowed_tools)
    if problem is not None:  # before the trust question: the run stops here
        raise ConfigError(problem)
    cwd = Path(os.path.realpath(os.getcwd()))
    root, home = git_work_tree_root(cwd) or cwd, Path(os.path.realpath(Path.home()))
    files, read_notes = _read_files(root, home, flags.settings)
    found = checked(files)
    gated = [
        f"{file.shown}: {part}"
        for file, values in found
        if file.scope in UNTRUSTED_SCOPES
        for part in gated_parts(values)
    ] + project_servers_part(root)
    if not _memory_off(found):  # with memory off the team's memories would not be loaded anyway
        gated += team_memory_parts(root)
    gated += project_allowances(root, home)  # the project's skills' and commands' allowed-tools
    trust = trust or TrustStore()
    trusted, how = _trusted(root, gated, flags.trust_folder, ask_trust, trust)
    merged = merge(found, trusted=trusted, root=root, home=home)
    for name, (value, _) in merged.env.items():
        os.environ[name] = value
    try:
        settings = load_settings(
            model=flags.model, max_turns=flags.max_turns, permission_mode=flags.permission_mode,
            plain=flags.plain, files=merged.values, thinking=flags.thinking, max_cost=flags.max_cost,
        )  # fmt: skip
    except ConfigError as error:  # a value the `env` of a settings file gave: say which file
        setters = [f"{name} is set by {file}" for name, (_, file) in merged.env.items() if name in str(error)]
        raise ConfigError("; ".join([str(error), *setters])) from None
    folders, dir_notes = _additional_dirs(flags.add_dirs, merged)
    notes = [*read_notes, *merged.notes, *dir_notes, *_trust_notes(root, merged, how), *_cost_notes(settings)]
    return replace(
        settings,
        allowed_tools=flags.allowed_tools,
        disallowed_tools=flags.disallowed_tools,
        additional_dirs=folders,
        append_system_prompt=flags.append_system_prompt,
        system_prompt=flags.system_prompt,
        permission_rules=tuple(merged.rules),
        hooks=tuple(merged.hooks),
        folder_trusted=trusted,
        setting_files=tuple(merged.reports),
        origins={
            **{name: _annotated(origin, merged) for name, origin in settings.origins.items()},
            **_credential_origins(settings, merged),
        },
        notes=tuple(notes),
    )


def _cost_notes(settings: Settings) -> list[str]:
    """A line when a thinking budget raises max_tokens, and when the spend cap cannot be checked."""
    cap = settings.max_cost
    notes = [room_note(settings.thinking_budget, settings.max_tokens)]
    notes.append(unchecked_warning(cap, [settings.model, settings.side_model]) if cap is not None else None)
    return [note for note in notes if note is not None]


def _memory_off(found: list[tuple[SettingsFile, FileValues]]) -> bool:
    """Whether automatic memory will be off: MINI_CLAUDE_MEMORY, else the last file's
    autoMemoryEnabled (a key that counts trusted or not)."""
    given = [values.scalars["memory_enabled"] for _, values in found if "memory_enabled" in values.scalars]
    try:
        return memory_mode(default="off" if given and given[-1] is False else "on") == "off"
    except ConfigError:  # load_settings says what is wrong with it
        return False


def _read_files(root: Path, home: Path, flag: str | None) -> tuple[list[SettingsFile], list[str]]:
    files, notes, seen = [], [], set()
    for path, scope in settings_locations(root, home):
        real = os.path.realpath(path)
        if real in seen:  # started in home: ~/.claude/settings.json is the user's, not twice
            continue
        seen.add(real)
        try:
            file = read_settings_file(path, scope, root)
        except SettingsError as error:
            notes.append(str(error))
            continue
        if file is not None:
            files.append(file)
    if flag is not None:
        files.append(_flag_file(flag))
    return files, notes


def _flag_file(flag: str) -> SettingsFile:
    """`--settings`: a JSON object written out, or a file; ConfigError when it cannot be used
    (the user asked for it: running without it would be running with other permissions)."""
    written_out = flag.lstrip().startswith("{")
    try:
        if written_out:
            data = parse_settings(flag.encode("utf-8", "surrogateescape"), FLAG_SETTINGS_SHOWN)
            return SettingsFile(Path(FLAG_SETTINGS_SHOWN), "flag", data, FLAG_SETTINGS_SHOWN)
        path = Path(os.path.abspath(os.path.expanduser(flag)))
        found = read_settings_file(path, "flag", Path("/"))
    except SettingsError as error:
        problem = str(error).replace(": skipped", "")  # not skipped: nothing runs without it
        raise ConfigError(problem if written_out else f"{FLAG_SETTINGS_SHOWN} {problem}") from None
    if found is None:
        raise ConfigError(f"--settings {visible_path(flag)}: no such file")
    return found


def _trusted(
    root: Path, gated: list[str], flag: bool, ask: AskTrust | None, store: TrustStore
) -> tuple[bool, str]:
    """Whether the folder is trusted, and how that was decided."""
    if flag:
        return True, "flag"
    remembered = store.answer(root)
    if remembered is not None:
        return remembered, "remembered"
    if not gated or ask is None:
        return False, "not asked"
    answer = ask(shown_path(root), gated)
    if answer is None:
        return False, "not now"
    try:
        store.remember(root, answer)
    except OSError as error:
        return answer, f"not remembered: {safe_read.describe(error)}"
    return answer, "answered"


def _trust_notes(root: Path, merged: Merged, how: str) -> list[str]:
    notes = [f"Your answer about trusting this folder was {how}"] if how.startswith("not remembered") else []
    if not merged.ignored:
        return notes
    ignored = "; ".join(merged.ignored)
    if how == "remembered":
        where = shown_path(Path.home() / ".mini-claude" / TRUST_FILE)
        fix = f"you chose not to trust {shown_path(root)} (remove it from {where} to be asked again)"
    elif how == "not now":
        fix = "not trusted for now: the next start here asks again"
    else:
        fix = "not a trusted folder: start mini-claude here in a terminal to answer, or pass --trust-folder"
    return [*notes, f"Ignored {ignored}: {fix}"]


def _additional_dirs(flagged: tuple[str, ...], merged: Merged) -> tuple[tuple[Path, ...], list[str]]:
    """The extra folders that exist (a flag naming none is an error; a file's, a line)."""
    folders: list[Path] = []
    notes: list[str] = []
    given = [(Path(os.path.abspath(os.path.expanduser(raw))), "--add-dir") for raw in flagged]
    for folder, source in [*given, *merged.additional_dirs]:
        real = Path(os.path.realpath(folder))
        if not real.is_dir():
            problem = f"{source}: {shown_path(folder)} is not a folder"
            if source == "--add-dir":
                raise ConfigError(problem)
            notes.append(f"{problem}: ignored")
        elif real not in folders:
            folders.append(real)
    return tuple(folders), notes


def _credential_origins(settings: Settings, merged: Merged) -> dict[str, str]:
    """Where the server's address and the credentials come from (never their values): a settings
    file's `env` may set them, and the user should be able to see which did."""
    found = {"base_url": "ANTHROPIC_BASE_URL" if settings.base_url else "default"}
    for variable, present in (
        ("ANTHROPIC_API_KEY", settings.api_key),
        ("ANTHROPIC_AUTH_TOKEN", settings.auth_token),
    ):
        if present:
            found.setdefault("credentials", variable)
    return {name: _annotated(origin, merged) for name, origin in found.items()}


def _annotated(origin: str, merged: Merged) -> str:
    """An environment variable that a settings file's `env` set is named with that file."""
    if origin in merged.env:
        return f"{origin} (env in {merged.env[origin][1]})"
    return origin
