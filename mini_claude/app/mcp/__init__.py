"""MCP servers for a session: where they are configured (`files`), which may start (`approvals`),
and starting them beside the prompt (`servers`)."""
