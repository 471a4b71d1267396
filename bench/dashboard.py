"""The dashboard and ``tickler reminders --limit 10`` over a large embedded
store (5,000 sessions holding 60,000 reminders by default), beside a read of
every session, for a JSONL directory and an SQLite file.

    python -m bench.dashboard [--sessions N] [--reminders N] [--runs N]

The store is written straight to disk with its wake index rows
(``bench/embedded_sessions.py``: its first sessions are checked against
the real stores). Then, for each store:

* ``tickler reminders SOURCE --limit 10`` as a process: the first run, then
  the median of ``--runs`` more (the page cache warm); beside it ``tickler
  --version`` (Python's and the CLI's start-up) and ``--limit 0`` (every
  session read: what ``--limit 10`` cost before the wake index);
* the read model in this process: ``--limit 10`` and every session, on a
  fresh model (cold) and again on the same one (warm, summaries kept);
* ``tickler ui`` served by uvicorn: the first page (cold), a page within
  the refresh interval (the shared read), a page after it (a new read,
  warm), and five requests at once after it (each one's time).

With ``--earlier DIR`` (a folder holding an earlier version's ``tickler``
package, e.g. a ``git worktree`` of an older commit named ``tickler``), the
processes (``tickler reminders``, ``tickler ui``) run that version too, on
the same stores, in the same run: the figures to compare with. No figure
is asserted: the machine may be shared.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Final

from bench.embedded_sessions import (
    captured,
    check_against_stores,
    plans,
    write_jsonl,
    write_sqlite,
)
from tickler.adapters import open_read_model

TICKLER: Final = [sys.executable, "-m", "tickler.adapters.cli"]
REFRESH_S: Final = 2
URL_LINE: Final = re.compile(r"^tickler ui: (http://127\.0\.0\.1:\d+/)")
BEFORE: Final = (
    "before (issue figures, 5,000 sessions / 60,000 reminders, JSONL): page 4.1 s cold, "
    "2.7 s warm; five at once 15 s each; tickler reminders --limit 10: 2.5 s"
)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.0f} ms"


def version_env(earlier: str | None) -> dict[str, str] | None:
    """The environment of a process running the earlier version (None: this one)."""
    if earlier is None:
        return None
    return {**os.environ, "PYTHONPATH": earlier}


def process_s(args: list[str], env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run([*TICKLER, *args], capture_output=True, check=False, env=env)
    if done.returncode != 0:
        sys.exit(f"bench: tickler {' '.join(args)} failed: {done.stderr.decode()}")
    return time.perf_counter() - started


def first_and_median(run: Callable[[], float], runs: int) -> tuple[float, float]:
    first = run()
    return first, statistics.median(run() for _ in range(runs))


async def in_process(source: str, now_ms: int, runs: int) -> None:
    for name, limit in (("--limit 10", 10), ("every session", None)):
        async with open_read_model(source) as model:
            times = []
            for _ in range(1 + runs):
                started = time.perf_counter()
                await model.reminders(now_ms=now_ms, limit=limit)
                times.append(time.perf_counter() - started)
        cold, warm = times[0], statistics.median(times[1:])
        print(f"  read model, {name:<16}            cold {ms(cold)}, warm {ms(warm)}")


def get_s(url: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=600) as response:
        body = response.read()
        if response.status != 200 or b"tickler" not in body:
            sys.exit(f"bench: the dashboard answered {response.status}")
    return time.perf_counter() - started


def at_once(url: str, count: int) -> list[float]:
    """``count`` requests sent together (threads), each one's time."""
    times = [0.0] * count
    go = threading.Barrier(count)

    def one(n: int) -> None:
        go.wait()
        times[n] = get_s(url)

    threads = [threading.Thread(target=one, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times


def dashboard(source: str, env: dict[str, str] | None, label: str) -> None:
    args = ["ui", "--store", source, "--port", "0", "--refresh", str(REFRESH_S), "--tz", "UTC"]
    proc = subprocess.Popen([*TICKLER, *args], stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = URL_LINE.match(line)
        if found is None:
            sys.exit(f"bench: tickler ui said {line!r}")
        url = found.group(1)
        cold = get_s(url)
        shared = get_s(url)
        time.sleep(REFRESH_S)
        warm = get_s(url)
        time.sleep(REFRESH_S)
        five = at_once(url, 5)
        print(
            f"  {label}dashboard page (--refresh {REFRESH_S}): cold {ms(cold)}, "
            f"warm (a new read) {ms(warm)}, within the interval {ms(shared)}"
        )
        print(
            f"  {label}five requests at once (a new read): {', '.join(ms(t).strip() for t in five)}"
        )
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)


def processes(source: str, runs: int, env: dict[str, str] | None, label: str) -> None:
    def limit_10() -> float:
        return process_s(["reminders", source, "--limit", "10"], env)

    first, warm = first_and_median(limit_10, runs)
    start_up = statistics.median(process_s(["--version"], env) for _ in range(runs))
    every_first, every_warm = first_and_median(
        lambda: process_s(["reminders", source, "--limit", "0", "--json"], env), 1
    )
    print(
        f"  {label}tickler reminders --limit 10 (a process): first {ms(first)}, "
        f"warm {ms(warm)}  [tickler --version: {ms(start_up).strip()}]"
    )
    print(
        f"  {label}tickler reminders --limit 0 (every session): first {ms(every_first)}, "
        f"warm {ms(every_warm)}"
    )


async def bench_store(kind: str, source: str, now_ms: int, runs: int, earlier: str | None) -> None:
    print(f"{kind}:")
    processes(source, runs, None, "")
    await in_process(source, now_ms, runs)
    dashboard(source, None, "")
    if earlier is not None:
        processes(source, runs, version_env(earlier), "earlier version: ")
        dashboard(source, version_env(earlier), "earlier version: ")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=5_000)
    parser.add_argument("--reminders", type=int, default=60_000)
    parser.add_argument("--runs", type=int, default=5, help="warm runs (median)")
    parser.add_argument("--dir", default=None, help="where to write the stores (default: tmp)")
    parser.add_argument("--earlier", default=None, help="a folder holding an earlier tickler")
    args = parser.parse_args()
    t0 = time.time_ns() // 1_000_000
    plan = plans(args.sessions, args.reminders, seed=25)
    await check_against_stores(plan, t0)
    root = Path(tempfile.mkdtemp(prefix="tickler-bench-", dir=args.dir))
    try:
        started = time.perf_counter()
        logs = await captured(plan, t0)
        write_jsonl(root / "jsonl", logs)
        write_sqlite(root / "store.db", logs)
        os.sync()
        events = sum(log.length for log in logs)
        print(
            f"{args.sessions:,} sessions, {events:,} events written in "
            f"{time.perf_counter() - started:.0f} s"
        )
        now_ms = time.time_ns() // 1_000_000
        async with open_read_model(str(root / "jsonl")) as model:
            every = await model.reminders(now_ms=now_ms)
        print(f"{len(every):,} reminders ({sum(v.paused for v in every):,} paused)")
        print(BEFORE)
        for kind, source in (("JSONL directory", "jsonl"), ("SQLite file", "store.db")):
            await bench_store(kind, str(root / source), now_ms, args.runs, args.earlier)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
