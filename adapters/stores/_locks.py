"""Writer locks: ``flock``, released
when the holder closes it or dies (kill -9 included), so a crash never
leaves a stale lock. The JSONL store locks the session file's own
descriptor, so an open session costs one descriptor.

``flock`` belongs to the open file description, so a second open of the same
file conflicts even inside one process. A session file is never replaced
once it exists (only appended to, or truncated back by a repair), so the
lock on the descriptor is the lock on the session. A new session file is
created empty and locked at once; whoever holds the lock on an empty file
writes its header (see ``JsonlStore``), so of two openers racing to create
a session one writes it and the other gets SessionLocked, and a crash
before the header was written leaves an empty file that the next opener
starts afresh.

The SQLite store keeps each session's lock in a lock file of its own,
which its holder removes at close, still holding the lock
(:func:`unlock_session`), so closed sessions leave no files behind. An
opener may have opened that file just before it was removed and lock it
just after: it then holds a lock on a file no longer named, while a third
opener creates and locks a new one. So :func:`lock_session` checks, once it
holds the lock, that the path still names the file it locked, and opens the
path again when not.

A journal file's lock tells whether its owner lives, so the file must never
be seen under its name unlocked: :func:`create_locked` creates it under a
*staging* name, locks it, then renames it. Whoever takes a lock by name may
also get a file its owner removed meanwhile (opened before the removal,
locked after the owner let go): :func:`still_named` tells.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from tickler.adapters.stores._files import open_nofollow, write_all
from tickler.shell import SessionLocked

_READ_WRITE = os.O_RDWR | os.O_APPEND
STAGING_SUFFIX = ".new"  # a file being created by create_locked


def try_lock(path: Path, *, create: bool = True, flags: int = os.O_RDWR) -> int | None:
    """The locked file's descriptor, or None when someone holds it (or, with
    ``create=False``, when the file is gone). A symbolic link is refused
    (:class:`~tickler.adapters.stores._files.SymlinkRefused`)."""
    flags |= os.O_CREAT if create else 0
    try:
        fd = open_nofollow(path, flags)
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


def lock_free(path: Path) -> bool:
    """Whether nobody holds the lock of ``path`` now (a missing file is
    held by nobody): taken for an instant and let go, never kept."""
    try:
        fd = open_nofollow(path, os.O_RDONLY)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # closing lets a lock taken here go
    return True


def create_locked(path: Path, staging: Path, head: bytes) -> int | None:
    """Create ``path`` holding ``head``, already locked when it appears
    under that name (it is created as ``staging``, locked, written, then
    renamed); the locked descriptor. None when a remover of dead staging
    files took ``staging`` first (it removes it: try another name). Raises
    OSError, leaving nothing behind."""
    fd = open_nofollow(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)  # the remover holding it unlinks it
        return None
    except BaseException:
        os.close(fd)
        staging.unlink(missing_ok=True)
        raise
    try:
        write_all(fd, head)
        # Missing only if a remover unlinked it before our lock (it unlinks
        # only while holding the lock, and we hold it from here on).
        staging.rename(path)
    except FileNotFoundError:
        os.close(fd)
        return None
    except BaseException:
        staging.unlink(missing_ok=True)  # still ours: we hold its lock
        os.close(fd)
        raise
    return fd


def still_named(path: Path, fd: int) -> bool:
    """Whether ``path`` still names the file open as ``fd`` (not removed,
    nor replaced, since it was opened)."""
    try:
        named = path.lstat()
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


_LOCK_TRIES = 8  # each failed try needs a holder to release in between


def lock_session(path: Path, session_id: str) -> int:
    """Take a session's writer lock held in a separate lock file (the SQLite
    store's) or raise :class:`SessionLocked`. Release it with
    :func:`unlock_session`."""
    for _ in range(_LOCK_TRIES):
        fd = open_nofollow(path, os.O_RDWR | os.O_CREAT)
        if hold_named(path, fd, session_id):
            return fd
    raise _locked(session_id, path, "it changed hands while this one tried to take it")


def hold_named(path: Path, fd: int, session_id: str) -> bool:
    """Lock ``fd``, a descriptor of the lock file ``path``: True when it is
    the session's lock now; False (``fd`` closed) when the file was removed
    since it was opened (its holder released it: open ``path`` again).
    Raises :class:`SessionLocked` (``fd`` closed) when another holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if still_named(path, fd):
            return True
    except BlockingIOError:
        os.close(fd)
        raise _locked(session_id, path) from None
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    return False


def unlock_session(path: Path, fd: int) -> None:
    """Release a lock taken by :func:`lock_session`, removing its file first
    (while it is still held, and only while ``path`` names it), so a closed
    session leaves no file. A file that cannot be removed is only left."""
    try:
        with contextlib.suppress(OSError):
            if still_named(path, fd):
                path.unlink()
    finally:
        os.close(fd)


def _locked(session_id: str, path: Path, why: str = "") -> SessionLocked:
    return SessionLocked(
        f"session {session_id!r} is already open for writing "
        f"(another process or handle holds {path}){': ' + why if why else ''}"
    )


def open_session_file(path: Path, session_id: str, *, create: bool = True) -> int:
    """The session file opened read-write for appending (created empty when
    absent, unless not ``create``: FileNotFoundError) and locked; raises
    :class:`SessionLocked` when another writer holds it, SymlinkRefused for
    a symbolic link, OSError otherwise."""
    fd = open_nofollow(path, _READ_WRITE | (os.O_CREAT if create else 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise SessionLocked(
            f"session {session_id!r} is already open for writing "
            f"(another process or handle holds {path})"
        ) from None
    except BaseException:
        os.close(fd)
        raise
    return fd
