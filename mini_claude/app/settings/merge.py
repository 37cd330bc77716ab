"""The settings files merged, most general first: a later file wins a key it sets, `env` merges
by variable, permission rules and additional folders add up (each kept with its file). A
project's parts that need trust (trust.py) count only in a trusted folder."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from mini_claude.app.settings.files import SettingsFile
from mini_claude.app.settings.trust import without_gated
from mini_claude.app.settings.values import FileValues, check_values
from mini_claude.core.config import Sourced
from mini_claude.core.config_sources import HookSpec, PermissionRule, SettingsFileReport

UNTRUSTED_SCOPES = ("project", "local")  # the files a repository can bring


@dataclass
class Merged:
    values: dict[str, Sourced] = field(default_factory=dict)  # for config.load_settings
    env: dict[str, tuple[str, str]] = field(default_factory=dict)  # name → (value, file)
    rules: list[PermissionRule] = field(default_factory=list)
    hooks: list[HookSpec] = field(default_factory=list)  # every file's, each with its file
    additional_dirs: list[tuple[Path, str]] = field(default_factory=list)  # (folder, file)
    reports: list[SettingsFileReport] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # one line each for the user
    ignored: list[str] = field(default_factory=list)  # files whose gated parts were left out


def checked(files: list[SettingsFile]) -> list[tuple[SettingsFile, FileValues]]:
    return [(file, check_values(file.data)) for file in files]


def merge(files: list[tuple[SettingsFile, FileValues]], *, trusted: bool, root: Path, home: Path) -> Merged:
    merged = Merged()
    for file, values in files:
        merged.notes += [f"{file.shown}: {problem}" for problem in values.problems]
        status = "used"
        if file.scope in UNTRUSTED_SCOPES and not trusted:
            values, removed = without_gated(values)
            if removed:
                status = f"used, but not its {', '.join(removed)} (the folder is not trusted)"
                merged.ignored.append(f"{file.shown} ({', '.join(removed)})")
        merged.reports.append(SettingsFileReport(file.shown, file.scope, status))
        for name, value in values.scalars.items():
            merged.values[name] = (value, file.shown)
        for variable, value in values.env.items():
            merged.env[variable] = (value, file.shown)
        merged.rules += [PermissionRule(kind, rule, file.shown, file.scope) for kind, rule in values.rules]
        merged.hooks += [replace(hook, source=file.shown, scope=file.scope) for hook in values.hooks]
        base = home if file.scope == "user" else root if file.scope != "flag" else Path(os.getcwd())
        for written in values.additional_dirs:
            folder = Path(os.path.normpath(base / os.path.expanduser(written)))
            merged.additional_dirs.append((folder, file.shown))
    return merged
