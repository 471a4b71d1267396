"""The read model over every store: the reminders and deliveries of every session, read-only."""
