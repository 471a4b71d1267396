"""Durable appends per second for the JSONL and SQLite stores, side by side
with the disk's own ceiling: one small write + fsync of one file; then what
the JSONL store costs besides the disk.

A durable append is ``append`` of one small event then ``flush``. Measured
with 1 in flight on one session, and with 64 sessions each having one in
flight (asyncio tasks). Each figure is the median of ``--rounds`` rounds;
ratios are to the raw fsync rate measured in the same run. Beside each rate:
the process's CPU time per durable append (all threads), the number that
does not depend on the disk.

Then, for the JSONL store only:

* file descriptors held per open session: at rest, with an append not yet
  flushed, and once flushed (until the journal's checkpoint);
* the time to open a session of ``--events`` events (one pending reminder
  each, like the runtime bench's big session) without and with a snapshot
  (``store.open`` only: the runtime's own load is not in it), median of
  ``--opens`` opens with a warm page cache.

    python bench/stores.py [--rounds 3] [--seconds 1.5] [--events 100000] [--dir PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tickler.adapters.stores._jsonl import JsonlStore
from tickler.adapters.stores._sqlite import SqliteStore
from tickler.shell._ports import NewEvent, SessionLog, SessionStore, Snapshot

EVENT = NewEvent(
    "schedule/change",
    b'{"v":1,"op":"create","id":"r1","kind":"after","prompt":"stand up","afterSeconds":60}',
    1_700_000_000_000,
)


def raw_fsync_rate(directory: Path, seconds: float, zeroed: bool = False) -> float:
    """Appends of one line to one file, each followed by fsync; with
    ``zeroed``, the lines overwrite zeros written and synced beforehand (as
    the JSONL store's journal writes its records)."""
    line = b'{"type":"schedule/change","seq":0,"time":0,"data":{}}\n' * 2
    flags = os.O_WRONLY | os.O_CREAT | (0 if zeroed else os.O_APPEND)  # pwrite ignores O_APPEND
    fd = os.open(directory / "raw", flags, 0o644)
    try:
        if zeroed:
            os.write(fd, bytes(64 << 20))
            os.fsync(fd)
        count, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            if zeroed:
                os.pwrite(fd, line, count * len(line))
            else:
                os.write(fd, line)
            os.fsync(fd)
            count += 1
    finally:
        os.close(fd)
    return count / elapsed


async def durable_rate(store: SessionStore, sessions: int, seconds: float) -> tuple[float, float]:
    """Durable appends per second, and CPU microseconds per durable append."""
    logs = [await store.open(f"s{index}", created_at=0) for index in range(sessions)]
    counts = [0] * sessions
    deadline = time.perf_counter() + seconds

    async def drive(index: int, log: SessionLog) -> None:
        while time.perf_counter() < deadline:
            log.append([EVENT])
            await log.flush()
            counts[index] += 1

    start, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(drive(index, log) for index, log in enumerate(logs)))
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    await store.close()
    total = sum(counts)
    return total / elapsed, cpu / max(total, 1) * 1e6


RAW = "raw write+fsync"
RAW_ZEROED = "raw overwrite zeros"  # + fsync: how the JSONL journal writes
STORES: dict[str, Callable[[Path], SessionStore]] = {
    "jsonl": lambda path: JsonlStore(path / "sessions"),
    "sqlite": lambda path: SqliteStore(path / "sessions.db"),
}
CASES = ("jsonl x1", "jsonl x64", "sqlite x1", "sqlite x64")


def one_round(base: Path, seconds: float) -> tuple[dict[str, float], dict[str, float]]:
    """Rates and CPU per append. The raw rate is measured before and after
    the stores (the disk's speed drifts), and averaged."""
    raw = [measure_raw(base, seconds)]
    rates: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for name, make in STORES.items():
        for sessions in (1, 64):
            work = Path(tempfile.mkdtemp(dir=base))
            try:
                store = make(work)
                case = f"{name} x{sessions}"
                rates[case], cpu[case] = asyncio.run(durable_rate(store, sessions, seconds))
            finally:
                shutil.rmtree(work)
    raw.append(measure_raw(base, seconds))
    rates[RAW] = statistics.mean(raw)
    rates[RAW_ZEROED] = measure_raw(base, seconds, zeroed=True)
    return rates, cpu


def measure_raw(base: Path, seconds: float, zeroed: bool = False) -> float:
    work = Path(tempfile.mkdtemp(dir=base))
    try:
        return raw_fsync_rate(work, seconds, zeroed)
    finally:
        shutil.rmtree(work)


def open_fds() -> int:
    return sum(1 for _ in Path("/proc/self/fd").iterdir())


async def descriptors(directory: Path, sessions: int = 200) -> tuple[float, float, float]:
    """Descriptors per open session: at rest, appended (not flushed), flushed."""
    store = JsonlStore(directory)
    before = open_fds()
    logs = [await store.open(f"p{index}", created_at=0) for index in range(sessions)]
    opened = open_fds()
    for log in logs:
        log.append([EVENT])
    appended = open_fds()
    await asyncio.gather(*(log.flush() for log in logs))
    flushed = open_fds()
    await store.close()
    return (
        (opened - before) / sessions,
        (appended - before) / sessions,
        (flushed - before) / sessions,
    )


def reminder(seq: int) -> NewEvent:
    """A create like the runtime appends (about 250 bytes a line)."""
    data = (
        b'{"version":1,"operation":"create","schedule":{"id":"schedule-%d","kind":"after",'
        b'"prompt":"check on build 0.%d","afterSeconds":%d,'
        b'"scheduledAt":"2026-01-02T03:04:05.000Z"}}'
    ) % (seq + 1, seq, 86_400 + seq)
    return NewEvent("schedule/change", data, 1_700_000_000_000)


async def reopen_times(directory: Path, events: int, opens: int) -> tuple[float, float]:
    """Median seconds for ``store.open`` of a big session, without and with a
    snapshot through its last event."""
    store = JsonlStore(directory)
    log = await store.open("big", created_at=0)
    for first in range(0, events, 5_000):
        log.append([reminder(seq) for seq in range(first, min(events, first + 5_000))])
    await store.close()

    async def timed() -> float:
        again = JsonlStore(directory)
        started = time.perf_counter()
        opened = await again.open("big", created_at=0)
        taken = time.perf_counter() - started
        if opened.length != events:
            raise RuntimeError(f"reopened with {opened.length} events, not {events}")
        await again.close()
        return taken

    cold = [await timed() for _ in range(opens)]
    store = JsonlStore(directory)
    log = await store.open("big", created_at=0)
    await log.save_snapshot(Snapshot(log.length, b'{"state":"opaque"}'))
    await store.close()
    warm = [await timed() for _ in range(opens)]
    return statistics.median(cold), statistics.median(warm)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument("--events", type=int, default=100_000, help="events in the big session")
    parser.add_argument("--opens", type=int, default=5, help="reopens timed, each way")
    parser.add_argument("--dir", type=Path, default=None, help="where to write (a temp dir)")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="tickler-bench-", dir=args.dir))
    try:
        rounds = [one_round(base, args.seconds) for _ in range(args.rounds)]
        per_open, per_appended, per_flushed = asyncio.run(descriptors(base / "fds"))
        cold, warm = asyncio.run(reopen_times(base / "big", args.events, args.opens))
    finally:
        shutil.rmtree(base)
    rates = {name: statistics.median(r[name] for r, _ in rounds) for name in rounds[0][0]}
    cpu = {name: statistics.median(c[name] for _, c in rounds) for name in CASES}
    ceiling = rates[RAW]
    print(f"durable appends/s, median of {args.rounds} rounds of {args.seconds:g}s")
    print(f"{'case':<20}{'per second':>12}{'x raw':>8}{'CPU us/append':>15}")
    print(f"{RAW:<20}{ceiling:>12,.0f}{1:>8.2f}")
    print(f"{RAW_ZEROED:<20}{rates[RAW_ZEROED]:>12,.0f}{rates[RAW_ZEROED] / ceiling:>8.2f}")
    for name in CASES:
        print(f"{name:<20}{rates[name]:>12,.0f}{rates[name] / ceiling:>8.2f}{cpu[name]:>15,.0f}")
    print(
        f"jsonl descriptors per session: {per_open:.2f} open, {per_appended:.2f} with an "
        f"unflushed append, {per_flushed:.2f} flushed"
    )
    print(
        f"jsonl open of a {args.events:,}-event session (median of {args.opens}): "
        f"{cold * 1000:,.1f} ms without a snapshot, {warm * 1000:,.1f} ms with one"
    )


if __name__ == "__main__":
    main()
