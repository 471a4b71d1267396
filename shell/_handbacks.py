"""Jobs on other threads whose results the event loop waits for.

A thread that finished a job (a store's fsync) needs the GIL to hand its
result back to the loop, and so does a thread that is handed a job, to
start it. While the timer heap yields to the loop just before a target,
the loop's thread releases the GIL only to take it straight back, and
CPython hands it to a waiting thread on request only after its switch
interval (5 ms): such a thread would wait for the whole yield. So a store
counts the jobs it hands to its threads here, and the heap pauses its
thread between yields while any is out (and only then: a pause stops the
whole loop for its length).
"""

from __future__ import annotations

import threading
from typing import Final


class HandBacks:
    """How many jobs other threads hold for an event loop (any loop of the
    process: the GIL is the process's)."""

    __slots__ = ("_count", "_lock")

    def __init__(self) -> None:
        self._count = 0
        self._lock = threading.Lock()  # started on a loop, finished on it or on the thread

    def started(self) -> None:
        """A job was handed to another thread; its result will come back."""
        with self._lock:
            self._count += 1

    def finished(self) -> None:
        """A job's result came back (or never will: its loop was closed)."""
        with self._lock:
            self._count -= 1

    @property
    def out(self) -> int:
        """How many jobs are out."""
        return self._count

    def __bool__(self) -> bool:
        """Whether any job is out."""
        return self._count > 0


HAND_BACKS: Final = HandBacks()
