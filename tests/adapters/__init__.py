"""Adapter tests: agent frameworks and MCP, driven by their real machinery."""
