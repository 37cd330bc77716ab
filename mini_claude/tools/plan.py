"""The exit_plan_mode tool: in plan mode the model ends planning with it, carrying the plan. The
plan is saved under the project's folder (`plans/`), then shown to the user, who answers with one
key: approve and accept edits, approve and ask for each edit, or keep planning (saying what to
change). Where nobody can answer (print mode), the plan is the turn's result.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from pathlib import Path

from mini_claude.core import prompts
from mini_claude.core.errors import ToolError
from mini_claude.core.files.atomic import write_atomic
from mini_claude.core.files.private_files import FILE_MODE, private_folder
from mini_claude.core.paths import visible_path
from mini_claude.tools.base import PlanAnswer, PlanPresenter, PlanProposal, ToolContext, ToolResult

PLANS_FOLDER = "plans"
SLUG_WORDS = 6
MAX_PLAN_CHARS = 100_000  # a plan longer than this is no plan to approve at a glance

log = logging.getLogger("mini_claude")
__all__ = ["PLANS_FOLDER", "PlanAnswer", "PlanPresenter", "PlanProposal", "exit_plan_mode"]


def exit_plan_mode(ctx: ToolContext, plan: str) -> ToolResult:
    permissions = ctx.permissions
    if permissions.mode != "plan":
        raise ToolError(prompts.notice("plan_not_in_plan_mode"))
    if not plan.strip():
        raise ToolError(prompts.notice("plan_empty"))
    if len(plan) > MAX_PLAN_CHARS:
        raise ToolError(prompts.notice("plan_too_long", max=f"{MAX_PLAN_CHARS:,}"))
    saved = _save(ctx.plans_dir, plan) if ctx.plans_dir is not None else None
    if ctx.present_plan is None:
        raise ToolError(prompts.notice("plan_no_one_to_ask"))
    answer = ctx.present_plan(PlanProposal(plan, saved))
    where = visible_path(str(saved)) if saved is not None else "not saved"
    if answer.choice == "printed":
        return ToolResult(prompts.notice("plan_printed"), "plan printed", ends_turn="plan_printed")
    if answer.choice == "keep-planning":
        if not answer.words.strip():
            return ToolResult(
                prompts.notice("plan_refused"), "keep planning", is_error=True, ends_turn="refused_by_user"
            )
        return ToolResult(prompts.notice("plan_keep_planning", words=answer.words.strip()), "keep planning")
    permissions.set_mode_for_conversation(answer.choice)
    key = "plan_approved_accept_edits" if answer.choice == "accept-edits" else "plan_approved_ask"
    summary = "approved: edits accepted" if answer.choice == "accept-edits" else "approved: edits asked"
    return ToolResult(prompts.notice(key, path=where), summary)


def _save(folder: Path, plan: str) -> Path | None:
    """The plan in `folder` as `<date>-<time>-<first words>.md` (private); None when it cannot be."""
    words = re.findall(r"[a-z0-9]+", plan.lower())[:SLUG_WORDS]
    stamp = dt.datetime.now().strftime("%Y-%m-%d-%H%M%S")
    path = folder / f"{stamp}-{'-'.join(words) or 'plan'}.md"
    try:
        private_folder(folder)
        write_atomic(path, plan if plan.endswith("\n") else plan + "\n", mode=FILE_MODE)
    except OSError:
        log.exception("saving the plan to %s failed", path)
        return None
    return path
