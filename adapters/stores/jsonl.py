"""The embedded default store: one JSONL file per session in a directory.

``<dir>/<session>.jsonl`` is in the harness layout (header line, then one
compact ``{"type","seq","time","data"}`` line per event, ``data`` written
verbatim), so the harness and ``tickler.core.parse_session_jsonl`` read it.
Beside it: ``.locks/<session>.lock`` (the writer's flock), ``.journal/``
(the write-ahead journal that gives group commit, see
:mod:`tickler.adapters.stores.journal`) and ``<session>.snapshot``.

* ``append`` = one ``write`` of the batch to the session file; a copy is
  logged for the journal (written first when kill -9 could cut the batch in
  two). If a write fails, what was written is truncated back.
* ``flush`` = wait for a commit round (one journal write and sync shared by
  every session and batch in flight); free when nothing new was appended.
* Reopening reads the header and counts the events, validating each line and
  keeping a sparse offset index; ``events(start)`` re-reads the file from the
  nearest indexed offset. Only the header, the counts and the index stay in
  memory, whatever the session's length.
"""

from __future__ import annotations

import asyncio
import mmap
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from tickler.adapters.stores.committer import GroupCommit, close_all
from tickler.adapters.stores.files import (
    Fsync,
    make_dir,
    replace_atomically,
    store_error,
    write_all,
)
from tickler.adapters.stores.journal import DEFAULT_LIMIT, Journal
from tickler.adapters.stores.lines import decode_line, encode_batch, header_line
from tickler.adapters.stores.locks import lock_session
from tickler.adapters.stores.recovery import LOG, replay_dead_journals, settle_tail
from tickler.adapters.stores.scan import STRIDE, Scanned, scan_file
from tickler.adapters.stores.snapshotfile import decode_snapshot, encode_snapshot
from tickler.core import SessionEvent, SessionHeader
from tickler.shell.ports import (
    InvalidSessionId,
    NewEvent,
    Snapshot,
    StoreError,
    validate_session_id,
)

PAGE = mmap.PAGESIZE


class JsonlLog:
    """One session file, held by this writer until :meth:`close`."""

    def __init__(self, store: JsonlStore, fd: int, lock: int, scanned: Scanned) -> None:
        assert scanned.header is not None
        self._store = store
        self._fd = fd
        self._lock = lock
        self._path = scanned.path
        self._header = scanned.header
        self._length = scanned.length
        self._size = scanned.end
        self._index = scanned.index
        self._position = 0  # the number of our last journal record
        self._based = False  # the file as opened is synced (see Journal.need_base)
        self._broken: str | None = None
        self._closed = False
        self.recovered: tuple[str, ...] = ()
        """What opening repaired (torn tail, events replayed from a journal)."""

    @property
    def header(self) -> SessionHeader:
        return self._header

    @property
    def length(self) -> int:
        return self._length

    @property
    def path(self) -> Path:
        return self._path

    def events(self, start: int = 0) -> Iterator[SessionEvent]:
        if start >= self._length:
            return iter(())
        block = max(start, 0) // STRIDE
        return _read_events(self._path, self._index[block], block * STRIDE, start, self._length)

    async def append(self, batch: Sequence[NewEvent]) -> tuple[SessionEvent, ...]:
        self._check_writable()
        added, lines = encode_batch(self._length, batch)
        if not added:
            return added
        data = b"".join(lines)
        journal = self._store._journal
        if not self._based:
            journal.need_base(self._fd)
            self._based = True
        # Lines across a page boundary could be cut apart by kill -9: log
        # them before the session file, so recovery can complete the batch.
        first = len(lines) > 1 and self._size // PAGE != (self._size + len(data) - 1) // PAGE
        position = journal.log(self._header.id, self._fd, self._length, data, first=first)
        try:
            write_all(self._fd, data)
        except OSError as exc:
            self._roll_back()
            journal.unlog()
            raise store_error(f"cannot append to {self._path}", exc) from exc
        self._position = position
        self._note_offsets(lines)
        return added

    async def flush(self) -> None:
        if self._position <= self._store._journal.synced:
            return
        await self._store._committer.barrier()

    def load_snapshot(self) -> Snapshot | None:
        try:
            raw = self._snapshot_path.read_bytes()
        except FileNotFoundError:
            return None
        snapshot = decode_snapshot(raw)
        if snapshot is None:
            LOG.warning("ignored a damaged snapshot %s", self._snapshot_path)
        elif snapshot.through > self._length:
            LOG.warning(
                "ignored the snapshot %s: through %d is beyond the log's %d events",
                self._snapshot_path,
                snapshot.through,
                self._length,
            )
            return None
        return snapshot

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        if not 0 <= snapshot.through <= self._length:
            raise StoreError(f"a snapshot through {snapshot.through} is beyond {self._length}")
        await self.flush()  # never durable ahead of the events it covers
        data = encode_snapshot(snapshot)
        try:
            await asyncio.to_thread(replace_atomically, self._snapshot_path, data, self._fsync)
        except OSError as exc:
            raise store_error(f"cannot save {self._snapshot_path}", exc) from exc

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await self.flush()
        finally:
            os.close(self._fd)
            os.close(self._lock)
            self._store.forget(self)

    @property
    def _snapshot_path(self) -> Path:
        return self._path.with_suffix(".snapshot")

    @property
    def _fsync(self) -> Fsync:
        return self._store.fsync

    def _check_writable(self) -> None:
        if self._closed:
            raise StoreError(f"session {self._header.id!r} is closed")
        if self._broken is not None:
            raise StoreError(self._broken)

    def _roll_back(self) -> None:
        try:
            os.ftruncate(self._fd, self._size)
        except OSError as exc:
            self._broken = f"{self._path} could not be rolled back after a failed write: {exc}"

    def _note_offsets(self, lines: list[bytes]) -> None:
        for line in lines:
            if self._length % STRIDE == 0:
                self._index.append(self._size)
            self._length += 1
            self._size += len(line)


def _read_events(path: Path, offset: int, seq: int, start: int, end: int) -> Iterator[SessionEvent]:
    with path.open("rb") as file:
        file.seek(offset)
        for line in file:
            if seq >= end:
                return
            if not line.strip():
                continue
            if seq >= start:
                yield decode_line(line)
            seq += 1


class JsonlStore:
    """A directory of session files; see the module docstring.

    ``fsync`` is called for every sync (files, directories, the journal);
    ``journal_limit`` is the journal size that triggers a checkpoint.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        fsync: Fsync = os.fsync,
        journal_limit: int = DEFAULT_LIMIT,
    ) -> None:
        self.directory = Path(directory)
        self.fsync = fsync
        self._logs: set[JsonlLog] = set()
        self._closed = False
        try:
            make_dir(self.directory / ".locks", fsync)
        except OSError as exc:
            raise store_error(f"cannot create {self.directory}", exc) from exc
        self.recovered: tuple[str, ...] = tuple(
            replay_dead_journals(self.directory, self._journal_dir, fsync)
        )
        """What opening the store repaired from dead processes' journals."""
        self._journal = Journal(self._journal_dir, fsync, journal_limit)
        self._committer = GroupCommit(self._journal.commit)

    async def open(self, session_id: str, *, created_at: int) -> JsonlLog:
        validate_session_id(session_id)
        if self._closed:
            raise StoreError("the store is closed")
        log = await asyncio.to_thread(self._open, session_id, created_at)
        self._logs.add(log)
        return log

    def session_ids(self) -> list[str]:
        return sorted(path.stem for path in self.directory.glob("*.jsonl") if _valid(path.stem))

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await close_all(self._logs)
        finally:
            await self._committer.idle()
            try:
                await asyncio.to_thread(self._journal.close)
            except OSError as exc:
                raise store_error("cannot checkpoint the journal on close", exc) from exc

    def forget(self, log: JsonlLog) -> None:
        self._logs.discard(log)

    @property
    def _journal_dir(self) -> Path:
        return self.directory / ".journal"

    def _open(self, session_id: str, created_at: int) -> JsonlLog:
        lock = lock_session(self.directory / ".locks" / f"{session_id}.lock", session_id)
        fd = -1
        try:
            notes = replay_dead_journals(
                self.directory, self._journal_dir, self.fsync, held={session_id}
            )
            path = self.directory / f"{session_id}.jsonl"
            if not path.exists():
                header = SessionHeader(id=session_id, created_at=created_at)
                replace_atomically(path, header_line(header), self.fsync)
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
            scanned = _scan_own(fd, path, session_id)
            notes += settle_tail(fd, scanned)
            if notes:
                self.fsync(fd)  # a repair is durable before anything builds on it
        except BaseException as exc:
            if fd >= 0:
                os.close(fd)
            os.close(lock)
            if isinstance(exc, OSError):
                raise store_error(f"cannot open session {session_id!r}", exc) from exc
            raise
        log = JsonlLog(self, fd, lock, scanned)
        log.recovered = tuple(notes)
        return log


def _valid(session_id: str) -> bool:
    try:
        validate_session_id(session_id)
    except InvalidSessionId:
        return False
    return True


def _scan_own(fd: int, path: Path, session_id: str) -> Scanned:
    scanned = scan_file(fd, path)
    if scanned.header is None:
        raise StoreError(f"{path}: line 1: missing session header")
    if scanned.header.id != session_id:
        raise StoreError(f"{path}: line 1: the header names session {scanned.header.id!r}")
    return scanned
