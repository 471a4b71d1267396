"""Delivery targets: hosts that hand due reminders to a command, a URL or a Python function."""
