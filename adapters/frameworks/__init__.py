"""What the agent-framework adapters share: the tool table and the conversation kept in the log."""
