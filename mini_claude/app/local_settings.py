"""`<project root>/.mini-claude/settings.local.json`, the personal settings file "always" answers
and `/permissions allow|ask|deny|rm` write to (as Claude Code's `.claude/settings.local.json`).

Read and changed as JSON, keeping every key it does not touch. A change is a locked
read-modify-write (the `.mini-claude` folder is locked, so two sessions saving at once keep both
rules) written atomically; a file that is not valid JSON is reported with its line and column
and left exactly as it was.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mini_claude.core import safe_read
from mini_claude.core.atomic import write_atomic
from mini_claude.core.paths import visible_path
from mini_claude.core.private_files import FILE_MODE, create_folders
from mini_claude.safety.rules import BEHAVIOURS, Behaviour

FOLDER = ".mini-claude"
FILE_NAME = "settings.local.json"
MAX_BYTES = 1024 * 1024  # a settings file is a few hundred bytes; past this it is not one
LOCK_TIMEOUT_NOTE = "another session is saving it"


class SettingsFileError(ValueError):
    """The file cannot be read or changed; one line naming it and saying why."""


class LocalSettings:
    def __init__(self, root: Path) -> None:
        self.root = root  # the project root: its `./` rules start here
        self.path = root / FOLDER / FILE_NAME

    @property
    def shown(self) -> str:
        return visible_path(str(self.path))

    def read(self) -> dict[str, Any]:
        """The file's object; {} when there is no file. SettingsFileError when it is not valid."""
        try:
            data = safe_read.read_bytes(self.path, self.root, MAX_BYTES)
        except FileNotFoundError:
            return {}
        except OSError as error:
            raise SettingsFileError(_why(self.shown, error)) from None
        if data.was_cut:
            raise SettingsFileError(f"{self.shown}: larger than {MAX_BYTES // 1024} KB, not a settings file")
        try:
            text = data.data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise SettingsFileError(f"{self.shown}: not UTF-8 (byte {error.start})") from None
        if not text.strip():
            return {}
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            raise SettingsFileError(
                f"{self.shown}: invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}"
            ) from None
        if not isinstance(value, dict):
            raise SettingsFileError(f"{self.shown}: must hold a JSON object ({{...}})")
        return value

    def permissions(self) -> dict[str, Any]:
        permissions = self.read().get("permissions", {})
        if not isinstance(permissions, dict):
            raise SettingsFileError(f'{self.shown}: "permissions" must be an object')
        return permissions

    def rule_texts(self) -> list[tuple[str, Behaviour]]:
        """Every rule of `permissions.allow|ask|deny`, in the file's order."""
        permissions = self.permissions()
        texts: list[tuple[str, Behaviour]] = []
        for behaviour in BEHAVIOURS:
            for text in _rule_list(permissions, behaviour, self.shown):
                texts.append((text, behaviour))
        return texts

    def add_rule(self, text: str, behaviour: Behaviour) -> bool:
        """Add `text` to `permissions.<behaviour>`; False when it was there already."""
        with self._changing() as settings:
            permissions = settings.setdefault("permissions", {})
            if not isinstance(permissions, dict):
                raise SettingsFileError(f'{self.shown}: "permissions" must be an object')
            rules = _rule_list(permissions, behaviour, self.shown)
            if text in rules:
                return False
            permissions[behaviour] = [*rules, text]
            return True

    def remove_rule(self, text: str) -> list[Behaviour]:
        """Remove `text` from every list it is in; the lists it was in."""
        removed: list[Behaviour] = []
        with self._changing() as settings:
            permissions = settings.get("permissions", {})
            if not isinstance(permissions, dict):
                raise SettingsFileError(f'{self.shown}: "permissions" must be an object')
            for behaviour in BEHAVIOURS:
                rules = _rule_list(permissions, behaviour, self.shown)
                if text in rules:
                    permissions[behaviour] = [rule for rule in rules if rule != text]
                    removed.append(behaviour)
        return removed

    @contextlib.contextmanager
    def _changing(self) -> Iterator[dict[str, Any]]:
        """The file's object to change, written back (atomically, under the folder's lock) when
        the block ends without an error."""
        folder = self.path.parent
        try:
            create_folders(folder)
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as error:
            raise SettingsFileError(_why(visible_path(str(folder)), error)) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            settings = self.read()
            before = json.dumps(settings, sort_keys=True)
            yield settings
            if json.dumps(settings, sort_keys=True) != before:
                text = json.dumps(settings, indent=2, ensure_ascii=False) + "\n"
                try:
                    write_atomic(self.path, text, mode=None if self.path.exists() else FILE_MODE)
                except OSError as error:
                    raise SettingsFileError(_why(self.shown, error)) from None
        finally:
            os.close(fd)  # closing releases the lock


def _rule_list(permissions: dict[str, Any], behaviour: str, shown: str) -> list[str]:
    rules = permissions.get(behaviour, [])
    if not isinstance(rules, list) or not all(isinstance(rule, str) for rule in rules):
        raise SettingsFileError(f'{shown}: "permissions.{behaviour}" must be a list of strings')
    return list(rules)


def _why(shown: str, error: OSError) -> str:
    """One line: the file, then why (an unreadable file's own message names it already)."""
    return f"{shown}: {error.strerror}" if error.strerror else str(error)
