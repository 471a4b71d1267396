"""Crash recovery for the JSONL store.

Two repairs, both reported (returned, and logged on ``tickler.store``):

* a session file's torn tail — a final fragment with no newline that is not
  JSON, left by a crash mid-write — is truncated away; a final line that is
  whole JSON but lacks its newline gets the newline;
* the journals of dead processes (their lock can be taken) are replayed: each
  session's missing events are appended by seq (which also completes a batch
  a crash cut short), the files synced, the journals deleted.

Any other damage raises StoreError; nothing is silently repaired. Replays run
under ``.journal/recovery.lock``, and every session open replays first, so no
writer ever builds on a file a dead process's journal still has to complete.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection
from pathlib import Path

from tickler.adapters.stores.files import Fsync, store_error, sync_dir, sync_path, write_all
from tickler.adapters.stores.locks import try_lock, wait_lock
from tickler.adapters.stores.scan import Scanned, scan_file
from tickler.adapters.stores.wal import read_records
from tickler.shell.ports import InvalidSessionId, StoreError, validate_session_id

LOG = logging.getLogger("tickler.store")


def settle_tail(fd: int, scanned: Scanned) -> list[str]:
    """Truncate a torn tail / add a missing final newline; say what was done."""
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


def replay_dead_journals(
    directory: Path, journal_dir: Path, fsync: Fsync, held: Collection[str] = ()
) -> list[str]:
    """Replay every dead journal into its session files; ``held`` are the
    sessions whose writer lock the caller already has."""
    if not journal_dir.is_dir():
        return []
    try:
        guard = wait_lock(journal_dir / "recovery.lock")
        try:
            return _replay_all(directory, journal_dir, fsync, held)
        finally:
            os.close(guard)
    except OSError as exc:
        raise store_error(f"cannot recover {directory}", exc) from exc


def _replay_all(
    directory: Path, journal_dir: Path, fsync: Fsync, held: Collection[str]
) -> list[str]:
    dead = _dead_journals(journal_dir)
    try:
        notes, failures = _replay(directory, dead, fsync, held)
        if not failures:
            for path in dead:
                path.unlink()
            if dead:
                sync_dir(journal_dir, fsync)
    finally:
        for fd in dead.values():
            os.close(fd)
    for session_id in held:
        if session_id in failures:
            raise failures[session_id]
    return notes


def _dead_journals(journal_dir: Path) -> dict[Path, int]:
    dead: dict[Path, int] = {}
    for path in sorted(journal_dir.glob("*.wal")):
        fd = try_lock(path, create=False)
        if fd is not None:
            dead[path] = fd
    return dead


def _replay(
    directory: Path, dead: dict[Path, int], fsync: Fsync, held: Collection[str]
) -> tuple[list[str], dict[str, StoreError]]:
    """Replay each session; one that cannot be replayed keeps the journals
    (for a later try) and fails only its own opens, not the store's."""
    wanted: dict[str, dict[int, bytes]] = {}
    for path in dead:
        for record in read_records(path.read_bytes()):
            lines = wanted.setdefault(record.session_id, {})
            lines.update(record.numbered())
    notes: list[str] = []
    failures: dict[str, StoreError] = {}
    for session_id, lines in wanted.items():
        try:
            validate_session_id(session_id)
        except InvalidSessionId:
            LOG.error("a journal names an invalid session %r: ignored", session_id)
            continue
        try:
            notes += _replay_session(directory, session_id, lines, fsync, held)
        except StoreError as exc:
            LOG.error("cannot recover session %r: %s", session_id, exc)
            failures[session_id] = exc
    return notes, failures


def _replay_session(
    directory: Path, session_id: str, lines: dict[int, bytes], fsync: Fsync, held: Collection[str]
) -> list[str]:
    path = directory / f"{session_id}.jsonl"
    if not path.exists():
        LOG.error("a journal has events for %s, which no longer exists: ignored", path)
        return []
    lock = None if session_id in held else try_lock(directory / ".locks" / f"{session_id}.lock")
    if lock is None and session_id not in held:
        # A live writer opened it after the journal's owner died (it replayed
        # first), so the file holds everything: only make that durable.
        sync_path(path, fsync)
        return []
    try:
        return _complete(path, lines, fsync)
    finally:
        if lock is not None:
            os.close(lock)


def _complete(path: Path, lines: dict[int, bytes], fsync: Fsync) -> list[str]:
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
    try:
        scanned = scan_file(fd, path)
        notes = settle_tail(fd, scanned)
        missing: list[bytes] = []
        while (line := lines.get(scanned.length + len(missing))) is not None:
            missing.append(line)
        beyond = [seq for seq in lines if seq >= scanned.length + len(missing)]
        if beyond:
            raise StoreError(
                f"{path}: the journal holds seq {min(beyond)} but the file ends at seq "
                f"{scanned.length + len(missing)}: events are missing"
            )
        if missing:
            write_all(fd, b"".join(missing))
            notes.append(
                f"{path}: replayed events {scanned.length}-{scanned.length + len(missing) - 1} "
                "from the journal"
            )
            LOG.warning("recovered %s", notes[-1])
        fsync(fd)
        return notes
    finally:
        os.close(fd)
