"""Who may read, write and run what: permission modes, path rules, and session grants.

The tools call `check_read` / `check_write` / `check_shell` with already resolved paths (and the
path as the model wrote it, so a sensitive place reached by another name is still judged by both);
each either returns (allowed) or raises `PermissionDenied`. Asking goes through the `ask`
callback, which the UI provides; no callback (print mode) means no one can say yes.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from mini_claude.core import prompts
from mini_claude.core.config import PERMISSION_MODES
from mini_claude.core.errors import PermissionDenied
from mini_claude.core.paths import display_path, is_within, stays_in_its_folder, visible_path
from mini_claude.core.untrusted import visible_text
from mini_claude.safety.git import git_write_risk
from mini_claude.safety.home_dotfiles import SearchHiding, is_home_dotfile, private_places
from mini_claude.safety.settings_files import SETTINGS_REASON, is_settings_file

if TYPE_CHECKING:
    from mini_claude.safety.change_preview import ChangePreview

Action = Literal["read", "write", "shell"]
Answer = Literal["y", "a", "n"]

log = logging.getLogger("mini_claude")

_ACTION_VERBS = {"read": "read", "write": "write to", "shell": "run"}
GIT_DIR_REASON = "inside a git directory (its hooks and config run code)"
GIT_HOOKS_REASON = "a hook git runs (its hooks folder or core.hooksPath, through any link)"
GIT_CONFIG_REASON = "a config file git reads or includes (its settings run code)"
GIT_UNANSWERED_REASON = "git did not say which hooks and config files it uses here (why: the debug log)"
_GIT_REASONS = {
    "git_dir": GIT_DIR_REASON,
    "hooks": GIT_HOOKS_REASON,
    "git_config": GIT_CONFIG_REASON,
    "unanswered": GIT_UNANSWERED_REASON,
}
OWN_SETTINGS_REASON = "mini-claude's own settings"
HOME_DOTFILE_REASON = "a dotfile in your home folder"
INSTRUCTIONS_FILE = "CLAUDE.md"  # as system_prompt.PROJECT_INSTRUCTIONS_FILE (which imports the memory store)
INSTRUCTIONS_REASON = "the project's CLAUDE.md: instructions every later conversation starts with"


@dataclass(frozen=True)
class PermissionRequest:
    tool: str
    action: Action
    target: str  # a resolved path, or the shell command, with invisible characters made visible
    reason: str  # a short phrase for the UI, e.g. "outside the project"
    allow_always: bool = True  # False when "a" would only allow this once (sensitive / outside writes)
    preview: ChangePreview | None = None  # what a write would change, built by the tool when asking


AskCallback = Callable[[PermissionRequest], Answer]
# Says why a question needs not be asked (what a skill or a hook approved in advance), or None.
ApprovedCallback = Callable[[PermissionRequest], "str | None"]
# Builds a write's preview; called only when a question is asked (it may read the file).
PreviewBuilder = Callable[[], "ChangePreview"]


class Permissions:
    def __init__(
        self,
        project_dir: Path,
        *,
        mode: str,
        ask: AskCallback | None,
        memory_dir: Path | None = None,
        protected_dirs: Iterable[Path] = (),
        home: Path | None = None,
        more_memory_dirs: Iterable[Path] = (),
        additional_dirs: Iterable[Path] = (),
    ) -> None:
        """`additional_dirs` are treated as inside the project (--add-dir, additionalDirectories)."""
        self.project_dir = _real(project_dir)
        self.additional_dirs = [_real(folder) for folder in additional_dirs]
        self.mode = mode
        self.ask = ask
        self._memory_folder = Path(os.path.expanduser(memory_dir)) if memory_dir is not None else None
        # The user's own memories (every project): read and written as freely as the project's.
        self._more_memory_folders = [Path(os.path.expanduser(folder)) for folder in more_memory_dirs]
        self.protected_dirs = [_real(p) for p in protected_dirs]
        self._home_named = home if home is not None else Path.home()
        self.home = _real(self._home_named)
        self._grants: set[tuple[str, Action]] = set()
        # Consulted before a question is asked; set by app/ (extensions/approvals.py decides).
        self.approved: ApprovedCallback | None = None

    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        if value not in PERMISSION_MODES:
            raise ValueError(f"permission mode {value!r} is not one of: {', '.join(PERMISSION_MODES)}")
        self._mode = value

    @property
    def memory_dir(self) -> Path | None:
        """Where the model writes memories freely (resolved); None while the memory folder is a
        symlink out of the folder that holds it. Judged at every check: a folder can be swapped."""
        folder = self._memory_folder
        return _real(folder) if folder is not None and stays_in_its_folder(folder) else None

    # --- the checks the tools call -------------------------------------------------------

    def check_read(self, tool: str, path: Path, *, written: Path | None = None) -> None:
        """`path` is resolved; `written` is the same path as the model named it (default: `path`)."""
        if self._in_memory(path) or self.mode == "bypass":
            return
        private = self._private_reason(path, written or path)
        if private is not None:
            # Even inside the project (started in ~ or in ~/.config): keys and history live there.
            request = PermissionRequest(tool, "read", _shown(path), private, allow_always=False)
            self._ask(request, told=self._named(written or path))
            return
        if self._in_project(path) or (tool, "read") in self._grants:
            return
        self._ask(PermissionRequest(tool, "read", _shown(path), "outside the project"))

    def check_write(
        self, tool: str, path: Path, *, written: Path | None = None, preview: PreviewBuilder | None = None
    ) -> None:
        """`path` is resolved; `written` is the same path as the model named it (default: `path`);
        `preview` builds what the question shows of the change."""
        if self._in_memory(path):
            return
        shown = _shown(path)
        sensitive = self._sensitive_reason(path, written or path)
        if sensitive is not None:
            # Sensitive targets ask in every mode, and no earlier "a" covers them.
            request = PermissionRequest(tool, "write", shown, sensitive, allow_always=False)
            self._ask(request, preview, told=self._named(written or path))
            return
        if self.mode == "bypass":
            return
        if not self._in_project(path):
            reason = "outside the project"
            self._ask(PermissionRequest(tool, "write", shown, reason, allow_always=False), preview)
            return
        if self._is_project_instructions(path, written or path):
            # Read into every later conversation's system prompt: a file read while exploring must
            # not be able to plant instructions there unseen, so even accept-edits and "a" ask.
            request = PermissionRequest(tool, "write", shown, INSTRUCTIONS_REASON, allow_always=False)
            self._ask(request, preview)
            return
        if is_settings_file(path, written or path, self.project_dir):
            # Read at every start: in a trusted folder it allows tools and sets the environment.
            request = PermissionRequest(tool, "write", shown, SETTINGS_REASON, allow_always=False)
            self._ask(request, preview)
            return
        if self.mode == "accept-edits" or (tool, "write") in self._grants:
            return
        self._ask(PermissionRequest(tool, "write", shown, "edit a project file"), preview)

    def confirm_write(
        self, tool: str, path: Path, reason: str, preview: PreviewBuilder, *, every_mode: bool, refusal: str
    ) -> None:
        """A write that needs a yes for a reason of its caller's (a memory a person wrote, one the
        whole team reads): asked in every mode but bypass, or in every mode; `refusal` is what the
        model reads when no one can answer (print mode)."""
        if self.mode == "bypass" and not every_mode:
            return
        if self.ask is None:
            raise PermissionDenied(refusal)
        self._ask(PermissionRequest(tool, "write", _shown(path), reason, allow_always=False), preview)

    def check_shell(self, tool: str, command: str) -> None:
        if self.mode == "bypass" or (tool, "shell") in self._grants:
            return
        self._ask(PermissionRequest(tool, "shell", _shown_command(command), "run a shell command"))

    def hidden_from_search(self) -> SearchHiding | None:
        """What a search walk skips, as check_read would ask for it, or None when it may see it
        all (bypass): listing or grepping `~` must not read `~/.ssh` without a question."""
        if self.mode == "bypass":
            return None
        private = [*self.protected_dirs, *private_places(self.home, self.project_dir)]
        return SearchHiding(str(self.home), frozenset(str(path) for path in private))

    # --- rules -------------------------------------------------------------------------

    def _in_project(self, path: Path) -> bool:
        return any(is_within(path, folder) for folder in (self.project_dir, *self.additional_dirs))

    def _in_memory(self, path: Path) -> bool:
        folders = [self.memory_dir, *(_real(f) for f in self._more_memory_folders if stays_in_its_folder(f))]
        return any(folder is not None and is_within(path, folder) for folder in folders)

    def _is_project_instructions(self, path: Path, written: Path) -> bool:
        """Whether writing `path` (named `written`) changes the CLAUDE.md the system prompt reads:
        that file, what a CLAUDE.md symlink leads to, or the name in any letter case (a
        case-insensitive file system reads `claude.md` as it)."""
        if Path(os.path.realpath(self.project_dir / INSTRUCTIONS_FILE)) == path:
            return True
        named = Path(os.path.normpath(written))
        return any(
            folder == self.project_dir and name.casefold() == INSTRUCTIONS_FILE.casefold()
            for folder, name in ((path.parent, path.name), (_real(named.parent), named.name))
        )

    def _sensitive_reason(self, path: Path, written: Path) -> str | None:
        """Why writing `path` (named `written`) always needs a yes, or None for an ordinary file."""
        # Any git directory on the way, not only the project's: started in repo/src, repo/.git is
        # the one whose hooks run (and a submodule's or nested repository's count as much).
        risk = git_write_risk(path, written, self.project_dir, self.home)
        if risk == "git_dir":
            return GIT_DIR_REASON
        private = self._private_reason(path, written)  # ~/.gitconfig: a dotfile first
        return private if private is not None or risk is None else _GIT_REASONS[risk]

    def _private_reason(self, path: Path, written: Path) -> str | None:
        """Why reading or writing `path` (named `written`) always needs a yes, or None."""
        return private_reason(path, written, self.project_dir, self._home_named, self.protected_dirs)

    def _named(self, written: Path) -> str:
        """A sensitive path as the model named it, for the refusal it reads: the resolved one
        (still shown in the question) would point it at another name to try."""
        return display_path(Path(os.path.normpath(written)), self.project_dir)

    # --- asking --------------------------------------------------------------------------

    def _ask(
        self, request: PermissionRequest, preview: PreviewBuilder | None = None, *, told: str | None = None
    ) -> None:
        """Ask; `told` names the target in a refusal the model reads (default: the question's)."""
        verb = _ACTION_VERBS[request.action]
        told = told if told is not None else request.target
        if self.approved is not None and (why := self.approved(request)) is not None:
            log.info("permission %s %s %r: %s", request.tool, request.action, request.target, why)
            return
        if self.ask is None:
            raise PermissionDenied(
                prompts.notice("permission_unavailable", tool=request.tool, verb=verb, target=told)
            )
        if preview is not None:
            request = replace(request, preview=_built(preview))
        answer = self.ask(request)
        log.info(
            "permission %s %s %r (%s): %r",
            request.tool,
            request.action,
            request.target,
            request.reason,
            answer,
        )
        if answer == "a" and request.allow_always:
            self._grants.add((request.tool, request.action))
            return
        if answer in ("y", "a"):
            return
        raise PermissionDenied(prompts.notice("permission_denied", tool=request.tool, verb=verb, target=told))


def private_reason(
    path: Path, written: Path, project_dir: Path, home: Path, protected_dirs: Iterable[Path]
) -> str | None:
    """Why `path` (resolved; named `written`) is private: mini-claude's own settings or a home
    dotfile, or None. The one judgement for the file tools and for what start-up reads."""
    if any(is_within(path, protected) for protected in protected_dirs):
        return OWN_SETTINGS_REASON
    if is_home_dotfile(path, written, home, project_dir):
        return HOME_DOTFILE_REASON
    return None


def _built(preview: PreviewBuilder) -> ChangePreview | None:
    """The preview, or None when building it failed: a question without one still asks."""
    try:
        return preview()
    except Exception:
        log.exception("building a permission preview failed")
        return None


def _shown(path: Path) -> str:
    """A path for the question: a line break in a name (a symlink's target may hold one) must not
    let it fake extra lines of the question."""
    return visible_path(str(path))


def _shown_command(command: str) -> str:
    """The command exactly as it will run: line breaks and tabs kept, every other invisible
    character written out, so nothing in it can hide itself from the person approving it."""
    return visible_text(command, keep="\n\t")


def _real(path: Path) -> Path:
    return Path(os.path.realpath(os.path.expanduser(path)))
