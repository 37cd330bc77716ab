"""MCP servers' tools, resources and prompts: configuration (`config`), the connections on a
background event loop (`manager`, `connection`, `transports`), their tools as ours (`adapter`,
`tool_search`) and what they send back (`results`)."""
