"""Instruction files (CLAUDE.md and its kin, rules, `@path` imports): which are read, how safely,
and how they reach the model: the system prompt when a conversation starts, reminders after."""
