"""Slash commands: the registry that drives /help and completion, and each command."""
