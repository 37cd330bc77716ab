"""Who may read, write and run what in one session: the mode, the rules, the grants, and asking.

The tools call `check_read` / `check_write` / `check_shell` with already resolved paths (and the
path as the model wrote it, so a sensitive place reached by another name is still judged by both),
and a tool known by its name alone calls `check_tool`, web_fetch `check_fetch`; each returns
(allowed) or raises `PermissionDenied`. `decision.py` and `shell_decision.ShellJudge` decide;
asking goes through the `ask` callback, which the UI provides; no callback (print mode) means no
one can say yes.
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
from mini_claude.core.paths import display_path, stays_in_its_folder, visible_path
from mini_claude.core.untrusted import visible_text
from mini_claude.safety.decision import Decision, RuleSet, Scope, decide_fetch, decide_file, decide_tool
from mini_claude.safety.home_dotfiles import SearchHiding, private_places
from mini_claude.safety.protections import Protections
from mini_claude.safety.rules import Rule, RuleEntry, parse_rule
from mini_claude.safety.shell_decision import ShellJudge

if TYPE_CHECKING:
    from mini_claude.safety.change_preview import ChangePreview
    from mini_claude.safety.decision import Always

Action = Literal["read", "write", "shell", "tool", "fetch"]
Answer = Literal["y", "a", "n"]
CYCLED_MODES = ("ask", "accept-edits", "plan")  # Shift+Tab; bypass joins only when started in it

log = logging.getLogger("mini_claude")
_ACTION_VERBS = {"read": "read", "write": "write to", "shell": "run", "tool": "run with", "fetch": "fetch"}


@dataclass(frozen=True)
class PermissionRequest:
    tool: str
    action: Action
    target: str  # a resolved path, the shell command or a web address, invisible characters made visible
    reason: str  # a short phrase for the UI, e.g. "outside the project"
    always: str | None = None  # what answering "always" does ("allow Bash(npm test:*) in this project")
    preview: ChangePreview | None = None  # what a write would change, built by the tool when asking
    agent: str | None = None  # the sub-agent that asks (None: the conversation's own agent)

    @property
    def allow_always(self) -> bool:
        return self.always is not None


AskCallback = Callable[[PermissionRequest], Answer]
# Builds a write's preview; called only when a question is asked (it may read the file).
PreviewBuilder = Callable[[], "ChangePreview"]
# Saves an "always" rule (allow, for the project) where later sessions read it, and adds it to
# this session's rules; raises OSError or ValueError with a one-line reason when it cannot.
RuleSaver = Callable[[str], None]


class Permissions:
    def __init__(
        self, project_dir: Path, *, mode: str, ask: AskCallback | None, memory_dir: Path | None = None,
        protected_dirs: Iterable[Path] = (), home: Path | None = None, rules: RuleSet | None = None,
        save_rule: RuleSaver | None = None, warn: Callable[[str], None] | None = None,
        more_memory_dirs: Iterable[Path] = (), additional_dirs: Iterable[Path] = (),
    ) -> None:  # fmt: skip
        """`additional_dirs` count as the project's; `more_memory_dirs` as freely as `memory_dir`."""
        self.project_dir = _real(project_dir)
        self.additional_dirs = [_real(folder) for folder in additional_dirs]
        self.mode = mode
        self.bypass_allowed = mode == "bypass"  # bypass is only ever started with, never cycled into
        self.ask = ask
        self.rules = rules if rules is not None else RuleSet()
        self.save_rule, self.warn = save_rule, warn or (lambda line: log.warning("%s", line))
        folders = [memory_dir, *more_memory_dirs] if memory_dir is not None else [*more_memory_dirs]
        self._memory_folders = [Path(os.path.expanduser(folder)) for folder in folders]
        self.protected_dirs = [_real(p) for p in protected_dirs]
        self.home = _real(home if home is not None else Path.home())
        self.protections = Protections(self.project_dir, home or Path.home(), self.protected_dirs)
        self.scope = Scope((self.project_dir, *self.additional_dirs))
        self.shell = ShellJudge(self.project_dir, self.home, self.protections)
        self._mode_before_answer: str | None = None  # set while an answer changed the mode

    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        if value not in PERMISSION_MODES:
            raise ValueError(f"permission mode {value!r} is not one of: {', '.join(PERMISSION_MODES)}")
        self._mode = value
        self._mode_before_answer = None  # chosen by the user: it outlives the conversation

    def next_mode(self) -> str:
        """Shift+Tab: default → accept-edits → plan → (bypass, when started in it) → default."""
        cycle = (*CYCLED_MODES, "bypass") if self.bypass_allowed else CYCLED_MODES
        index = cycle.index(self.mode) if self.mode in cycle else -1
        self.mode = cycle[(index + 1) % len(cycle)]
        return self.mode

    def set_mode_for_conversation(self, mode: str) -> None:
        """A mode an answer chose ("always" on an edit, an approved plan): the next conversation
        starts in the mode before it."""
        before = self._mode_before_answer or self.mode
        self.mode = mode
        self._mode_before_answer = before

    def new_conversation(self) -> None:
        """/clear and /resume: this conversation's grants end with it."""
        self.scope.read_folders.clear()
        if self._mode_before_answer is not None:
            self.mode = self._mode_before_answer

    @property
    def memory_dirs(self) -> tuple[Path, ...]:
        """Where the model writes memories freely (resolved), but a memory folder that is a symlink
        out of the folder holding it. Judged at every check: a folder can be swapped."""
        return tuple(_real(folder) for folder in self._memory_folders if stays_in_its_folder(folder))

    # --- the checks the tools call -------------------------------------------------------

    def check_read(self, tool: str, path: Path, *, written: Path | None = None) -> None:
        """`path` is resolved; `written` is the same path as the model named it (default: `path`)."""
        self._settle(tool, "read", path, written or path)

    def check_write(
        self, tool: str, path: Path, *, written: Path | None = None, preview: PreviewBuilder | None = None
    ) -> None:
        """`path` is resolved; `written` is the same path as the model named it (default: `path`);
        `preview` builds what the question shows of the change."""
        self._settle(tool, "write", path, written or path, preview)

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
        request = PermissionRequest(tool, "write", _shown(path), reason)
        # A memory declined: work goes on.
        self._answer(Decision("ask", reason), request, preview, ends_turn=False)

    def check_shell(self, tool: str, command: str) -> None:
        decision = self.shell.decide(command, self.mode, self.rules, self._scope())
        self._answer(decision, PermissionRequest(tool, "shell", _shown_command(command), decision.reason))

    def check_tool(
        self, tool: str, shown: str, reason: str, *, changes: bool = True, read_only: bool = False
    ) -> None:
        """A tool judged by its name alone (decision.decide_tool): an MCP server's, or one that
        `changes` nothing by our own knowledge (the skill tool, a hook's question)."""
        decision = decide_tool(tool, self.mode, self.rules, reason, changes=changes, read_only=read_only)
        action: Action = "tool" if changes else "read"  # a skill's name is not input it is sent
        self._answer(decision, PermissionRequest(tool, action, _shown_command(shown), decision.reason))

    def check_fetch(self, tool: str, url: str, names: tuple[str, ...]) -> None:
        """`url` leads to the host called `names` (ASCII, then Unicode): judged by its domain."""
        decision = decide_fetch(names, self.mode, self.rules)
        self._answer(decision, PermissionRequest(tool, "fetch", visible_text(url), decision.reason))

    def hidden_from_search(self) -> SearchHiding | None:
        """What a search walk skips, as check_read would ask for or refuse it, or None when it
        may see it all (bypass without read rules): listing or grepping `~` must not read
        `~/.ssh` without a question, nor a folder a rule keeps out."""
        limited, ruled_out = self.rules.limits_reads, self.rules.keeps_out
        if self.mode == "bypass":
            return SearchHiding("", frozenset(), ruled_out) if limited else None
        private = [*self.protected_dirs, *private_places(self.home, self.project_dir)]
        return SearchHiding(
            str(self.home), frozenset(str(p) for p in private), ruled_out if limited else None
        )

    # --- deciding and asking --------------------------------------------------------------

    def _scope(self) -> Scope:
        self.scope.memory_dirs = self.memory_dirs
        return self.scope

    def _settle(
        self, tool: str, access: Literal["read", "write"], path: Path, written: Path,
        preview: PreviewBuilder | None = None,
    ) -> None:  # fmt: skip
        decision = decide_file(
            tool, access, path, written, self.mode, self.rules, self.protections, self._scope()
        )
        request = PermissionRequest(tool, access, _shown(path), decision.reason)
        # A refusal names a sensitive path as the model named it: the resolved one (shown in the
        # question) would point it at another name to try.
        told = display_path(Path(os.path.normpath(written)), self.project_dir)
        self._answer(decision, request, preview, told=told)

    def _answer(
        self, decision: Decision, request: PermissionRequest, preview: PreviewBuilder | None = None,
        *, told: str | None = None, ends_turn: bool = True,
    ) -> None:  # fmt: skip
        if decision.behaviour == "allow":
            return
        verb = _ACTION_VERBS[request.action]
        told = told if told is not None else request.target
        if decision.behaviour == "deny":
            key = "plan_mode_refused" if decision.plan else "permission_denied_by_rule"
            raise PermissionDenied(
                prompts.notice(key, tool=request.tool, verb=verb, target=told, reason=decision.reason)
            )
        if self.ask is None:
            key = "plan_mode_refused" if decision.plan else "permission_unavailable"
            raise PermissionDenied(prompts.notice(key, tool=request.tool, verb=verb, target=told))
        always = decision.always
        request = replace(request, always=always.label if always is not None else None)
        if preview is not None:
            request = replace(request, preview=_built(preview))
        answer = self.ask(request)
        log.info("permission %s %s %r (%s): %r", request.tool, request.action, request.target,
                 request.reason, answer)  # fmt: skip
        if answer == "a" and always is not None:
            self._grant(always)
            return
        if answer in ("y", "a"):
            return
        key = "permission_denied" if ends_turn else "permission_declined"
        raise PermissionDenied(
            prompts.notice(key, tool=request.tool, verb=verb, target=told), refused_by_user=ends_turn
        )

    def _grant(self, always: Always) -> None:
        if always.folder is not None:
            self.scope.read_folders.add(always.folder)
        if always.accept_edits and self.mode == "ask":
            self.set_mode_for_conversation("accept-edits")
        for text in always.rules:
            self._save(text)

    def _save(self, text: str) -> None:
        """Keep an "always" rule: saved for later sessions when it can be, for this one anyway."""
        if self.save_rule is not None:
            try:
                self.save_rule(text)
                return
            except (OSError, ValueError) as error:
                self.warn(f"Could not save the rule {visible_text(text)}: {error} (it holds this session)")
        self.add_rule(parse_rule(RuleEntry(text, "allow", "this session", self.project_dir), self.home))

    def add_rule(self, rule: Rule) -> None:
        """A rule in effect from now on (once: the same text, behaviour and source only once)."""
        if not any(r.entry == rule.entry for r in self.rules.rules):
            self.rules.rules = [*self.rules.rules, rule]

    def remove_rule(self, text: str, source: str) -> None:
        """The rule `text` that came from `source` is no longer in effect."""
        self.rules.rules = [r for r in self.rules.rules if not (r.text == text and r.entry.source == source)]


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
