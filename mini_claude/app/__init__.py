"""Building one session from its parts (settings, memory, tools, permissions), resuming, the system prompt."""
