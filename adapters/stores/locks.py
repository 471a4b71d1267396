"""Writer locks: ``flock`` on a lock file, released when the holder closes
it or dies (kill -9 included), so a crash never leaves a stale lock.

``flock`` belongs to the open file description, so a second open of the same
lock file conflicts even inside one process.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from tickler.shell.ports import SessionLocked


def try_lock(path: Path, *, create: bool = True) -> int | None:
    """The locked file's descriptor, or None when someone holds it (or, with
    ``create=False``, when the file is gone)."""
    flags = os.O_RDWR | os.O_CLOEXEC | (os.O_CREAT if create else 0)
    try:
        fd = os.open(path, flags, 0o644)
    except FileNotFoundError:
        if create:
            raise
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def lock_session(path: Path, session_id: str) -> int:
    """Take the session's writer lock or raise :class:`SessionLocked`."""
    fd = try_lock(path)
    if fd is None:
        raise SessionLocked(
            f"session {session_id!r} is already open for writing "
            f"(another process or handle holds {path})"
        )
    return fd


def wait_lock(path: Path) -> int:
    """Block until the lock is ours (used only for short critical sections)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd
