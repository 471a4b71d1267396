"""The JSONL store's write-ahead journal: group commit for many sessions.

``append`` logs each batch here and keeps its lines in memory. A commit
round writes the logged records to the journal in ONE write, then each
session's new lines to its file, and makes the records durable with ONE
sync, however many sessions and batches they come from. Rounds are run by
:class:`~tickler.adapters.stores._committer.Rounds`: a flush that finds no
round running starts one at once, and the sync runs on one thread.

**Written at the round.** A session file is written only at a round (or
when the queue of records passes 1 MiB, or when its log closes), never in
``append``: a ``write`` lets go of the interpreter lock, and on a busy loop
every such release woke the sync thread waiting for it, which cost more
than the write. Lines always reach their file *after* their record reaches
the journal, so a batch that kill -9 cuts in two (the kernel copies a page
at a time) is completed by recovery. A batch never flushed may be lost to
kill -9; a flushed one is in the journal and in its file's page cache. If a
session file cannot be written, the lines stay pending and are tried again
at every round; the flush still succeeds (the records hold the lines), and
no generation covering that file is deleted while it lags.

Journal files are ``.journal/<owner>-<n>.wal`` (*generations*), each
flock'ed while its process lives; a file whose lock can be taken belongs to
a dead process and is replayed by :mod:`tickler.adapters.stores._recovery`.
So a generation is never seen unlocked under its name: it is created as
``<owner>-<n>.new``, locked, given its magic line, then renamed (see
:func:`~tickler.adapters.stores._locks.create_locked`); recovery removes a
``.new`` file whose lock it can take (a crash before the rename: it holds
no record). If recovery takes one first, the journal tries the next
number.
A generation's file is created when first needed; if that fails (no
descriptor left, no space), the round or append that needed it fails and
the next one tries again — no failure leaves the journal unusable.

**Checkpoints run in the background, never inside a round.** When a
generation passes ``limit`` bytes, the round that synced it retires it and
the next records go to a new one; a background task then fsyncs the session
files the retired generation covers (a few at a time, on a small pool) and
deletes it; first, for each session file it covers that no later
generation holds a synced record of, it records the file's length (see
:mod:`~tickler.adapters.stores._lengthfile`), since nothing else would tell
when whole lines go missing from it. A round never waits for a checkpoint. A session file whose sync
fails keeps its generation on disk (locked until this process exits, then
replayed) and is logged; :meth:`Journal.checkpoint` reports it.

**Descriptors.** The journal holds no descriptor of its own for a session:
it borrows the log's (a :class:`SessionFile`) while a thread syncs it, and
the log's ``close`` waits for such borrows, then syncs its file itself if
the journal still counts on it (a generation not yet checkpointed holds its
records) and records its length, so no generation ever needs a closed file. Per open session that
is exactly one descriptor, at rest or not.

**Zeroed ahead.** Records are written into space already filled with zeros
(``zero_ahead`` bytes at a time, written on the event loop once the space
left runs low) rather than appended: a sync then only writes data blocks,
not the file's new size and extents, and costs a good deal less. A reader
stops at the first frame that is not intact, so the zeros are simply the
end. Filling is an optimisation only: if it fails (no space), records are
appended as before.

Records are numbered; ``synced`` is the highest number a successful round
covered, so a flush with nothing new returns at once.

After a failed sync Linux may drop the unwritten pages and report success on
the next try, so a retry never trusts the same file: a generation whose
sync failed is retired, the records not yet known durable are written again
to the next one, and a generation whose session files failed to sync is
kept on disk instead of deleted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from tickler.adapters.stores._committer import Done, Rounds, SyncThread
from tickler.adapters.stores._files import Fsync, pwrite_all, store_error, write_all
from tickler.adapters.stores._lengthfile import length_path, write_length
from tickler.adapters.stores._locks import STAGING_SUFFIX, create_locked
from tickler.adapters.stores._wal import MAGIC, encode_record
from tickler.shell import StoreError

LOG = logging.getLogger("tickler.store")
DEFAULT_LIMIT: Final = 8 << 20
_QUEUE_LIMIT: Final = 1 << 20  # logged bytes written out even without a flush
_CHECKPOINT_THREADS: Final = 4  # session files synced at once by a checkpoint
_CHECKPOINT_CHUNK: Final = 16  # session files per checkpoint job
_BASE_THREADS: Final = 8  # session files synced at once by a round (first appends)
DEFAULT_ZERO_AHEAD: Final = 1 << 19  # bytes of zeros written ahead of the records
# Each failed try needs another process's recovery to take the staging file
# in the microseconds between its creation and its lock.
_CREATE_TRIES: Final = 8


class SessionFile:
    """A session file's descriptor (which also holds its writer lock),
    owned by its log and borrowed by the journal while a thread syncs it;
    and the lines appended to it that are not written yet (see "Written at
    the round")."""

    __slots__ = (
        "_close_pending",
        "_users",
        "_waiters",
        "cut_to",
        "events",
        "failed",
        "fd",
        "path",
        "pending_events",
        "recorded",
        "released",
        "session_id",
        "tail",
    )

    def __init__(
        self,
        session_id: str,
        fd: int,
        end: int = 0,
        *,
        path: str | None = None,
        events: int = 0,
        recorded: int = 0,
    ) -> None:
        self.session_id = session_id
        self.fd = fd
        # The session file (its length file is beside it): a str, not a Path,
        # as every open session keeps it (a Path and its parts cost about
        # 700 bytes; the log shares this str).
        self.path = path
        self.released = False  # its log is closing: the journal borrows it no more
        self.failed = False  # the sync at its close failed: its records may be on no disk
        # (bytes the file holds, lines not written yet after them): one
        # attribute, so a reader on another thread sees the two agree. No
        # list while nothing is pending: most open sessions are idle.
        self.tail: tuple[int, list[bytes] | tuple[()]] = (end, ())
        self.events = events  # the events the file holds (written, maybe not synced)
        self.pending_events = 0  # the events of the pending lines
        self.recorded = recorded  # the count its length file records
        self.cut_to: int | None = None  # a failed write's leftovers still to cut off
        self._users = 0
        self._waiters: list[asyncio.Future[None]] = []
        self._close_pending = False

    def add(self, lines: bytes, events: int) -> None:
        """Lines (``events`` events) to write at the next round, after their
        record."""
        end, pending = self.tail
        if isinstance(pending, list):
            pending.append(lines)
        else:
            self.tail = (end, [lines])
        self.pending_events += events

    def take_back(self, events: int) -> None:
        """Forget the lines just added (their record could not be logged)."""
        end, pending = self.tail
        if len(pending) > 1:
            assert isinstance(pending, list)
            pending.pop()
        else:
            self.tail = (end, ())
        self.pending_events -= events

    def drop_pending(self) -> int:
        """Forget every pending line (their records were never written);
        how many batches."""
        end, pending = self.tail
        self.tail = (end, ())
        self.pending_events = 0
        return len(pending)

    def write_pending(self) -> OSError | None:
        """Write the pending lines in one ``write``; the error when that
        fails (what it left is cut off, and the lines stay pending)."""
        end, chunks = self.tail
        if not chunks:
            return None
        data = b"".join(chunks) if len(chunks) > 1 else chunks[0]
        try:
            if self.cut_to is not None:
                os.ftruncate(self.fd, self.cut_to)
                self.cut_to = None
            write_all(self.fd, data)
        except OSError as exc:
            try:
                os.ftruncate(self.fd, end)  # never append after a torn line
                self.cut_to = None
            except OSError:
                self.cut_to = end
            return exc
        self.tail = (end + len(data), ())
        self.events += self.pending_events
        self.pending_events = 0
        return None

    def use(self) -> None:
        self._users += 1

    def unuse(self) -> None:
        self._users -= 1
        if self._users:
            return
        if self._close_pending:
            self._close_pending = False
            _close_quietly(self.fd)
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def idle(self) -> None:
        """Wait until no thread uses the descriptor."""
        while self._users:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            await waiter

    def close(self) -> None:
        """Close the descriptor (releasing the lock) now, or as soon as the
        last borrower is done (only after a cancelled ``close``)."""
        self.released = True
        if self._users:
            self._close_pending = True
        else:
            _close_quietly(self.fd)


Record = tuple[bytes, SessionFile]


@dataclass(eq=False)
class _Generation:
    number: int = 0
    path: Path = field(default_factory=Path)
    fd: int = -1  # -1 until its file is created (when first needed)
    size: int = 0  # bytes of magic and records
    zeroed: int = 0  # the file holds zeros from ``size`` up to here
    dirty: dict[SessionFile, None] = field(default_factory=dict)  # files it holds records of
    durable: dict[SessionFile, None] = field(default_factory=dict)  # ... synced records of
    unsynced: list[Record] = field(default_factory=list)  # written since the last good sync
    needs_dir_sync: bool = True  # its directory entry is not durable yet
    sync_session_dir: bool = False  # its checkpoint also syncs the sessions' directory
    keep: bool = False  # a session file it covers failed to sync: never deleted by us


@dataclass(eq=False)
class _Round:
    gen: _Generation
    upto: int  # the last record number it covers
    count: int  # the generation's unsynced records it syncs
    bases: list[SessionFile]
    dir_sync: bool  # the generation's directory entry too


class _BasesFailed(Exception):
    pass


class Journal:
    def __init__(
        self,
        directory: Path,
        dir_fd: int,
        session_dir_fd: int,
        fsync: Fsync,
        *,
        limit: int = DEFAULT_LIMIT,
        zero_ahead: int = DEFAULT_ZERO_AHEAD,
    ) -> None:
        """``dir_fd`` and ``session_dir_fd``: open descriptors of the
        journal's directory and of the sessions' (used, not closed);
        ``zero_ahead``: see "Zeroed ahead" (0: plain appends)."""
        self.directory = directory
        self.synced = 0  # every record numbered up to this is durable
        self._fsync = fsync
        self._limit = limit
        self._zero_ahead = zero_ahead
        self._owner = f"{os.getpid()}-{secrets.token_hex(4)}"
        self._count = 0
        self._logged = 0  # records numbered so far
        self._queue: list[Record] = []  # logged, not yet written to the journal
        self._lagging: dict[SessionFile, None] = {}  # their last write failed
        self._lag_failures = 0  # failed writes since files began to lag
        self._queued_bytes = 0
        self._bases: list[SessionFile] = []  # newly opened session files, see need_base
        self._current: _Generation | None = _Generation()  # None once shut down
        self._retired: list[_Generation] = []  # waiting for their checkpoint
        self._kept: list[_Generation] = []
        self._failed: list[str] = []  # checkpoint failures not reported yet
        self._checkpointer: asyncio.Task[None] | None = None
        self._syncer = SyncThread("tickler-journal")
        self._base_pool: ThreadPoolExecutor | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._session_dir_fd = session_dir_fd
        self._dir_fd = dir_fd
        self.rounds = Rounds(self._start_round)

    # -- appends (event loop) -------------------------------------------

    def log(self, file: SessionFile, first_seq: int, lines: bytes) -> int:
        """Log one batch whose ``lines`` the caller has just added to
        ``file``; its number. Past the queue's size limit the queue is
        written out now, those lines included."""
        gen = self._writable()
        record = encode_record(file.session_id, first_seq, lines)
        self._queue.append((record, file))
        self._queued_bytes += len(record)
        if self._queued_bytes >= _QUEUE_LIMIT:
            try:
                self._open_file(gen)
                self._write_sessions(self._write_queue(gen))
            except StoreError:
                self._queue.pop()
                self._queued_bytes -= len(record)
                raise
        self._logged += 1
        return self._logged

    def need_base(self, file: SessionFile) -> None:
        """Sync this session file (and the directory holding it) in the next
        round, before it counts: the events it held when opened may not be
        durable yet (a writer that closed it without a successful flush, a
        harness that never syncs), and ours build on them. Deferred to the
        first append, so opening a session costs no fsync."""
        self._writable()
        self._bases.append(file)

    # -- rounds (event loop; the syncs on the sync thread) ---------------

    def _start_round(self, done: Done) -> None:
        """One commit round: write the logged batches, sync the newly
        written sessions' files, then the journal. Raises StoreError (what
        was not synced stays queued) or calls ``done`` when over."""
        gen = self._writable()
        upto = self._logged
        written: dict[SessionFile, None] = {}
        if self._queue:
            self._open_file(gen)
            written = self._write_queue(gen)
        round_ = _Round(
            gen, upto, len(gen.unsynced), self._bases, gen.needs_dir_sync and gen.fd >= 0
        )
        self._bases = []
        for file in round_.bases:
            file.use()

        def finished(error: BaseException | None) -> None:
            done(self._finish_round(round_, error))

        journal_fd = gen.fd if round_.count or round_.dir_sync else -1
        if not round_.bases and journal_fd < 0:
            asyncio.get_running_loop().call_soon(finished, None)
        else:
            base_fds = [file.fd for file in round_.bases]
            dir_sync = round_.dir_sync
            self._syncer.submit(lambda: self._sync(base_fds, journal_fd, dir_sync), finished)
        # The session files are written while the journal syncs: the sync
        # starts sooner, and they are written before the round reports back.
        self._write_sessions(written)

    def _finish_round(self, round_: _Round, error: BaseException | None) -> StoreError | None:
        """Account for a round's outcome; the error for its waiters."""
        gen = round_.gen
        for file in round_.bases:
            file.unuse()
        if isinstance(error, _BasesFailed):
            self._bases[:0] = [file for file in round_.bases if not file.released]
            return store_error("cannot sync a session file", error)
        if error is not None:
            if gen is self._current:
                self._retire(gen)
            return store_error(f"cannot sync the journal {gen.path}", error)
        if round_.dir_sync:
            gen.needs_dir_sync = False
        if gen is self._current:
            durable = gen.durable
            for _, file in gen.unsynced[: round_.count]:
                durable[file] = None
            del gen.unsynced[: round_.count]
        self.synced = max(self.synced, round_.upto)
        if gen is self._current and gen.size >= self._limit:
            self._retire(gen)
        return None

    def _sync(self, base_fds: list[int], journal_fd: int, dir_sync: bool) -> None:
        """The round's syncs (on the sync thread)."""
        if base_fds:
            try:
                if len(base_fds) == 1:
                    self._fsync(base_fds[0])
                else:
                    if self._base_pool is None:
                        self._base_pool = ThreadPoolExecutor(_BASE_THREADS, "tickler-base")
                    for _ in self._base_pool.map(self._fsync, base_fds):
                        pass
                self._fsync(self._session_dir_fd)
            except OSError as exc:
                raise _BasesFailed(str(exc)) from exc
        if dir_sync:
            self._fsync(self._dir_fd)
        if journal_fd >= 0:
            self._fsync(journal_fd)

    def _write_queue(self, gen: _Generation) -> dict[SessionFile, None]:
        """Write every logged record to the journal in one write; the files
        whose lines are to be written next (by :meth:`_write_sessions`)."""
        if not self._queue:
            return {}
        data = b"".join([record for record, _ in self._queue])
        try:
            pwrite_all(gen.fd, data, gen.size)
        except OSError as exc:
            gen.zeroed = gen.size
            try:
                os.ftruncate(gen.fd, gen.size)
            except OSError:
                self._retire(gen)  # never write after a torn record
            raise store_error(f"cannot write the journal {gen.path}", exc) from exc
        gen.size += len(data)
        self._fill_zeros(gen)
        dirty = gen.dirty
        for _, file in self._queue:
            if not file.released:
                dirty[file] = None
            elif file.failed:
                gen.keep = True
        written = dict.fromkeys(file for _, file in self._queue)
        gen.unsynced += self._queue
        self._queue, self._queued_bytes = [], 0
        return written

    def _write_sessions(self, files: dict[SessionFile, None]) -> None:
        """Write the pending lines of ``files`` and of every lagging file,
        after their records. A failed write costs nothing durable (the
        records hold the lines): the lines stay pending, and no generation is
        deleted while a file it covers lags (see ``_checkpoint``)."""
        lagging = self._lagging
        if lagging:
            files = {**lagging, **files}
        for file in files:
            if file.released:  # its log is closing and writes its own lines
                lagging.pop(file, None)
                continue
            error = file.write_pending()
            if error is None:
                if file in lagging:
                    del lagging[file]
                    if not lagging:
                        LOG.warning(
                            "session files are written again (after %d failed writes)",
                            self._lag_failures,
                        )
                continue
            # One line when session files start to lag (a full disk fails
            # every commit round), DEBUG for each failure until they catch up.
            self._lag_failures = self._lag_failures + 1 if lagging else 1
            LOG.log(
                logging.DEBUG if lagging else logging.ERROR,
                "cannot write session %r (its journal keeps the lines; retried at every "
                "commit, failures logged at DEBUG until written again): %s",
                file.session_id,
                error,
            )
            lagging[file] = None

    def _write_out(self) -> None:
        """Write the queued records, then every pending line after them.
        Raises StoreError when the journal cannot be written."""
        written: dict[SessionFile, None] = {}
        if self._queue:
            gen = self._writable()
            self._open_file(gen)
            written = self._write_queue(gen)
        self._write_sessions(written)

    def _writable(self) -> _Generation:
        if self._current is None:
            raise StoreError("the store is closed")
        return self._current

    def _open_file(self, gen: _Generation) -> None:
        """Create the generation's file, if not yet done; raises StoreError
        (nothing changed: the next caller tries again)."""
        if gen.fd >= 0:
            return
        for _ in range(_CREATE_TRIES):
            self._count += 1
            name = f"{self._owner}-{self._count}"
            path = self.directory / f"{name}.wal"
            try:
                fd = create_locked(path, self.directory / f"{name}{STAGING_SUFFIX}", MAGIC)
            except OSError as exc:
                raise store_error(f"cannot create the journal {path}", exc) from exc
            if fd is not None:
                break
        else:
            raise StoreError(
                f"cannot create a journal in {self.directory}: another process's recovery "
                f"removed it while it was being created, {_CREATE_TRIES} times"
            )
        gen.number, gen.path, gen.fd, gen.size = self._count, path, fd, len(MAGIC)
        gen.zeroed = gen.size
        gen.needs_dir_sync = True
        self._fill_zeros(gen)

    def _fill_zeros(self, gen: _Generation) -> None:
        """Zeros ahead of the records once less than half a fill is left
        (see "Zeroed ahead"). Runs on the event loop, as do all journal
        writes, so it never races a record."""
        fill = self._zero_ahead
        if not fill or gen.zeroed - gen.size >= fill // 2:
            return
        start = max(gen.zeroed, gen.size)
        try:
            pwrite_all(gen.fd, bytes(fill), start)
        except OSError as exc:
            LOG.debug("cannot write zeros ahead in %s: %s", gen.path, exc)
            return
        gen.zeroed = start + fill

    def _retire(self, gen: _Generation) -> None:
        """Hand the current generation to the checkpoint and start a new one
        (its file created when first needed); the records not yet known
        durable are queued again, for the new one."""
        assert gen is self._current
        self._retired.append(gen)
        carried, gen.unsynced = gen.unsynced, []
        self._queue[:0] = carried
        self._queued_bytes += sum(len(record) for record, _ in carried)
        self._current = _Generation()
        self._start_checkpoint()

    # -- checkpoints (event loop; the syncs on a small pool) --------------

    def _start_checkpoint(self) -> None:
        if self._checkpointer is None or self._checkpointer.done():
            loop = asyncio.get_running_loop()
            self._checkpointer = loop.create_task(self._checkpoint_retired())

    async def _checkpoint_retired(self) -> None:
        while self._retired:
            gen = self._retired[0]
            try:
                await self._checkpoint(gen)
                if not gen.keep and gen.fd >= 0:
                    # Off the loop: freeing a big file's blocks takes a while.
                    await asyncio.get_running_loop().run_in_executor(self._pool, _delete, gen.path)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                LOG.exception("checkpoint of %s failed", gen.path)
                self._failed.append(f"{gen.path}: {exc}")
                gen.keep = True
            self._retired.remove(gen)
            self._settle(gen)

    async def _checkpoint(self, gen: _Generation) -> None:
        """Sync the session files ``gen`` covers, a few at a time."""
        loop = asyncio.get_running_loop()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(_CHECKPOINT_THREADS, "tickler-checkpoint")
        self._settle_lagging(gen)
        pending = list(gen.dirty)
        synced: dict[SessionFile, int] = {}  # file -> the events its sync covered
        step = _CHECKPOINT_THREADS * _CHECKPOINT_CHUNK
        for at in range(0, len(pending), step):
            # A closing log syncs its file itself (see release).
            group = [f for f in pending[at : at + step] if f in gen.dirty and not f.released]
            size = _CHECKPOINT_CHUNK
            chunks = [group[i : i + size] for i in range(0, len(group), size)]
            counts = {file: file.events for file in group}  # written before the syncs start
            for file in group:
                file.use()
            try:
                outcomes = await asyncio.gather(
                    *(
                        loop.run_in_executor(self._pool, self._fsync_each, [f.fd for f in chunk])
                        for chunk in chunks
                    )
                )
            finally:
                for file in group:
                    file.unuse()
            for chunk, failed in zip(chunks, outcomes, strict=True):
                for i, file in enumerate(chunk):
                    gen.dirty.pop(file, None)
                    if i in failed:
                        gen.keep = True
                        self._failed.append(f"session {file.session_id!r}: {failed[i]}")
                        LOG.error("cannot sync %s for a checkpoint", self._failed[-1])
                    else:
                        synced[file] = counts[file]
        if gen.sync_session_dir:
            try:
                await loop.run_in_executor(self._pool, self._fsync, self._session_dir_fd)
            except OSError as exc:
                gen.keep = True
                self._failed.append(f"the sessions' directory: {exc}")
                LOG.error("cannot sync %s for a checkpoint", self._failed[-1])
        await self._record_lengths(gen, synced)

    async def _record_lengths(self, gen: _Generation, synced: dict[SessionFile, int]) -> None:
        """Record in their length files the events of the files ``gen``
        covers (just synced) before ``gen`` goes, unless a later generation
        holds a durable record of theirs (which keeps covering them: see
        :mod:`~tickler.adapters.stores._lengthfile`). A closing log records
        its own (see release)."""
        wanted = self._uncovered(gen, synced)
        files = [file for file in wanted if not file.released and file.path is not None]
        if not files:
            return
        loop = asyncio.get_running_loop()
        size = _CHECKPOINT_CHUNK
        chunks = [files[i : i + size] for i in range(0, len(files), size)]
        for file in files:
            file.use()  # a closing log waits: it records its own after this
        try:
            outcomes = await asyncio.gather(
                *(
                    loop.run_in_executor(
                        self._pool, self._record_each, [(f.path, wanted[f]) for f in chunk]
                    )
                    for chunk in chunks
                )
            )
        finally:
            for file in files:
                file.unuse()
        for chunk, failed in zip(chunks, outcomes, strict=True):
            for i, file in enumerate(chunk):
                if i in failed:
                    gen.keep = True
                    self._failed.append(f"session {file.session_id!r}: {failed[i]}")
                    LOG.error("cannot record the length of %s for a checkpoint", self._failed[-1])
                else:
                    file.recorded = max(file.recorded, wanted[file])

    def _uncovered(
        self, gen: _Generation, synced: dict[SessionFile, int]
    ) -> dict[SessionFile, int]:
        """The synced files (and counts) whose length must be recorded before
        ``gen`` goes: those with no durable record in a later generation."""
        later = [other.durable for other in self._generations() if other is not gen]
        return {
            file: count
            for file, count in synced.items()
            if not file.released
            and count > file.recorded
            and not any(file in durable for durable in later)
        }

    def _record_each(self, items: list[tuple[str | None, int]]) -> dict[int, OSError]:
        """Record each count in its session's length file (on the pool),
        then sync the directory if a length file was created; the failures
        by position."""
        failed: dict[int, OSError] = {}
        created = False
        for i, (path, count) in enumerate(items):
            if path is None:
                continue
            try:
                created |= write_length(length_path(Path(path)), count, self._fsync)
            except OSError as exc:
                failed[i] = exc
        if created:
            try:
                self._fsync(self._session_dir_fd)
            except OSError as exc:
                failed.update(dict.fromkeys(range(len(items)), exc))
        return failed

    def _settle_lagging(self, gen: _Generation) -> None:
        """Write what the files ``gen`` covers still lack; keep ``gen`` for
        each one that cannot be written (its records hold the lines)."""
        if not any(file in self._lagging for file in gen.dirty):
            return
        with contextlib.suppress(StoreError):  # a lagging file keeps ``gen`` below
            self._write_out()
        for file in [file for file in gen.dirty if file in self._lagging]:
            gen.dirty.pop(file)
            gen.keep = True
            self._failed.append(f"session {file.session_id!r}: its lines could not be written")
            LOG.error("cannot write %s for a checkpoint", self._failed[-1])

    def _fsync_each(self, fds: list[int]) -> dict[int, OSError]:
        """Sync each descriptor (on the pool); the failures by position."""
        failed: dict[int, OSError] = {}
        for i, fd in enumerate(fds):
            try:
                self._fsync(fd)
            except OSError as exc:
                failed[i] = exc
        return failed

    def _settle(self, gen: _Generation) -> None:
        """Release a checkpointed (and deleted) generation, or keep it
        (locked, so only a later process replays it)."""
        if gen.keep:
            self._kept.append(gen)
            LOG.error("kept the journal %s: it will be replayed after this process", gen.path)
        elif gen.fd >= 0:
            _close_quietly(gen.fd)
            gen.fd = -1

    async def checkpoint(self) -> None:
        """Retire the current generation and wait until every retired one is
        checkpointed; raise StoreError if one had to be kept (since the last
        report)."""
        await self.rounds.idle()
        self._checkpoint_all(self._writable())
        await self._wait_checkpoints()
        self._report("cannot checkpoint the journal")

    def _report(self, what: str) -> None:
        failed, self._failed = self._failed, []
        if failed:
            raise StoreError(f"{what} ({'; '.join(failed)}): it is kept for replay")

    def _checkpoint_all(self, gen: _Generation) -> bool:
        """Retire ``gen`` covering also what is still queued (written out
        first) or waiting for its base sync. False when the queued records
        could not be written (reported by the caller)."""
        written = True
        try:
            self._write_out()
        except StoreError as exc:
            self._failed.append(str(exc))
            gen.keep = True
            written = False
        for _, file in self._queue:
            if not file.released:
                gen.dirty[file] = None
        for file in self._bases:
            gen.dirty[file] = None
            gen.sync_session_dir = True
        self._retire(gen)
        return written

    async def _wait_checkpoints(self) -> None:
        while self._checkpointer is not None and not self._checkpointer.done():
            await asyncio.wait([self._checkpointer])

    # -- closing ----------------------------------------------------------

    async def release(self, file: SessionFile) -> None:
        """Its log is closing: sync the file if any generation still counts
        on it (or its base sync is pending), then forget it. Raises
        StoreError when that sync fails (the journals are then kept)."""
        file.released = True
        await file.idle()
        if file.tail[1]:
            self._write_released(file)
        holders = [gen for gen in self._generations() if file in gen.dirty]
        queued = any(owner is file for _, owner in self._queue)
        based = file in self._bases
        if based:
            self._bases.remove(file)
        count = file.events  # every line is written by now
        record = count > file.recorded and file.path is not None
        if not (holders or queued or based or record):
            return
        file.use()
        try:
            await asyncio.get_running_loop().run_in_executor(
                self._pool_for_release(), self._sync_released, file, based, count if record else 0
            )
        except OSError as exc:
            file.failed = True
            for gen in self._generations():
                gen.keep = True
            raise store_error(f"cannot sync session {file.session_id!r} at its close", exc) from exc
        finally:
            file.unuse()
            for gen in holders:
                gen.dirty.pop(file, None)
        if record:
            file.recorded = count

    def _write_released(self, file: SessionFile) -> None:
        """A closing file's pending lines, after their records; raises
        StoreError (the journals are then kept) when that fails."""
        try:
            self._write_out()
            error = file.write_pending()
        except StoreError as exc:
            error = OSError(str(exc))
        self._lagging.pop(file, None)
        if error is not None:
            file.failed = True
            for gen in self._generations():
                gen.keep = True
            raise store_error(f"cannot write session {file.session_id!r} at its close", error)

    def _sync_released(self, file: SessionFile, based: bool, count: int) -> None:
        """Sync a closing file, then record ``count`` (when not 0) in its
        length file, before any journal that covers it can go."""
        self._fsync(file.fd)
        created = False
        if count and file.path is not None:
            created = write_length(length_path(Path(file.path)), count, self._fsync)
        if based or created:
            self._fsync(self._session_dir_fd)

    def _pool_for_release(self) -> ThreadPoolExecutor:
        if self._base_pool is None:
            self._base_pool = ThreadPoolExecutor(_BASE_THREADS, "tickler-base")
        return self._base_pool

    def _generations(self) -> list[_Generation]:
        current = [] if self._current is None else [self._current]
        return [*self._retired, *current]

    async def shutdown(self) -> None:
        """Checkpoint everything and stop taking records (the store is
        closing; no round may start). Raises StoreError when a session file
        could not be synced: its journal stays for the next opener."""
        await self.rounds.idle()
        if self._current is None:
            return
        written = self._checkpoint_all(self._current)
        self._current = None
        if not written:
            # Batches never flushed, whose records the journal could not take
            # (reported below): their lines must not reach a file without them.
            for file in dict.fromkeys(file for _, file in self._queue):
                lost = file.drop_pending()
                LOG.error("session %r: %d batches never flushed are lost", file.session_id, lost)
        # Otherwise the queue holds only records retired before their sync:
        # their lines are in the session files the checkpoint syncs.
        self._queue, self._queued_bytes = [], 0
        self._bases = []
        await self._wait_checkpoints()
        self._report("cannot checkpoint the journal on close")

    def close(self) -> None:
        """Release the threads and descriptors (blocking; after
        :meth:`shutdown`). A kept or unfinished journal is unlocked here, so
        the next opener replays it."""
        self._current = None
        self._syncer.stop()
        for pool in (self._pool, self._base_pool):
            if pool is not None:
                pool.shutdown()
        for gen in (*self._retired, *self._kept):
            if gen.fd >= 0:
                _close_quietly(gen.fd)
                gen.fd = -1
        self._retired.clear()
        self._kept.clear()


def _delete(path: Path) -> None:
    try:
        path.unlink()
    except OSError as exc:  # replayed later, harmlessly: its files hold it all
        LOG.warning("cannot delete the checkpointed journal %s: %s", path, exc)


def _close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError as exc:
        LOG.warning("closing descriptor %d failed: %s", fd, exc)
