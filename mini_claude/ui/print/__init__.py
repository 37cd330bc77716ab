"""Print mode (`-p`): one message to completion, the answer on stdout, JSON output formats."""
