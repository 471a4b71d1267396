"""Durable appends per second for the JSONL and SQLite stores, side by side
with the disk's own ceiling: one small write + fsync of one file.

A durable append is ``append`` of one small event then ``flush``. Measured
with 1 in flight on one session, and with 64 sessions each having one in
flight (asyncio tasks). Each figure is the median of ``--rounds`` rounds;
ratios are to the raw fsync rate measured in the same run.

    python bench/stores.py [--rounds 3] [--seconds 1.5] [--dir PATH]
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

from tickler.adapters.stores.jsonl import JsonlStore
from tickler.adapters.stores.sqlite import SqliteStore
from tickler.shell.ports import NewEvent, SessionLog, SessionStore

EVENT = NewEvent(
    "schedule/change",
    b'{"v":1,"op":"create","id":"r1","kind":"after","prompt":"stand up","afterSeconds":60}',
    1_700_000_000_000,
)


def raw_fsync_rate(directory: Path, seconds: float) -> float:
    """Appends of one line to one file, each followed by fsync."""
    line = b'{"type":"schedule/change","seq":0,"time":0,"data":{}}\n' * 2
    fd = os.open(directory / "raw", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        count, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            os.write(fd, line)
            os.fsync(fd)
            count += 1
    finally:
        os.close(fd)
    return count / elapsed


async def durable_rate(store: SessionStore, sessions: int, seconds: float) -> float:
    logs = [await store.open(f"s{index}", created_at=0) for index in range(sessions)]
    counts = [0] * sessions
    deadline = time.perf_counter() + seconds

    async def drive(index: int, log: SessionLog) -> None:
        while time.perf_counter() < deadline:
            await log.append([EVENT])
            await log.flush()
            counts[index] += 1

    start = time.perf_counter()
    await asyncio.gather(*(drive(index, log) for index, log in enumerate(logs)))
    elapsed = time.perf_counter() - start
    await store.close()
    return sum(counts) / elapsed


RAW = "raw write+fsync"
STORES: dict[str, Callable[[Path], SessionStore]] = {
    "jsonl": lambda path: JsonlStore(path / "sessions"),
    "sqlite": lambda path: SqliteStore(path / "sessions.db"),
}


def one_round(base: Path, seconds: float) -> dict[str, float]:
    """The raw rate is measured before and after the stores (the disk's
    speed drifts), and averaged."""
    raw = [measure_raw(base, seconds)]
    results: dict[str, float] = {}
    for name, make in STORES.items():
        for sessions in (1, 64):
            work = Path(tempfile.mkdtemp(dir=base))
            try:
                store = make(work)
                results[f"{name} x{sessions}"] = asyncio.run(durable_rate(store, sessions, seconds))
            finally:
                shutil.rmtree(work)
    raw.append(measure_raw(base, seconds))
    results[RAW] = statistics.mean(raw)
    return results


def measure_raw(base: Path, seconds: float) -> float:
    work = Path(tempfile.mkdtemp(dir=base))
    try:
        return raw_fsync_rate(work, seconds)
    finally:
        shutil.rmtree(work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument("--dir", type=Path, default=None, help="where to write (a temp dir)")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="tickler-bench-", dir=args.dir))
    try:
        rounds = [one_round(base, args.seconds) for _ in range(args.rounds)]
    finally:
        shutil.rmtree(base)
    medians = {name: statistics.median(r[name] for r in rounds) for name in rounds[0]}
    ceiling = medians[RAW]
    print(f"durable appends/s, median of {args.rounds} rounds of {args.seconds:g}s")
    print(f"{'case':<20}{'per second':>12}{'x raw':>8}")
    for name in (RAW, "jsonl x1", "jsonl x64", "sqlite x1", "sqlite x64"):
        print(f"{name:<20}{medians[name]:>12,.0f}{medians[name] / ceiling:>8.2f}")


if __name__ == "__main__":
    main()
