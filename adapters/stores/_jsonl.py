"""The embedded default store: one JSONL file per session in a directory.

``<dir>/<session>.jsonl`` is in the harness layout (header line, then one
compact ``{"type","seq","time","data"}`` line per event, ``data`` written
verbatim), so the harness and ``tickler.core.parse_session_jsonl`` read it.
Beside it: ``<session>.snapshot``, ``<session>.length`` (how many events the
file durably holds, see :mod:`tickler.adapters.stores._lengthfile`) and
``.journal/`` (the write-ahead journal that gives group commit, see
:mod:`tickler.adapters.stores._journal`).

* One descriptor per open session: the session file, opened read-write for
  appending, whose ``flock`` is also the writer lock (see
  :mod:`tickler.adapters.stores._locks`). Nothing else is held per session;
  reading events opens the file for the read's duration.
* ``append`` logs the batch for the journal and keeps its lines in memory;
  the next commit round writes them to the session file, after the journal
  (see the journal's "Written at the round"). ``events`` reads lines not
  written yet from memory.
* ``flush`` = wait for a commit round (one journal write and sync shared by
  every session and batch in flight); free when nothing new was appended.
* ``close`` syncs the session file when the journal still counts on it, and
  records its length when it grew.
* Reopening reads the header and counts the events, validating each line and
  keeping a sparse offset index; ``events(start)`` re-reads the file from the
  nearest indexed offset. A file the harness wrote opens too: its packed
  chunk rows (one line for several ``assistant/chunk`` events), JavaScript's
  numbers (``"seq":1.0``) and lines nested at any depth read exactly as
  :func:`tickler.core.parse_session_jsonl` reads them, and appends continue
  its ``seq``. This store itself writes one event per line. Only the
  header, the counts and the index stay in memory, whatever the session's
  length.
* With a snapshot that records its anchor (event ``through`` starts at byte
  ``offset``, see :mod:`tickler.adapters.stores._snapshotfile`), reopening
  reads and validates only the lines after ``offset``: it trusts the
  ``through`` events before it — validated when this store wrote them, or
  when an earlier open read them — once it has checked that the file still
  holds, just before ``offset``, the bytes the snapshot saw there (a
  checksum of up to 4 KiB ending in a newline). Those earlier events are
  validated and indexed the first time ``events(start)`` reaches before
  ``through`` (a damaged line then raises StoreError there). ``tickler
  check`` (``parse_session_jsonl``) always validates the whole file.
* Corruption is reported, never repaired (:class:`CorruptStore`, a
  StoreError): a bad line, a torn final line no dead journal covers (see
  :mod:`~tickler.adapters.stores._recovery`), a damaged dead journal, a
  snapshot covering more events than the file holds, a file holding fewer
  events than its length file records (whole lines cut from its end). The open fails and
  nothing is changed.
* Every store file is opened without following symbolic links (a link is
  refused, :class:`SymlinkRefused`), so a planted link cannot make the store
  read or write outside its directory. A snapshot's temporary file that a
  crash left behind is removed when its session is next opened.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from array import array
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Final, TypeVar

import msgspec
import xxhash

from tickler.adapters.stores import _wakes as wakes
from tickler.adapters.stores._committer import close_all
from tickler.adapters.stores._files import (
    CorruptStore,
    Fsync,
    make_dir,
    open_dir,
    read_nofollow,
    reader,
    replace_atomically,
    store_error,
    temp_path,
    write_all,
)
from tickler.adapters.stores._journal import DEFAULT_LIMIT, DEFAULT_ZERO_AHEAD, Journal, SessionFile
from tickler.adapters.stores._lines import encode_batch, header_line
from tickler.adapters.stores._lock_wait import DEFAULT_LOCK_WAIT_S, LockWait
from tickler.adapters.stores._locks import lock_free, open_session_file
from tickler.adapters.stores._log_base import StoreLog
from tickler.adapters.stores._recovery import (
    LOG,
    Recovery,
    check_length,
    refuse_torn,
    settle_tail,
)
from tickler.adapters.stores._scan import STRIDE, Scanned, is_json, scan_file, scan_prefix
from tickler.adapters.stores._snapshotfile import (
    WINDOW,
    Anchor,
    anchor_for,
    anchor_of,
    decode_snapshot,
    encode_snapshot,
    read_head,
    through_of,
)
from tickler.adapters.stores._wake_claims import Claims
from tickler.adapters.stores._wake_file import WakeFile, WakeNotes, changed_behind
from tickler.adapters.stores._wake_log import HeldWake
from tickler.core import PACKED_TYPES, SessionEvent, SessionHeader, decode_record_line
from tickler.shell import (
    NewEvent,
    SessionLocked,
    Snapshot,
    StoreError,
    is_valid_session_id,
    validate_session_id,
)

_TORN_HEADER_LIMIT = 1 << 16  # a longer first line is no header a crash cut
# Guards building a log's prefix index (rare: a read before a snapshot's
# anchor); one lock for all logs, so an open session costs none.
_PREFIX_LOCK = threading.Lock()
# Shared by the sessions that have none (never changed: see JsonlLog).
_NO_ROWS: Final[Mapping[int, int]] = MappingProxyType({})
_NO_BLOCKS: Final[frozenset[int]] = frozenset()
_NO_PREFIX: Final = array("q")  # the index before event 0
_EVENT = msgspec.json.Decoder(SessionEvent)
_FAST_FAILS = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)
T = TypeVar("T")


class JsonlLog(StoreLog, HeldWake):
    """One session file, held by this writer until :meth:`close` (and marked
    held in the wake index meanwhile)."""

    def __init__(
        self,
        store: JsonlStore,
        file: SessionFile,
        scanned: Scanned,
        *,
        based: bool,
        stale_snapshot: bool = False,
        holder: str = "",
        held: wakes.Held = wakes.NOT_HELD,
        size: int | None = None,
        known_valid: bool = False,
    ) -> None:
        assert scanned.header is not None
        self._store = store
        self._hold(holder, held, scanned.length, size)  # its row in the wake index
        self._journal = store._journal
        self._file = file
        # a str, not a Path: kept by every open session (shared with its file)
        self._path = str(scanned.path) if file.path is None else file.path
        self._header = scanned.header
        self._length = scanned.length
        self._size = scanned.end
        # Event ``_first`` starts at ``_first_offset``; ``_index`` holds the
        # offsets of the events numbered STRIDE * (``_index_from`` + i).
        self._first, self._first_offset = scanned.first, scanned.start
        self._index = scanned.index
        self._index_from = scanned.index_from
        # block -> the seq its index entry's line starts at, when the block's
        # event is inside a packed row (a harness's file; prefix blocks too).
        # Most sessions have none: one shared empty value instead of a dict
        # and a set each (about 280 bytes); replaced, never changed, when
        # the prefix adds some (a reader on another thread sees either).
        self._row_starts: Mapping[int, int] = scanned.row_starts or _NO_ROWS
        packed = scanned.packed_blocks
        self._packed_blocks: frozenset[int] = frozenset(packed) if packed else _NO_BLOCKS
        # The index before ``_first``: built (validating) when first needed.
        self._prefix: array[int] | None = None if scanned.first else _NO_PREFIX
        # The lines before _first are valid: read so (the prefix is built),
        # or as the close that left them said (known_valid).
        self._prefix_valid = known_valid
        self._position = 0  # the number of our last journal record
        self._based = based  # the file as opened is durable (see Journal.need_base)
        self._stale_snapshot = stale_snapshot  # its anchor no longer matches the file
        self._saving: asyncio.Lock | None = None  # one snapshot write at a time (its temp file)
        self._closed = False
        self.recovered: tuple[str, ...] = ()
        """What opening repaired (torn tail, events replayed from a journal)."""

    @property
    def length(self) -> int:
        return self._length

    @property
    def path(self) -> Path:
        return Path(self._path)

    def events(self, start: int = 0) -> Iterator[SessionEvent]:
        start = max(start, 0)
        if start >= self._length:
            return iter(())
        length = self._length
        written, pending = self._file.tail
        tail = b"".join(pending)  # lines not written yet: read from memory
        offset, seq = self._seek(start)
        lines = _lines(Path(self._path), offset, written, tail)
        careful = start // STRIDE in self._packed_blocks  # after _seek: prefix blocks known
        return _read_events(lines, seq, start, length, careful=careful)

    def append(self, batch: Sequence[NewEvent]) -> tuple[SessionEvent, ...]:
        self._check_writable()
        added, lines = encode_batch(self._length, batch)
        if not added:
            return added
        data = b"".join(lines) if len(lines) > 1 else lines[0]
        file, journal, size = self._file, self._journal, self._size
        if not self._based:
            journal.need_base(file)
            self._based = True
        # The lines reach the file at the round, after their record (see
        # the journal's "Written at the round"). Added first: a log that
        # writes the queue out (past its size limit) writes them too.
        file.add(data, len(added))
        try:
            self._position = journal.log(file, self._length, data)
        except StoreError:
            file.take_back(len(added))
            raise
        length = self._length
        for line in lines:
            if not length % STRIDE:
                self._index.append(size)
            length += 1
            size += len(line)
        self._length, self._size = length, size
        return added

    async def flush(self) -> None:
        if self._position <= self._journal.synced:
            return
        await self._journal.rounds.barrier()

    def load_snapshot(self) -> Snapshot | None:
        try:
            raw = read_nofollow(self._snapshot_path)
        except FileNotFoundError:
            return None
        snapshot = decode_snapshot(raw)
        if snapshot is None:
            LOG.warning("ignored a damaged snapshot %s", self._snapshot_path)
        elif self._stale_snapshot:
            LOG.warning(
                "ignored the snapshot %s: the session file no longer holds the events it covers",
                self._snapshot_path,
            )
            return None
        elif snapshot.through > self._length:  # checked at open: changed since
            raise _beyond(self._snapshot_path, snapshot.through, self._length)
        return snapshot

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        self._check_through(snapshot)
        self._check_writable()
        if self._saving is None:
            self._saving = asyncio.Lock()
        async with self._saving:
            await self._save_snapshot(snapshot)

    async def _save_snapshot(self, snapshot: Snapshot) -> None:
        # Never durable ahead of the events it covers; the round also writes
        # them to the file, where the anchor and the offset are read.
        await self.flush()
        through = snapshot.through
        offset: int | None = self._size
        if through != self._length:
            offset = await asyncio.to_thread(self._offset_of, through)
        file = self._file
        if file.released:
            raise StoreError(f"session {self._header.id!r} is closed")
        if offset is not None and offset > file.tail[0]:
            raise StoreError(f"{self._path}: the events a snapshot covers are not written yet")
        file.use()  # its descriptor stays open while the thread reads it
        try:
            await asyncio.to_thread(self._write_snapshot, snapshot, offset)
        except OSError as exc:
            raise store_error(f"cannot save {self._snapshot_path}", exc) from exc
        finally:
            file.unuse()
        self._stale_snapshot = False

    async def _close(self) -> None:
        """Make the file durable, write the session's exact wake to the wake
        index, then let the lock go (in that order: see _wake_file)."""
        durable = False
        try:
            await self._journal.release(self._file)
            durable = True
        finally:
            try:
                await self._store.release_wake(self, durable=durable)
            finally:
                self._file.close()
                self._store.forget(self)

    def _wake_changed(self) -> None:
        self._store.note_soon(self)

    def closed_file(self, size: int) -> wakes.ClosedFile | None:
        """The file as this close leaves it (durable): its ``size`` bytes'
        digest and its events; None when some of its lines were never read
        (so not known valid), or it cannot be read."""
        if self._prefix is None and not self._prefix_valid:
            return None  # lines never read (before a snapshot's anchor): not vouched for
        file = self._file
        end, pending = file.tail
        # Only the bytes this log read or wrote, all of them: nothing pending
        # or dropped (a journal that could not be written at the shutdown
        # drops its batches: the log counts events the file never got),
        # nothing failed or left to cut, and no other writer's bytes after.
        if pending or file.failed or file.cut_to is not None:
            return None
        if end != size or file.events != self._length:
            return None
        try:
            digest = _digest(file.fd, size)
        except OSError:
            return None
        return None if digest is None else wakes.ClosedFile(size, digest, file.events)

    def file_size(self) -> int | None:
        """The session file's size now (None when it cannot be read)."""
        try:
            return os.fstat(self._file.fd).st_size
        except OSError:
            return None

    @property
    def _snapshot_path(self) -> Path:
        return Path(self._path).with_suffix(".snapshot")

    def _write_snapshot(self, snapshot: Snapshot, offset: int | None) -> None:
        if offset is None:
            # ``through`` is inside a packed row: no line to anchor at. An
            # empty window is no anchor (a reopen reads the whole file).
            anchor = anchor_for(snapshot.through, 0, b"")
        else:
            window = min(WINDOW, offset)
            before = os.pread(self._file.fd, window, offset - window) if snapshot.through else b""
            anchor = anchor_for(snapshot.through, offset, before)
        data = encode_snapshot(snapshot, anchor)
        replace_atomically(self._snapshot_path, data, self._store.fsync, self._store.dir_fd)

    def _seek(self, start: int) -> tuple[int, int]:
        """The start of a line at or before event ``start`` and the seq of
        the line's first event."""
        block = start // STRIDE
        if start >= self._first:
            i = block - self._index_from
            if 0 <= i < len(self._index):
                return self._index[i], self._row_starts.get(block, block * STRIDE)
            return self._first_offset, self._first
        offset = self._prefix_index()[block]
        return offset, self._row_starts.get(block, block * STRIDE)

    def _prefix_index(self) -> array[int]:
        """The index before the snapshot's anchor, validating those lines the
        first time (thread-safe: ``events`` may run on a worker thread)."""
        prefix = self._prefix
        if prefix is None:
            with _PREFIX_LOCK:
                prefix = self._prefix
                if prefix is None:
                    self._prefix_valid = False  # until read: a close must not vouch for them
                    scanned = scan_prefix(Path(self._path), self._first, self._first_offset)
                    # Blocks before ``_first``'s: no clash with those of the scan at open.
                    self._row_starts = {**self._row_starts, **scanned.row_starts}
                    self._packed_blocks = self._packed_blocks | scanned.packed_blocks
                    prefix = self._prefix = scanned.index
        return prefix

    def _offset_of(self, seq: int) -> int | None:
        """Where event ``seq`` (< length) starts; None when it is inside a
        packed chunk row (no line starts with it)."""
        offset, at = self._seek(seq)
        with reader(Path(self._path)) as file:
            file.seek(offset)
            for line in file:
                if line.strip():
                    if at == seq:
                        return offset
                    at += _count(line)
                    if at > seq:
                        return None
                offset += len(line)
        raise StoreError(f"{self._path}: event {seq} is missing")


def _read_events(
    lines: Iterator[bytes], seq: int, start: int, end: int, *, careful: bool
) -> Iterator[SessionEvent]:
    """Events ``start`` .. ``end`` - 1 from ``lines``, which begin at event
    ``seq``; the lines before ``start`` are counted without decoding them,
    unless ``careful`` (they may hold a packed row)."""
    decode = _EVENT.decode
    for line in lines:
        if seq >= end:
            return
        if seq < start:
            if not line.strip():
                continue
            if not careful or _one_event(line):
                seq += 1  # skipped without decoding
                continue
        try:
            plain: SessionEvent | None = decode(line)
        except _FAST_FAILS:
            plain = None
        if plain is not None and plain.type not in PACKED_TYPES:  # the common case
            if seq >= start:
                yield plain
            seq += 1
            continue
        records = _records(line)
        yield from records[max(start - seq, 0) : end - seq]
        seq += len(records)


def _records(line: bytes) -> tuple[SessionEvent, ...]:
    """The events of a line the fast decoder could not read (none for a
    blank line), with the core's reader."""
    return decode_record_line(line) if line.strip() else ()


def _one_event(line: bytes) -> bool:
    """Whether a valid line surely holds one event, by its bytes alone: a
    packed row's type ends in ``chunks"``, unless written with ``\\u``
    escapes."""
    return b'chunks"' not in line and b"\\u" not in line


def _count(line: bytes) -> int:
    """The number of events a valid line stands for."""
    return 1 if _one_event(line) else len(decode_record_line(line))


def _lines(path: Path, offset: int, written: int, tail: bytes) -> Iterator[bytes]:
    """The lines from ``offset`` of the file's first ``written`` bytes
    followed by ``tail`` (the lines not written yet)."""
    if offset < written:
        with reader(path) as file:
            file.seek(offset)
            for line in file:
                if offset >= written:
                    break
                offset += len(line)
                yield line
    yield from tail[offset - written :].splitlines(keepends=True)


class JsonlStore:
    """A directory of session files; see the module docstring.

    ``fsync`` is called for every sync (files, directories, the journal);
    ``journal_limit`` is the journal size that triggers a checkpoint;
    ``journal_zero_ahead`` how many bytes of zeros the journal writes ahead of
    its records (cheaper syncs; 0 turns it off).
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        fsync: Fsync = os.fsync,
        journal_limit: int = DEFAULT_LIMIT,
        journal_zero_ahead: int = DEFAULT_ZERO_AHEAD,
        lock_wait_s: float = DEFAULT_LOCK_WAIT_S,
    ) -> None:
        if not lock_wait_s >= 0:
            raise ValueError("lock_wait_s must be 0 or more")
        self.directory = Path(directory)
        self.fsync = fsync
        self.lock_wait_s = lock_wait_s
        self._logs: set[JsonlLog] = set()
        self._closed = False
        self.wakes = WakeFile(self.directory)
        self.holder = wakes.holder_token("live")
        self._notes = WakeNotes(self.wakes)
        self._claimer: Claims[JsonlLog] | None = None
        self._checking: asyncio.Task[None] | None = None  # a worker's start check
        self._stop_check = threading.Event()
        try:
            make_dir(self.directory, fsync)
            self.dir_fd = open_dir(self.directory)
        except OSError as exc:
            raise store_error(f"cannot create {self.directory}", exc) from exc
        try:
            self._recovery = Recovery(self.directory, self.directory / ".journal", fsync)
        except BaseException as exc:
            os.close(self.dir_fd)
            if isinstance(exc, OSError):
                what = f"cannot create {self.directory / '.journal'}"
                raise store_error(what, exc) from exc
            raise
        try:
            self.recovered: tuple[str, ...] = tuple(self._recovery.replay())
            """What opening the store repaired from dead processes' journals."""
        except BaseException:
            self._recovery.close()
            os.close(self.dir_fd)
            raise
        self._journal = Journal(
            self._recovery.journal_dir,
            self._recovery.dir_fd,
            self.dir_fd,
            fsync,
            limit=journal_limit,
            zero_ahead=journal_zero_ahead,
        )

    async def open(self, session_id: str, *, created_at: int) -> JsonlLog:
        """Open (creating when absent) ``session_id`` for writing. A session
        a worker holds while it delivers is waited for, up to
        ``lock_wait_s``; one a live process holds raises SessionLocked at
        once."""
        validate_session_id(session_id)
        waiting = LockWait(self.lock_wait_s)
        while True:
            if self._closed:
                raise StoreError("the store is closed")
            try:
                log = await asyncio.to_thread(self._open, session_id, created_at, self.holder)
            except SessionLocked:
                holder = await asyncio.to_thread(self.wakes.read, wakes.holder_of, session_id)
                if not await waiting.again(holder):
                    raise
                continue
            self._logs.add(log)
            return log

    async def open_claimed(self, session_id: str, holder: str) -> JsonlLog:
        """Open an existing session for a worker, without waiting: raises
        SessionLocked when someone holds it, FileNotFoundError when it is
        gone, CorruptStore when it cannot be read."""
        if self._closed:
            raise StoreError("the store is closed")
        log = await asyncio.to_thread(self._open, session_id, 0, holder, create=False)
        self._logs.add(log)
        return log

    async def release_wake(self, log: JsonlLog, *, durable: bool) -> None:
        """At a log's close, before its lock goes: its exact wake in the
        index, or (its wake unknown, its file not durable) "look again"."""
        self._notes.discard(log)
        known, wake = log.exact_wake(log.length)
        size = log.file_size()
        try:
            # The file as this close leaves it, when it is durable: the next
            # open need not read its lines if it finds the same bytes.
            closed = (
                await asyncio.to_thread(log.closed_file, size)
                if durable and size is not None
                else None
            )
            if durable and known:
                release = functools.partial(
                    wakes.release,
                    wake=wake,
                    failures=log.failures_to_write,
                    size=size,
                    closed=closed,
                )
                await asyncio.to_thread(self.wakes.run, release, log.header.id, log.holder)
            else:
                let_go = functools.partial(wakes.let_go, closed=closed)
                await asyncio.to_thread(self.wakes.run, let_go, log.header.id, log.holder)
        except StoreError as exc:
            # The row stays held by this handle; its lock goes now, so a
            # worker's sweep looks at the session again.
            LOG.warning("session %r: %s", log.header.id, exc)

    def note_soon(self, log: JsonlLog) -> None:
        """A held session's wake changed: a hint for the views, written
        within a second."""
        if not self._closed:
            self._notes.add(log)

    def session_ids(self) -> list[str]:
        return sorted(
            path.stem
            for path in self.directory.glob("*.jsonl")
            if is_valid_session_id(path.stem) and path.is_file()  # not a FIFO, say
        )

    async def checkpoint(self) -> None:
        """Make every session file durable now and delete the journal files
        that no longer hold anything needed (this also runs by itself, in
        the background, each time the journal passes its size limit).
        Raises StoreError when a session file could not be synced: the
        journal covering it is then kept, for replay after this process."""
        if self._closed:
            raise StoreError("the store is closed")
        await self._journal.checkpoint()

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._stop_check.set()
        if self._checking is not None:
            # It stops at its next batch (a thread cannot be cancelled), before
            # the index closes: nothing is written to it after the close.
            await asyncio.gather(self._checking, return_exceptions=True)
        try:
            await self._journal.shutdown()  # every file synced: the logs close at once
        finally:
            try:
                await close_all(self._logs)
            finally:
                self._notes.cancel()
                self.wakes.close()
                self._journal.close()
                self._recovery.close()
                os.close(self.dir_fd)

    def forget(self, log: JsonlLog) -> None:
        self._logs.discard(log)

    # -- the worker's part (tickler worker --store; see _wake_claims) --------

    @property
    def where(self) -> str:
        """What a worker's log lines call this store."""
        return f"store {self.directory}"

    async def index_write(self, job: Callable[..., T], *args: object) -> T:
        return await asyncio.to_thread(self.wakes.run, job, *args)

    async def index_read(self, job: Callable[..., T], *args: object) -> T:
        return await asyncio.to_thread(self.wakes.read, job, *args)

    async def check_index(self, progress: Callable[[int], None] | None = None) -> tuple[int, int]:
        """A worker's start: every session file compared with the wake
        index (see :func:`~tickler.adapters.stores._wake_file.changed_behind`);
        the files checked and how many are looked at again. Stops early when
        the store closes."""
        return await asyncio.to_thread(
            changed_behind, self.directory, self.wakes, progress, stopped=self._stop_check.is_set
        )

    @property
    def unreadable(self) -> tuple[type[StoreError], ...]:
        return (CorruptStore,)

    async def prepare_worker(self, progress: Callable[[int], None] | None = None) -> None:
        """Fail at once when the wake index cannot be used (StoreError); then
        bring it up to date with the logs (see :meth:`check_index`) in the
        background, saying what it found. Claims begin at once: a row nobody
        changed behind the index is exact, and a session the check finds
        changed is due from then on, so nothing is delivered later than if
        the claims had waited for the whole check (seconds at 100,000
        sessions: it reads every file's size)."""
        await self.index_read(wakes.next_due)
        self._checking = asyncio.get_running_loop().create_task(self._check_behind(progress))

    async def _check_behind(self, progress: Callable[[int], None] | None) -> None:
        try:
            checked, changed = await self.check_index(progress)
        except (StoreError, OSError) as exc:
            LOG.error(
                "wake index of %s: the start check failed (%s); a session changed behind "
                "the index is found at the next start",
                self.where,
                exc,
            )
            return
        if changed:
            LOG.info(
                "wake index of %s: %d of %d session(s) changed behind it or unknown to it: "
                "each is looked at again",
                self.where,
                changed,
                checked,
            )
        elif not self._stop_check.is_set():
            LOG.info(
                "wake index of %s: %d session file(s) checked, none changed", self.where, checked
            )

    async def locks_free(self, session_ids: list[str]) -> list[bool]:
        """Whether nobody holds each session's lock now."""

        def free() -> list[bool]:
            return [lock_free(self.directory / f"{sid}.jsonl") for sid in session_ids]

        return await asyncio.to_thread(free)

    async def claim_due(self, limit: int, now_ms: int) -> list[JsonlLog]:
        """Open up to ``limit`` due sessions nobody holds, for a worker."""
        return await self._claims().claim_due(limit, now_ms, self._held_ids())

    async def next_due(self) -> int | None:
        """The earliest wake of a session nobody holds, or None."""
        return await self._claims().next_due(self._held_ids())

    async def changes(self, every_s: float = 0.1) -> AsyncIterator[None]:
        """Yields when the wake index may have moved earlier: another process
        committed to it (or it was made anew, then checked again)."""
        version: int | None = None
        while True:
            try:
                if self.wakes.replaced():
                    self.wakes.reopen()
                    await self.check_index()
                    version = None
                now = await asyncio.to_thread(self.wakes.data_version)
                if version is not None and now != version:
                    yield
                version = now
            except StoreError as exc:
                LOG.debug("watching the wake index: %s", exc)
            await asyncio.sleep(every_s)

    def _claims(self) -> Claims[JsonlLog]:
        if self._claimer is None:
            self._claimer = Claims(self)
        return self._claimer

    def _held_ids(self) -> set[str]:
        return {log.header.id for log in self._logs}

    def _open(
        self, session_id: str, created_at: int, holder: str, *, create: bool = True
    ) -> JsonlLog:
        path = self.directory / f"{session_id}.jsonl"
        try:
            fd = open_session_file(path, session_id, create=create)
        except OSError as exc:
            if not create and isinstance(exc, FileNotFoundError):
                raise  # a worker's claim: the session is gone
            raise store_error(f"cannot open session {session_id!r}", exc) from exc
        try:
            header = header_line(SessionHeader(id=session_id, created_at=created_at))
            created, notes = self._start_file(fd, path, header)
            notes += self._recovery.replay(
                held={session_id: fd}, fresh=(session_id,) if created else ()
            )
            closed = self._closed_file(session_id)
            scanned, stale, known_valid = _scan_own(fd, path, session_id, closed)
            # Replayed above if a dead journal covered it: a torn tail left
            # now is damage (raises, changing nothing), and so are events
            # its length file records that the file no longer holds.
            refuse_torn(fd, scanned, covered=False)
            recorded = check_length(fd, scanned)
            repairs = settle_tail(fd, scanned, covered=False)
            if repairs:
                self.fsync(fd)  # a repair is durable before anything builds on it
            notes += repairs
            notes += _remove_temp(path.with_suffix(".snapshot"))
            # Held in the index before the log can change (see _wake_file).
            held = self.wakes.run(wakes.hold, session_id, holder)
            size = os.fstat(fd).st_size  # what the index's size is compared with
        except BaseException as exc:
            os.close(fd)
            if isinstance(exc, OSError):
                raise store_error(f"cannot open session {session_id!r}", exc) from exc
            raise
        log = JsonlLog(
            self,
            SessionFile(
                session_id,
                fd,
                scanned.end,
                path=str(path),
                events=scanned.length,
                recorded=recorded,
            ),
            scanned,
            based=created,
            stale_snapshot=stale,
            holder=holder,
            held=held,
            size=size,
            known_valid=known_valid,
        )
        log.recovered = tuple(notes)
        return log

    def _closed_file(self, session_id: str) -> wakes.ClosedFile | None:
        """The session file as its last clean close left it, if the index
        says (only a shortcut: an index that cannot be read says nothing)."""
        try:
            return self.wakes.read(wakes.closed_file, session_id)
        except StoreError as exc:
            LOG.debug("session %r: the wake index was not read: %s", session_id, exc)
            return None

    def _start_file(self, fd: int, path: Path, header: bytes) -> tuple[bool, list[str]]:
        """Write the header to a new (empty) session file, durably; also to a
        file holding only a torn header (a crash while creating it). Whether
        it did, and what it repaired."""
        size = os.fstat(fd).st_size
        if size > _TORN_HEADER_LIMIT:
            return False, []
        notes: list[str] = []
        if size:
            head = os.pread(fd, size, 0)
            if b"\n" in head or (head.strip() and is_json(head)):
                return False, []  # a header: the scan reads it
            if head.strip():
                notes.append(
                    f"{path}: dropped a torn header ({size} bytes, no newline, not JSON: "
                    "a crash while creating it)"
                )
                LOG.warning("recovered %s", notes[-1])
            os.ftruncate(fd, 0)
        write_all(fd, header)
        self.fsync(fd)
        self.fsync(self.dir_fd)
        return True, notes


def _scan_own(
    fd: int, path: Path, session_id: str, closed: wakes.ClosedFile | None = None
) -> tuple[Scanned, bool, bool]:
    """The scan (from the snapshot's anchor when it holds; from the file's
    end when it is byte for byte as its last clean close left it, ``closed``)
    whether the snapshot is stale (its anchor no longer matches the file),
    and whether the lines before the scan's start are known valid (as the
    close that left them said). Lines not scanned now are read and checked
    when first needed.
    Raises CorruptStore for a snapshot that covers more events than the file
    holds (after any replay: those events were lost)."""
    snapshot_path = path.with_suffix(".snapshot")
    head = read_head(snapshot_path)
    anchor = anchor_of(head)
    holds = anchor is not None and _holds(fd, anchor)
    scanned = None
    if anchor is not None and holds:
        try:
            scanned = scan_file(fd, path, (anchor.through, anchor.offset))
        except CorruptStore:
            # A damaged head reads from the wrong place: the whole file
            # tells whether the damage is the file's or the snapshot's.
            holds = False
    as_closed = scanned is None and closed is not None and _as_closed(fd, closed)
    if as_closed:
        assert closed is not None
        scanned = scan_file(fd, path, (closed.events, closed.size))
    if scanned is None:
        scanned = scan_file(fd, path)
    if scanned.header is None:
        raise CorruptStore(path, 1, "missing session header")
    if scanned.header.id != session_id:
        raise CorruptStore(path, 1, f"the header names session {scanned.header.id!r}")
    through = None if head is None else through_of(head)
    # A damaged snapshot (its checksum fails) is only ignored: derived data.
    if (
        through is not None
        and through > scanned.length
        and decode_snapshot(read_nofollow(snapshot_path)) is not None
    ):
        raise _beyond(snapshot_path, through, scanned.length)
    return scanned, anchor is not None and not holds, as_closed


# A chunk small enough to stay in the CPU's cache while it is hashed.
_DIGEST_CHUNK: Final = 1 << 18


def _digest(fd: int, size: int) -> int | None:
    """The XXH3 (64-bit) of the file's first ``size`` bytes, as the signed
    integer SQLite keeps; None when the file is shorter. (A reopen of an
    unchanged file hashes all of it: XXH3 reads about three times faster
    than zlib's CRC-32 here. A digest an earlier version wrote, a CRC-32,
    matches no file: that file is read whole once, as a changed one is.)"""
    hasher, offset = xxhash.xxh3_64(), 0
    while offset < size:
        chunk = os.pread(fd, min(_DIGEST_CHUNK, size - offset), offset)
        if not chunk:
            return None
        hasher.update(chunk)
        offset += len(chunk)
    return hasher.intdigest() - (1 << 63)


def _as_closed(fd: int, closed: wakes.ClosedFile) -> bool:
    """The file is byte for byte as its last clean close left it (the same
    size and digest)."""
    return os.fstat(fd).st_size == closed.size and _digest(fd, closed.size) == closed.digest


def _beyond(snapshot_path: Path, through: int, length: int) -> CorruptStore:
    return CorruptStore(
        snapshot_path,
        0,
        f"the snapshot covers {through} events but the session file holds {length}: "
        "events it covered were lost",
    )


def _remove_temp(snapshot_path: Path) -> list[str]:
    """Remove the snapshot's temporary file a crash left (the caller holds
    the session's lock: nobody writes it now); what was done."""
    tmp = temp_path(snapshot_path)
    try:
        tmp.unlink()  # a symbolic link is removed, never followed
    except FileNotFoundError:
        return []
    except OSError as exc:  # the next snapshot write reports it
        LOG.warning("cannot remove %s: %s", tmp, exc)
        return []
    note = f"{tmp}: removed a snapshot's temporary file a crash left"
    LOG.warning("recovered %s", note)
    return [note]


def _holds(fd: int, anchor: Anchor) -> bool:
    """The file still holds, just before the anchor's offset, the bytes the
    snapshot saw there (so the events before it are those it covers)."""
    if os.fstat(fd).st_size < anchor.offset:
        return False
    return anchor.matches(os.pread(fd, anchor.window, anchor.offset - anchor.window))
