"""The targets of the cold bench's processes, noting the wall time of each
call first, in one line appended to the file named by
``TICKLER_BENCH_NOTES`` (one ``write`` each, so the bench reads whole lines
while the process runs):

* ``note``, the ``tickler worker --deliver bench.cold.target:note`` target:
  ``<wall ns> <key> <session>`` per follow-up handed over;
* ``fired``, the function APScheduler's date jobs run: ``<wall ns>
  <target ms> aps`` per job run.

The standard library only, so that neither process imports more than it
would to call its own target."""

from __future__ import annotations

import os
import threading
import time
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from tickler.shell._host import FollowUp

NOTES_ENV: Final = "TICKLER_BENCH_NOTES"
# Opened when the process imports it (the bench itself imports only the names).
_FD: Final = (
    os.open(os.environ[NOTES_ENV], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    if NOTES_ENV in os.environ
    else -1
)
_CALLS: list[float] = []  # process CPU seconds at each call (APScheduler's side)
_LOCK: Final = threading.Lock()


async def note(message: FollowUp, session: str) -> None:
    """Delivered: the wall time, before anything else."""
    now = time.time_ns()
    os.write(_FD, f"{now} {message.key} {session}\n".encode())


def fired(target_ms: float) -> None:
    """A job ran (in one of APScheduler's threads)."""
    now = time.time_ns()
    os.write(_FD, f"{now} {target_ms!r} aps\n".encode())
    with _LOCK:
        _CALLS.append(time.process_time())


def fired_cpu() -> list[float]:
    """The process's CPU time at each ``fired`` call so far, seconds."""
    with _LOCK:
        return list(_CALLS)
