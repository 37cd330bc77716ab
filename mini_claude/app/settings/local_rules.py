"""Saving permission rules to `<project root>/.mini-claude/settings.local.json`, the personal
settings file that "always" answers and `/permissions allow|ask|deny|rm` change (as Claude Code's
`.claude/settings.local.json`). It is read, like every settings file, by files.py at start; here
it is only changed.

A change is a locked read-modify-write (the `.mini-claude` folder is locked, so two sessions saving
at once keep both rules), written atomically, keeping every key it does not touch; a file that is
not valid JSON is reported with its line and column and left exactly as it was.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mini_claude.app.settings.files import (
    LOCAL_SETTINGS_FILE,
    OWN_FOLDER,
    SettingsError,
    changed_json,
    read_settings_file,
    shown_setting_path,
)
from mini_claude.core.config_sources import RULE_KINDS, RuleKind
from mini_claude.core.files.private_files import FILE_MODE, create_folders
from mini_claude.core.paths import visible_path

LOCAL_RULES_FILE = f"{OWN_FOLDER}/{LOCAL_SETTINGS_FILE}"  # from the project root


class SettingsFileError(ValueError):
    """The file cannot be changed; one line naming it and saying why."""


class LocalRules:
    """The project's local settings file, as the place rules are saved to."""

    def __init__(self, root: Path) -> None:
        self.root = root  # the project root: its `./` rules start here
        self.path = root / LOCAL_RULES_FILE

    @property
    def shown(self) -> str:
        """As /permissions and /status name it (the settings loader's name for it)."""
        return shown_setting_path(self.path, self.root)

    def add_rule(self, text: str, behaviour: RuleKind) -> bool:
        """Add `text` to `permissions.<behaviour>`; False when it was there already."""
        with self._changing() as settings:
            permissions = _permissions(settings, self.shown)
            settings["permissions"] = permissions
            rules = _rule_list(permissions, behaviour, self.shown)
            if text in rules:
                return False
            permissions[behaviour] = [*rules, text]
            return True

    def remove_rule(self, text: str) -> list[RuleKind]:
        """Remove `text` from every list it is in; the lists it was in."""
        removed: list[RuleKind] = []
        with self._changing() as settings:
            permissions = _permissions(settings, self.shown)
            for behaviour in RULE_KINDS:
                rules = _rule_list(permissions, behaviour, self.shown)
                if text in rules:
                    permissions[behaviour] = [rule for rule in rules if rule != text]
                    removed.append(behaviour)
        return removed

    def _read(self) -> dict[str, Any]:
        """The file's object; {} when there is none. SettingsFileError when it is not usable."""
        try:
            found = read_settings_file(self.path, "local", self.root)
        except SettingsError as error:
            raise SettingsFileError(str(error).replace(": skipped", ": not changed")) from None
        return dict(found.data) if found is not None else {}

    @contextlib.contextmanager
    def _changing(self) -> Iterator[dict[str, Any]]:
        """The file's object to change, written back (`changed_json`) when the block changed it."""
        folder = self.path.parent
        try:
            create_folders(folder)
        except OSError as error:
            raise SettingsFileError(_why(visible_path(str(folder)), error)) from None
        if not Path(os.path.realpath(folder)).is_relative_to(os.path.realpath(self.root)):
            # a repository's `.mini-claude` link must not take our rules elsewhere
            raise SettingsFileError(f"{visible_path(str(folder))} leads out of the project: not changed")
        try:
            with changed_json(self.path, self._read, None if self.path.exists() else FILE_MODE) as settings:
                yield settings
        except OSError as error:
            raise SettingsFileError(_why(self.shown, error)) from None


def _permissions(settings: dict[str, Any], shown: str) -> dict[str, Any]:
    permissions = settings.get("permissions", {})
    if not isinstance(permissions, dict):
        raise SettingsFileError(f'{shown}: "permissions" must be an object: not changed')
    return permissions


def _rule_list(permissions: dict[str, Any], behaviour: str, shown: str) -> list[str]:
    rules = permissions.get(behaviour, [])
    if not isinstance(rules, list) or not all(isinstance(rule, str) for rule in rules):
        raise SettingsFileError(f'{shown}: "permissions.{behaviour}" must be a list of text: not changed')
    return list(rules)


def _why(shown: str, error: OSError) -> str:
    """One line: the file, then why (an unreadable file's own message names it already)."""
    return f"{shown}: {error.strerror}: not changed" if error.strerror else str(error)
