"""Skills and custom commands: Markdown files that become `/name` and, for skills, a tool."""
