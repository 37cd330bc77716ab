"""`/memory tidy [focus]` in the REPL (the flow itself: ui/commands/memory/tidy_review.py)."""

from __future__ import annotations

from mini_claude.ui.commands.memory.tidy_review import ReviewIO, build_proposal, review_and_apply
from mini_claude.ui.commands.registry import CommandContext

DIFF_STYLES = (("+++", "bold"), ("---", "bold"), ("@@", "cyan"), ("+", "green"), ("-", "red"))


def _io(ctx: CommandContext) -> ReviewIO:
    console = ctx.console

    def say(text: str) -> None:
        console.print(text, markup=False, highlight=False)

    def progress(text: str) -> None:
        console.print(text, style="dim", markup=False, highlight=False)

    def diff(lines: list[str]) -> None:
        from rich.text import Text

        # The lines were made visible by tidy_diff; a Text passes the console's gate as it is.
        styled = [
            Text(line, style=next((s for p, s in DIFF_STYLES if line.startswith(p)), "")) for line in lines
        ]
        console.print(Text("\n").join(styled), soft_wrap=True)

    return ReviewIO(say, progress, diff, ctx.confirm)


def tidy_action(ctx: CommandContext, focus: str) -> None:
    session = ctx.session
    io = _io(ctx)
    if not session.llm.configured:
        io.say("Tidy asks the model: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL).")
        return
    root = session.memories.project_root
    proposal = build_proposal(session.store, session.llm, session.settings.sessions_dir, focus, io, root)
    if proposal is not None:
        review_and_apply(session.store, proposal, io)
