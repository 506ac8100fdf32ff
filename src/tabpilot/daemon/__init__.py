"""The tabpilot daemon: one per user, between CLI/MCP clients and browser extensions."""
