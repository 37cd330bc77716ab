"""Hooks: commands the settings files run at fixed points of a session (Claude Code's format)."""
