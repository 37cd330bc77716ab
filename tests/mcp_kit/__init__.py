"""MCP servers written with the SDK's MCPServer (`servers.py`) and what the tests share about them."""
