"""Cross-session memory: typed memory files, the MEMORY.md index, and recall."""
