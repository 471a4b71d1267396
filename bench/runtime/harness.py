"""Everything the runtime bench uses of tickler, in one place: session files
generated on disk, the JSONL store, one ``ScheduleRuntime`` per session on
the process's shared timer heap, a host that is always idle, and the
instant format. When the runtime's API changes, this module changes; the
scenarios do not.

tickler is imported inside the functions, so that a worker for the peer
imports none of it.
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from .common import (
    TimedFsync,
    far_offset_ms,
    measuring,
    open_fds,
    rss_bytes,
    until_async,
    wall_ms,
)

if TYPE_CHECKING:
    from tickler.shell._host import FollowUp, IdleClaim
    from tickler.shell._runtime import ScheduleRuntime

CREATE: Final = "schedule_create"
OPEN_BATCH: Final = 256
# What a tickler process imports (the import-time row of figure 6).
TICKLER_MODULES: Final = (
    "tickler.adapters.stores._jsonl",
    "tickler.shell._runtime",
    "tickler.shell._clock",
    "tickler.shell._timers",
)


def instant_text(ms: int) -> str:
    """The canonical UTC text of an instant (epoch ms), as tools take it."""
    from tickler.core import format_instant

    return format_instant(ms)


def instant_ms(text: str) -> int:
    from tickler.core import parse_instant

    return parse_instant(text)


# --------------------------------------------------------------------------------------
# Pre-generated sessions
#
# Writing 100,000 pending reminders through ``call_tool`` would spend minutes
# on durable creates that figure 2 already measures, so the files are written
# directly: each line is exactly what a runtime appends for a
# ``schedule_create`` with ``after_seconds`` (the first lines of the first
# files are checked byte for byte against the core's ``encode_change`` and the
# store's own line encoder), and the store validates every line on open.

CHECKED_SESSIONS: Final = 3
CHECKED_LINES: Final = 3
LINE: Final = (
    b'{"type":"schedule/change","seq":%d,"time":%d,"data":{"version":1,"operation":"create",'
    b'"schedule":{"id":"schedule-%d","kind":"after","prompt":"%s","afterSeconds":%d,'
    b'"scheduledAt":"%s"}}}\n'
)


def prompt_for(session: int, index: int) -> str:
    """A short prompt (about 20 characters)."""
    return f"check on build {session}.{index}"


def _instant(ms: int) -> str:
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def _reference_line(seq: int, now: int, session: int, after_s: int) -> bytes:
    """The same line, built by the core and the store's line encoder."""
    from tickler.adapters.stores._lines import encode_batch
    from tickler.core import SCHEDULE_CHANGE, AfterSchedule, encode_change, format_instant
    from tickler.core._model import create
    from tickler.shell._ports import NewEvent

    record = AfterSchedule(
        id=f"schedule-{seq + 1}",
        prompt=prompt_for(session, seq),
        after_seconds=after_s,
        scheduled_at=format_instant(now + after_s * 1000),
    )
    batch = [NewEvent(SCHEDULE_CHANGE, encode_change(create(record)), now)]
    return encode_batch(seq, batch)[1][0]


def session_bytes(session_id: str, session: int, pending: int, now: int, salt: int) -> bytes:
    """A session file holding ``pending`` far-future one-shot reminders."""
    from tickler.adapters.stores._lines import header_line
    from tickler.core import SessionHeader

    parts = [header_line(SessionHeader(id=session_id, created_at=now))]
    for seq in range(pending):
        after_s = far_offset_ms(salt + seq) // 1000
        target = _instant(now + after_s * 1000).encode()
        prompt = prompt_for(session, seq).encode()
        line = LINE % (seq, now, seq + 1, prompt, after_s, target)
        checked = session < CHECKED_SESSIONS and seq < CHECKED_LINES
        if checked and line != _reference_line(seq, now, session, after_s):
            raise AssertionError(f"a generated line differs from the core's: {line!r}")
        parts.append(line)
    return b"".join(parts)


def write_sessions(directory: Path, prefix: str, counts: Sequence[int], now: int) -> int:
    """One file per entry of ``counts`` (its pending reminders), then one
    ``sync``, so the files are on disk like a previous run's. Returns bytes."""
    directory.mkdir(parents=True, exist_ok=True)
    total = salt = 0
    for session, pending in enumerate(counts):
        session_id = f"{prefix}{session}"
        data = session_bytes(session_id, session, pending, now, salt)
        (directory / f"{session_id}.jsonl").write_bytes(data)
        total += len(data)
        salt += pending
    os.sync()
    return total


def spread(total: int, sessions: int) -> list[int]:
    """``total`` reminders over ``sessions`` as evenly as possible."""
    base, extra = divmod(total, sessions)
    return [base + (1 if i < extra else 0) for i in range(sessions)]


# --------------------------------------------------------------------------------------
# tickler's workers: JsonlStore (fsync group commit), a ScheduleRuntime per
# session, the process's shared timer heap, and a host that is always idle,
# grants every claim and notes when each follow-up arrives.


class _Claim:
    def release(self) -> None:
        return None


class BenchHost:
    def __init__(self) -> None:
        self.arrivals: list[tuple[float, str]] = []  # (wall ms, occurrence instant)
        self._claim = _Claim()

    def claim_idle(self) -> IdleClaim | None:
        return self._claim

    async def when_idle(self) -> None:
        return None

    async def followup(self, message: FollowUp) -> None:
        self.arrivals.append((wall_ms(), message.occurrences[0].occurrence_at))

    def targeted(self) -> list[tuple[float, int]]:
        """Each arrival as (wall ms, its occurrence's instant in epoch ms)."""
        return [(arrived, instant_ms(target)) for arrived, target in self.arrivals]

    def lateness_ms(self) -> list[float]:
        return [arrived - target for arrived, target in self.targeted()]


def check_created(output: str) -> None:
    if not output.startswith('{"id":'):
        raise RuntimeError(f"schedule_create failed: {output}")


class Rig:
    """A store, the wall clock, the shared timer heap and the runtimes."""

    def __init__(self, directory: str) -> None:
        from tickler.adapters.stores._jsonl import JsonlStore
        from tickler.shell._clock import SystemClock

        self.fsync = TimedFsync()
        self.store = JsonlStore(directory, fsync=self.fsync)
        self.clock = SystemClock()
        self.host = BenchHost()
        self.runtimes: list[ScheduleRuntime] = []

    async def open(self, session_ids: Sequence[str], created_at: int) -> float:
        """Open and start a runtime per session; seconds taken."""
        from tickler.shell._runtime import ScheduleRuntime
        from tickler.shell._timers import shared_timers

        started = time.perf_counter()
        timers = shared_timers(self.clock)
        for first in range(0, len(session_ids), OPEN_BATCH):
            batch = session_ids[first : first + OPEN_BATCH]
            logs = await asyncio.gather(
                *(self.store.open(sid, created_at=created_at) for sid in batch)
            )
            for session_log in logs:
                runtime = ScheduleRuntime(session_log, self.host, self.clock, timers=timers)
                await runtime.start()
                self.runtimes.append(runtime)
        return time.perf_counter() - started

    def all_armed(self) -> bool:
        return all(rt.next_wake is not None or not rt.state.entries for rt in self.runtimes)

    def pending(self) -> int:
        """Reminders pending over every runtime."""
        return sum(len(rt.state.entries) for rt in self.runtimes)

    def creator(self, index: int) -> Callable[[Mapping[str, object]], Awaitable[str]]:
        """Runtime ``index``'s ``schedule_create``: its output, after its
        flush (check it with ``check_created``). Bound once, so that a loop
        of creates calls the runtime with nothing in between."""
        return functools.partial(self.runtimes[index].call_tool, CREATE)

    async def create_all(self, calls: Sequence[tuple[int, Mapping[str, object]]]) -> float:
        """``schedule_create`` calls ``(runtime index, args)``, all at once;
        seconds until the last returned."""
        t0 = time.perf_counter()
        outputs = await asyncio.gather(
            *(self.runtimes[i].call_tool(CREATE, args) for i, args in calls)
        )
        elapsed = time.perf_counter() - t0
        for output in outputs:
            check_created(output)
        return elapsed

    def note_first_wake(self, index: int, target: int, out: list[tuple[int, float]]) -> None:
        """Note when the timer heap first asks runtime ``index`` to look for
        due work at or after ``target`` (wall ms): the wake's share of the
        lateness. Set before the reminder is created, so the timer it arms
        calls the wrapper."""
        # The timer calls the deliverer's request_drive (the unit of work's
        # driver), read at each arm: wrapped on that instance.
        driver = self.runtimes[index]._work.driver
        drive = driver.request_drive
        noted = False

        def wrapped() -> None:
            nonlocal noted
            now = wall_ms()
            if not noted and now >= target:
                noted = True
                out.append((target, now))
            drive()

        driver.request_drive = wrapped  # type: ignore[method-assign]

    async def close(self) -> None:
        await asyncio.gather(*(rt.dispose() for rt in self.runtimes))
        await self.store.close()


@dataclass(frozen=True)
class Descriptors:
    """Open descriptors of the process around the store's steps."""

    before: int  # the store made, nothing open
    opened: int  # every session open
    appended: int  # one event appended to each, not flushed
    flushed: int  # every session flushed


async def count_descriptors(directory: str, sessions: int) -> Descriptors:
    """Open ``sessions`` sessions on a fresh store, append to each, flush
    each; count the process's open descriptors after every step."""
    from tickler.adapters.stores._jsonl import JsonlStore
    from tickler.shell._ports import NewEvent

    store = JsonlStore(directory)
    fds0 = open_fds()
    logs = [await store.open(f"p{i}", created_at=int(wall_ms())) for i in range(sessions)]
    fds1 = open_fds()
    for session_log in logs:
        session_log.append([NewEvent("probe", b"{}", int(wall_ms()))])
    fds2 = open_fds()
    await asyncio.gather(*(session_log.flush() for session_log in logs))
    fds3 = open_fds()
    await store.close()
    return Descriptors(before=fds0, opened=fds1, appended=fds2, flushed=fds3)


@dataclass(frozen=True)
class Started:
    """One session started in a fresh process: seconds from before the store
    is made, and the resident memory it added."""

    open_s: float  # the session opened
    armed_s: float  # its runtime's timer set
    loaded_s: float  # start() returned, the timer set
    cpu_s: float  # CPU time to armed
    pending: int
    rss_delta: int


async def start_session(directory: str, session_id: str, save: bool) -> Started:
    """Open the store and the session, start its runtime, wait until its timer
    is armed; then save a snapshot when asked."""
    from tickler.adapters.stores._jsonl import JsonlStore
    from tickler.shell._clock import SystemClock
    from tickler.shell._runtime import ScheduleRuntime
    from tickler.shell._timers import shared_timers

    rss0 = rss_bytes()
    t0, c0 = time.perf_counter(), time.process_time()
    measuring(True)
    store = JsonlStore(directory)
    clock = SystemClock()
    session_log = await store.open(session_id, created_at=0)
    t_open = time.perf_counter()
    timers = shared_timers(clock)
    runtime = ScheduleRuntime(session_log, BenchHost(), clock, timers=timers)
    # "Armed": the runtime's timer is set (from a snapshot's first bytes, it
    # is set before the state has loaded); "loaded": start() has returned.
    # Noted by the timer heap's ``arm`` itself, not by polling: a loop that
    # polls without sleeping takes the interpreter lock from the thread that
    # loads the state, which no real host does.
    armed = asyncio.Event()
    arm = timers.arm

    def noting(owner: object, at_ms: int, wake: Callable[[], None]) -> None:
        arm(owner, at_ms, wake)
        if runtime.next_wake is not None:  # whichever part of the runtime arms
            armed.set()

    timers.arm = noting  # type: ignore[method-assign]
    starting = asyncio.ensure_future(runtime.start())
    noted = asyncio.ensure_future(armed.wait())
    await asyncio.wait((starting, noted), timeout=60, return_when=asyncio.FIRST_COMPLETED)
    t_armed, c_armed = time.perf_counter(), time.process_time()
    del timers.arm  # the class's again
    noted.cancel()
    await starting
    await until_async(lambda: runtime.next_wake is not None, 60, 0)
    t_loaded = time.perf_counter()
    measuring(False)
    rss1 = rss_bytes()
    pending = len(runtime.state.entries)
    if save and not await runtime.save_snapshot():
        raise RuntimeError("save_snapshot failed")
    await runtime.dispose()
    await store.close()
    return Started(
        open_s=t_open - t0,
        armed_s=t_armed - t0,
        loaded_s=t_loaded - t0,
        cpu_s=c_armed - c0,
        pending=pending,
        rss_delta=rss1 - rss0,
    )
