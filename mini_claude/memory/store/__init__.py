"""The memory folder: files, headers, the MEMORY.md index, names and validation."""
