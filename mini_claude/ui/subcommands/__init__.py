"""The shell subcommands that need no model: `mini-claude memory ...` and `mini-claude sessions ...`."""
