"""mini-claude: a terminal coding agent with a cross-session memory."""

__version__ = "0.1.0"
