"""`/memory` (command.py registers it) and its actions: search, rm, undo, tidy with its review."""
