"""Crash recovery for the JSONL store.

Two repairs, both reported (returned, and logged on ``tickler.store``):

* a session file's torn tail — a final fragment with no newline that is not
  JSON, left by a crash mid-write — is truncated away, but only when a dead
  journal holds the event it cut (the replay then writes it back whole); a
  final line that is whole JSON but lacks its newline gets the newline;
* the journals of dead processes (their lock can be taken) are replayed: each
  session's missing events are appended by seq (which also completes a batch
  a crash cut short), the files synced and their lengths recorded (see
  :mod:`~tickler.adapters.stores._lengthfile`), the journals deleted.

A live journal is never taken for dead: its owner creates it locked (see
:func:`~tickler.adapters.stores._locks.create_locked`), and a journal whose
lock is taken only after its owner checkpointed it, removed it and let go
(it was opened just before) is no longer under its name: it is skipped, its
events being in synced session files. Dead staging files (a crash while
creating a journal: no record in them) are removed.

Lines reach a session file only after their journal record was written, and
a journal is deleted only after the files it covers were synced (see the
journal's "Written at the round"), so a crash cut always has its record in
a dead journal. A torn tail that no journal covers was cut after the file
was written and closed: it is damage. That, a damaged journal (see
:func:`~tickler.adapters.stores._wal.scan_journal`) and any other damage
raise :class:`~tickler.adapters.stores._files.CorruptStore` (or StoreError);
nothing is silently repaired, and a journal is deleted only when every
session it names was replayed in full. Replays run
under the recovery lock (see :class:`Recovery`), and every session open
replays first, so no writer ever builds on a file a dead process's journal
still has to complete.
A session is replayed only under its writer lock (the flock on its file):
the opener's own, or one taken for the replay.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from collections.abc import Collection, Mapping
from pathlib import Path

from tickler.adapters.stores._files import (
    CorruptStore,
    Fsync,
    make_dir,
    open_dir,
    store_error,
    sync_dir,
    sync_path,
    write_all,
)
from tickler.adapters.stores._lengthfile import length_path, read_length, write_length
from tickler.adapters.stores._locks import STAGING_SUFFIX, still_named, try_lock
from tickler.adapters.stores._scan import Scanned, line_number, scan_file
from tickler.adapters.stores._wal import Record, scan_journal
from tickler.shell import InvalidSessionId, StoreError, validate_session_id

LOG = logging.getLogger("tickler.store")


def settle_tail(fd: int, scanned: Scanned, *, covered: bool) -> list[str]:
    """Truncate a torn tail (``covered``: a dead journal holds the event it
    cut) / add a missing final newline; say what was done. Raises
    CorruptStore, changing nothing, for a torn tail no journal covers."""
    refuse_torn(fd, scanned, covered=covered)
    notes: list[str] = []
    if scanned.torn is not None:
        os.ftruncate(fd, scanned.end)
        notes.append(
            f"{scanned.path}: dropped a torn final line ({len(scanned.torn)} bytes, "
            "no newline, not JSON: a crash mid-write)"
        )
        scanned.torn = None
    if scanned.missing_newline:
        write_all(fd, b"\n")
        scanned.end += 1
        scanned.missing_newline = False
        notes.append(f"{scanned.path}: completed the final line with its newline")
    for note in notes:
        LOG.warning("recovered %s", note)
    return notes


def refuse_torn(fd: int, scanned: Scanned, *, covered: bool) -> None:
    """Raise CorruptStore for a torn tail no journal covers."""
    if scanned.torn is not None and not covered:
        raise CorruptStore(
            scanned.path,
            line_number(fd, scanned.end),
            f"torn final line ({len(scanned.torn)} bytes, no newline, not JSON) that no "
            "journal covers: the file was cut after it was written, not by a crash",
        )


def check_length(fd: int, scanned: Scanned) -> int:
    """The count the session file's length file records (0: none); raises
    CorruptStore, changing nothing, when the file holds fewer events (see
    :mod:`~tickler.adapters.stores._lengthfile`)."""
    path = length_path(scanned.path)
    recorded = read_length(path)
    if recorded is None:
        return 0
    if scanned.length < recorded:
        raise CorruptStore(
            scanned.path, line_number(fd, scanned.end), cut_reason(scanned.length, recorded, path)
        )
    return recorded


def cut_reason(length: int, recorded: int, path: Path) -> str:
    """Why a session file holding ``length`` events is corrupt when its
    length file ``path`` records ``recorded``."""
    return (
        f"the file holds {length} events but {recorded} were confirmed ({path.name} records "
        f"{recorded}): whole lines were cut from its end after they were written"
    )


class Recovery:
    """Replays the dead journals of a store's directory.

    Replays run under the recovery lock: ``flock`` on the journal
    directory's own descriptor, held open by the store (so checking for dead
    journals at every session open needs no descriptor but the ones it
    probes), and a thread lock (the threads of one process share that open
    file description, and with it the flock)."""

    def __init__(self, directory: Path, journal_dir: Path, fsync: Fsync) -> None:
        self.directory = directory
        self.journal_dir = journal_dir
        self._fsync = fsync
        make_dir(journal_dir, fsync)
        self.dir_fd = open_dir(journal_dir, follow=False)
        self._lock = threading.Lock()

    def replay(
        self, held: Mapping[str, int] | None = None, fresh: Collection[str] = ()
    ) -> list[str]:
        """Replay every dead journal into its session files; what was
        repaired. ``held`` maps the sessions whose file the caller holds
        (locked) to its descriptor; ``fresh`` are sessions whose file the
        caller just created (a dead journal's events for an earlier file of
        that name are not replayed). Raises StoreError when a held session
        cannot be replayed (the others fail only their own opens)."""
        with self._lock:
            try:
                fcntl.flock(self.dir_fd, fcntl.LOCK_EX)
                try:
                    return _replay_all(self, held or {}, fresh)
                finally:
                    fcntl.flock(self.dir_fd, fcntl.LOCK_UN)
            except OSError as exc:
                raise store_error(f"cannot recover {self.directory}", exc) from exc

    def close(self) -> None:
        os.close(self.dir_fd)


def _replay_all(recovery: Recovery, held: Mapping[str, int], fresh: Collection[str]) -> list[str]:
    directory, fsync = recovery.directory, recovery._fsync
    _remove_dead_staging(recovery.journal_dir)
    dead = _dead_journals(recovery.journal_dir)
    try:
        records = _read_dead(dead)  # raises CorruptStore before anything changed
        notes, failures = _replay(directory, records, fsync, held, fresh)
        if not failures:
            for path in dead:
                # Ours to delete (locked and still named): nobody else may.
                path.unlink(missing_ok=True)
            if dead:
                fsync(recovery.dir_fd)
    finally:
        for fd in dead.values():
            os.close(fd)
    for session_id in held:
        if session_id in failures:
            raise failures[session_id]
    return notes


def _dead_journals(journal_dir: Path) -> dict[Path, int]:
    """The dead journals, oldest first per owner (a later record of the same
    seq wins: records not known durable are written again to the next
    generation after a failed sync)."""
    dead: dict[Path, int] = {}
    for path in sorted(journal_dir.glob("*.wal"), key=journal_order):
        fd = try_lock(path, create=False)
        if fd is None:
            continue
        try:
            named = still_named(path, fd)
        except BaseException:
            os.close(fd)
            raise
        if named:
            dead[path] = fd
        else:
            # Opened just before its owner checkpointed, deleted and closed
            # it: its events are in synced session files, nothing to replay.
            os.close(fd)
    return dead


def _remove_dead_staging(journal_dir: Path) -> None:
    """Remove the staging files of journals whose creation a crash cut (their
    lock can be taken); they hold no record. A live creator that loses its
    staging file to us tries another name."""
    for path in journal_dir.glob(f"*{STAGING_SUFFIX}"):
        fd = try_lock(path, create=False)
        if fd is None:
            continue
        try:
            path.unlink(missing_ok=True)
        finally:
            os.close(fd)


def _read_dead(dead: dict[Path, int]) -> list[Record]:
    """Every record of the dead journals, in order; CorruptStore for a
    damaged journal (kept, like every other, for whoever repairs it)."""
    records: list[Record] = []
    for path, fd in dead.items():
        scan = scan_journal(_read_all(fd))
        if scan.damage is not None:
            raise CorruptStore(
                path,
                0,
                f"byte {scan.damage.offset}: {scan.damage.reason}; the records after it "
                "cannot be replayed, so no journal was replayed nor deleted",
            )
        for record in scan.records:
            try:
                validate_session_id(record.session_id)
            except InvalidSessionId:
                raise CorruptStore(
                    path, 0, f"a record names an invalid session {record.session_id!r}"
                ) from None
        records += scan.records
    return records


def _read_all(fd: int) -> bytes:
    parts: list[bytes] = []
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        parts.append(chunk)
        offset += len(chunk)
    return b"".join(parts)


def journal_order(path: Path) -> tuple[str, int]:
    owner, _, number = path.stem.rpartition("-")
    return (owner, int(number)) if number.isdigit() else (path.stem, 0)


def _replay(
    directory: Path,
    records: list[Record],
    fsync: Fsync,
    held: Mapping[str, int],
    fresh: Collection[str],
) -> tuple[list[str], dict[str, StoreError]]:
    """Replay each session; one that cannot be replayed keeps the journals
    (for a later try) and fails only its own opens, not the store's."""
    wanted: dict[str, dict[int, bytes]] = {}
    for record in records:
        lines = wanted.setdefault(record.session_id, {})
        lines.update(record.numbered())
    notes: list[str] = []
    failures: dict[str, StoreError] = {}
    for session_id, lines in wanted.items():
        try:
            notes += _replay_session(directory, session_id, lines, fsync, held=held, fresh=fresh)
        except StoreError as exc:
            LOG.error("cannot recover session %r: %s", session_id, exc)
            failures[session_id] = exc
    return notes, failures


def _replay_session(
    directory: Path,
    session_id: str,
    lines: dict[int, bytes],
    fsync: Fsync,
    *,
    held: Mapping[str, int],
    fresh: Collection[str],
) -> list[str]:
    path = directory / f"{session_id}.jsonl"
    if session_id in fresh or not path.exists():
        LOG.error("a journal has events for %s, which no longer exists: ignored", path)
        return []
    fd = held.get(session_id)
    if fd is not None:
        return _complete(path, fd, lines, fsync)
    fd = try_lock(path, create=False, flags=os.O_RDWR | os.O_APPEND)
    if fd is None:
        if path.exists():
            # A live writer opened it after the journal's owner died (it
            # replayed first), so the file holds everything: only make that
            # durable.
            sync_path(path, fsync)
        return []
    try:
        return _complete(path, fd, lines, fsync)
    finally:
        os.close(fd)


def _complete(path: Path, fd: int, lines: dict[int, bytes], fsync: Fsync) -> list[str]:
    """Replay a session's missing events from the journal lines, sync the
    file, and record its length (the journal goes next)."""
    scanned = scan_file(fd, path)
    missing: list[bytes] = []
    while (line := lines.get(scanned.length + len(missing))) is not None:
        missing.append(line)
    complete = scanned.length + len(missing)
    beyond = [seq for seq in lines if seq >= complete]
    if beyond:
        raise CorruptStore(
            path,
            0,
            f"the journal holds seq {min(beyond)} but the file ends at seq "
            f"{complete}: events are missing",
        )
    refuse_torn(fd, scanned, covered=scanned.length in lines)
    recorded = read_length(length_path(path))
    if recorded is not None and complete < recorded:
        raise CorruptStore(
            path, line_number(fd, scanned.end), cut_reason(complete, recorded, length_path(path))
        )
    notes = settle_tail(fd, scanned, covered=scanned.length in lines)
    if missing:
        write_all(fd, b"".join(missing))
        notes.append(f"{path}: replayed events {scanned.length}-{complete - 1} from the journal")
        LOG.warning("recovered %s", notes[-1])
    fsync(fd)
    if write_length(length_path(path), complete, fsync):
        sync_dir(path.parent, fsync)
    return notes
