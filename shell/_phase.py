"""Where a runtime is in its life: its own module, so that the telemetry that
observes runtimes reads it without importing the runtime (which imports the
telemetry)."""

from __future__ import annotations

import enum


class Phase(enum.Enum):
    """Where a runtime is in its life; it only moves forward."""

    NEW = "new"  # built; start() loads the session
    RUNNING = "running"  # answering tools, delivering what falls due
    FAULTED = "faulted"  # the log is corrupt: tools answer corrupt_schedule_log, no delivery
    LOST = "lost"  # another process took the session's lease: no delivery
    STOPPING = "stopping"  # dispose() runs
    STOPPED = "stopped"
