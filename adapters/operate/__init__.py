"""Operator actions on one reminder (pause, resume, snooze, cancel, deliver now) over any store."""
