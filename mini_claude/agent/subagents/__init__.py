"""Sub-agents: the `agent` tool, and running one task in a fresh context."""
