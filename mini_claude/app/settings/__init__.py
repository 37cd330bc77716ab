"""Settings files (user, project, local; Claude Code's `.claude/` twins; `--settings`), read once
at start into plain values; and folder trust, which decides whether a project's files may do
more than instruct."""
