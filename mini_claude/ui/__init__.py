"""The terminal front end: the REPL, the event renderer and slash commands."""
