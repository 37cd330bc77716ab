"""The transcript files: their format, their folder, and writing them as a session goes."""
