"""Sub-agent types: built in, and from Claude Code's agent files."""
