"""The MCP server for one session and its stdio transport."""
