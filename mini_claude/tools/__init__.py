"""The tools the model can call: file reading and editing, search, and the shell.

`registry.default_registry()` builds the standard set; `base` holds what every tool shares.
"""
