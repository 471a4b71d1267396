"""The JSONL store's write-ahead journal: group commit for many sessions.

``append`` writes each batch to its session file (page cache: kill -9 loses
nothing) and logs a copy here. A commit round writes the logged copies to
the journal in ONE write and makes them durable with ONE sync, however many
sessions and batches they come from. When the journal passes ``limit`` bytes
it is retired: the round fsyncs the session files it covers (concurrently)
and deletes it.

A batch that kill -9 could cut in two — several lines crossing a page
boundary of its session file, which the kernel copies a page at a time — is
written here *before* its session file, so recovery can complete it; any
other batch lands whole or not at all.

Journal files are ``.journal/<owner>-<n>.wal``, each flock'ed while its
process lives; a file whose lock can be taken belongs to a dead process and
is replayed by :mod:`tickler.adapters.stores.recovery`.

Records are numbered; ``synced`` is the highest number a successful round
covered, so a flush with nothing new returns at once.

After a failed sync Linux may drop the unwritten pages and report success on
the next try, so a retry never trusts the same file: the records not yet
known durable are rewritten to a fresh journal, and a journal whose session
files failed to sync is kept on disk (replayed after we exit) instead of
deleted.

Everything but the syncs runs on the event loop; the syncs run on one worker
thread (and a pool for a checkpoint's many session files).
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import secrets
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from tickler.adapters.stores.files import Fsync, make_dir, store_error, sync_dir, write_all
from tickler.adapters.stores.wal import MAGIC, encode_record
from tickler.shell.ports import StoreError

DEFAULT_LIMIT: Final = 8 << 20
_QUEUE_LIMIT: Final = 1 << 20  # logged bytes written out even without a flush


@dataclass(eq=False)
class _Generation:
    number: int
    path: Path
    fd: int  # write end, flock'ed
    size: int
    dirty: dict[str, int] = field(default_factory=dict)  # session id -> dup of its file's fd
    unsynced: list[bytes] = field(default_factory=list)  # written since the last good sync
    needs_dir_sync: bool = True  # its directory entry is not durable yet
    checkpointed: bool = False
    checkpoint_failed: bool = False


class _JournalSyncFailed(Exception):
    pass


class Journal:
    def __init__(self, directory: Path, fsync: Fsync, limit: int = DEFAULT_LIMIT) -> None:
        self.directory = directory
        self.synced = 0  # every record numbered up to this is durable
        self._fsync = fsync
        self._limit = limit
        self._owner = f"{os.getpid()}-{secrets.token_hex(4)}"
        self._count = 0
        self._logged = 0  # records numbered so far
        self._queue: list[bytes] = []  # logged, not yet written to the journal
        self._queued_bytes = 0
        self._last_queued = False
        self._retired: list[_Generation] = []
        self._bases: list[int] = []  # dups of newly opened session files, see need_base
        self._kept: list[_Generation] = []
        self._broken: str | None = None
        self._syncer = ThreadPoolExecutor(1, thread_name_prefix="tickler-journal")
        self._pool: ThreadPoolExecutor | None = None
        make_dir(directory, fsync)
        self._current: _Generation | None = self._new_generation()

    def log(
        self, session_id: str, session_fd: int, first_seq: int, lines: bytes, *, first: bool
    ) -> int:
        """Log one batch; its number. With ``first`` the record is written
        now, before the caller writes the session file. If that write fails
        the caller calls :meth:`unlog` (with no await between)."""
        gen = self._writable()
        record = encode_record(session_id, first_seq, lines)
        try:
            if session_id not in gen.dirty:
                gen.dirty[session_id] = os.dup(session_fd)
        except OSError as exc:
            raise store_error("cannot log the batch", exc) from exc
        self._queue.append(record)
        self._queued_bytes += len(record)
        self._last_queued = not (first or self._queued_bytes >= _QUEUE_LIMIT)
        if not self._last_queued:
            try:
                self._write_queue(gen)
            except StoreError:
                self._queue.pop()
                self._queued_bytes -= len(record)
                raise
        self._logged += 1
        return self._logged

    def need_base(self, session_fd: int) -> None:
        """Sync this session file in the next round, before it counts: the
        events it held when opened may not be durable yet (a writer that
        closed it without a successful flush), and ours build on them.
        Deferred to the first append, so opening a session costs no fsync."""
        self._writable()
        self._bases.append(os.dup(session_fd))

    def unlog(self) -> None:
        """Take back the last logged batch (its session file write failed)."""
        gen = self._writable()
        self._logged -= 1
        if self._last_queued:
            self._queued_bytes -= len(self._queue.pop())
            return
        record = gen.unsynced.pop()
        gen.size -= len(record)
        self._truncate(gen, gen.size)

    async def commit(self) -> None:
        """One commit round: write the logged batches, sync the files of
        newly written sessions, checkpoint retired journals, then sync the
        journal. Raises StoreError; what was not synced stays queued."""
        gen: _Generation | None = self._writable()
        assert gen is not None
        upto = self._logged
        self._write_queue(gen)
        if gen.size >= self._limit:
            self._retire(rewrite=False)
            gen = None  # the checkpoint below covers all it holds
        retired = list(self._retired)
        count = 0 if gen is None else len(gen.unsynced)
        bases, self._bases = self._bases, []
        try:
            await self._run_sync(bases, retired, gen)
        except BaseException:
            self._bases[:0] = bases
            raise
        finally:
            self._settle(retired)
        for fd in bases:
            os.close(fd)
        if gen is not None:
            del gen.unsynced[:count]
        self.synced = max(self.synced, upto)

    def close(self) -> None:
        """Checkpoint everything and delete the journal (blocking; no round
        may run). On failure the files stay for the next opener to replay."""
        if self._current is not None:
            self._retire(rewrite=False, replace=False)
        self._queue.clear()  # in the session files, which the checkpoint syncs
        try:
            self._checkpoint(list(self._retired))
        finally:
            self._settle(list(self._retired))
            for gen in self._retired + self._kept:
                _close_quietly(gen)
            self._retired.clear()
            self._kept.clear()
            for fd in self._bases:  # their sessions' files were just checkpointed
                os.close(fd)
            self._bases.clear()
            self._syncer.shutdown()
            if self._pool is not None:
                self._pool.shutdown()

    # -- event loop ------------------------------------------------------

    async def _run_sync(
        self, bases: list[int], retired: list[_Generation], gen: _Generation | None
    ) -> None:
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._syncer, self._sync, bases, retired, gen)
        except _JournalSyncFailed as failed:
            assert gen is not None
            if gen is self._current:
                self._retire(rewrite=True)
            raise store_error(f"cannot sync the journal {gen.path}", failed) from failed

    def _write_queue(self, gen: _Generation) -> None:
        """Write every logged record to the journal in one write."""
        if not self._queue:
            return
        data = b"".join(self._queue)
        try:
            write_all(gen.fd, data)
        except OSError as exc:
            self._truncate(gen, gen.size)
            raise store_error(f"cannot write the journal {gen.path}", exc) from exc
        gen.size += len(data)
        gen.unsynced += self._queue
        self._queue, self._queued_bytes = [], 0

    def _settle(self, retired: list[_Generation]) -> None:
        """Release the journals a checkpoint finished with."""
        for gen in retired:
            if not gen.checkpointed:
                continue
            self._retired.remove(gen)
            for fd in gen.dirty.values():
                os.close(fd)
            gen.dirty.clear()
            if gen.checkpoint_failed:
                self._kept.append(gen)  # stays locked until we exit, then replayed
            else:
                os.close(gen.fd)

    def _writable(self) -> _Generation:
        if self._broken is not None:
            raise StoreError(self._broken)
        if self._current is None:
            raise StoreError("the store is closed")
        return self._current

    def _new_generation(self) -> _Generation:
        self._count += 1
        path = self.directory / f"{self._owner}-{self._count}.wal"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC
        try:
            fd = os.open(path, flags, 0o644)
        except OSError as exc:
            raise store_error(f"cannot create the journal {path}", exc) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            write_all(fd, MAGIC)
        except OSError as exc:
            os.close(fd)
            path.unlink(missing_ok=True)
            raise store_error(f"cannot start the journal {path}", exc) from exc
        return _Generation(self._count, path, fd, len(MAGIC))

    def _retire(self, *, rewrite: bool, replace: bool = True) -> None:
        """Move the current journal to the checkpoint list and start a new
        one, holding a copy of the records not yet known durable when
        ``rewrite``."""
        old = self._writable()
        self._retired.append(old)
        self._current = None
        if not replace:
            return
        try:
            new = self._new_generation()
            if rewrite and old.unsynced:
                write_all(new.fd, b"".join(old.unsynced))
                new.size += sum(map(len, old.unsynced))
                new.unsynced = old.unsynced
                new.dirty = {sid: os.dup(fd) for sid, fd in old.dirty.items()}
        except (OSError, StoreError) as exc:
            self._broken = f"the journal is unusable after an I/O failure: {exc}"
            raise StoreError(self._broken) from exc
        old.unsynced = []
        self._current = new

    def _truncate(self, gen: _Generation, size: int) -> None:
        try:
            os.ftruncate(gen.fd, size)
        except OSError as exc:
            self._broken = f"the journal {gen.path} could not be rolled back: {exc}"
            raise StoreError(self._broken) from exc

    # -- worker thread ---------------------------------------------------

    def _sync(self, bases: list[int], retired: list[_Generation], gen: _Generation | None) -> None:
        try:
            self._sync_all(bases)
        except OSError as exc:
            raise store_error("cannot sync a session file", exc) from exc
        try:
            self._checkpoint(retired)
        except OSError as exc:
            raise store_error("cannot checkpoint the journal", exc) from exc
        if gen is None:
            return
        try:
            if gen.needs_dir_sync:
                sync_dir(self.directory, self._fsync)
                gen.needs_dir_sync = False
            self._fsync(gen.fd)
        except OSError as exc:
            raise _JournalSyncFailed(str(exc)) from exc

    def _checkpoint(self, retired: list[_Generation]) -> None:
        for gen in retired:
            try:
                self._sync_all(list(gen.dirty.values()))
            except OSError:
                gen.checkpoint_failed = True
                raise
            if not gen.checkpoint_failed:
                gen.path.unlink(missing_ok=True)
            gen.checkpointed = True

    def _sync_all(self, fds: list[int]) -> None:
        if len(fds) <= 1:
            for fd in fds:
                self._fsync(fd)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(16, thread_name_prefix="tickler-checkpoint")
        for _ in self._pool.map(self._fsync, fds):
            pass


def _close_quietly(gen: _Generation) -> None:
    for fd in (*gen.dirty.values(), gen.fd):
        try:
            os.close(fd)
        except OSError:
            continue
