"""A store's hand-back while the timer heap yields before a target.

Just before a target the timer heap stops sleeping and yields to the event
loop until the target comes (see ``shell/_timers.py``). Meanwhile another
thread may finish a job for the loop: a store's sync thread, after its
fsync. That thread needs the GIL to hand its result back. A loop that only
yields (``asyncio.sleep(0)``) releases the GIL and takes it straight back,
and CPython hands it to a waiting thread on request only after its switch
interval (5 ms), so the job's result may wait for the whole yield. The
heap therefore pauses its thread a little (``SystemClock.pause``) between
yields.

Each round arms the real heap on the real clock 3 ms ahead with its margin
at the cap (so it yields from the start) and, at the same moment, hands a
``SyncThread`` (the stores' sync thread) a job that sleeps 1 ms in place of
an fsync. Measured: the time from the job's hand-over to the loop running
its completion, less the job's 1 ms (the thread must take the GIL back
after the sleep, and again to hand the result over), and the wake's
lateness after the target. The peer, in the
same run and alternating round by round, is the same heap with its pause
switched off (it only yields, as it did before).

Run from the repository root: ``python -m bench.timer_yield [--rounds N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import time
from collections.abc import Sequence

from tickler.adapters.stores._committer import SyncThread
from tickler.shell._clock import SystemClock
from tickler.shell._timers import MAX_MARGIN_S, TimerHeap

JOB_S = 0.001  # the stand-in fsync
AHEAD_MS = 3  # the target, from the round's start


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered), max(1, math.ceil(p / 100 * len(ordered)))) - 1]


async def one_round(heap: TimerHeap, syncer: SyncThread) -> tuple[float, float]:
    """(hand-back delay, wake lateness), ms."""
    loop = asyncio.get_running_loop()
    handed = loop.create_future()
    woke = loop.create_future()

    def job() -> None:
        time.sleep(JOB_S)

    def done(error: BaseException | None) -> None:
        handed.set_result(time.perf_counter_ns())

    target_ms = time.time_ns() // 1_000_000 + AHEAD_MS
    heap.margin_s = MAX_MARGIN_S
    heap.arm("round", target_ms, lambda: woke.set_result(time.time_ns()))
    submitted = time.perf_counter_ns()
    syncer.submit(job, done)
    back_ns = await handed
    woke_ns = await woke
    return (back_ns - submitted) / 1e6 - JOB_S * 1e3, (woke_ns - target_ms * 1_000_000) / 1e6


async def run(rounds: int) -> dict[str, tuple[list[float], list[float]]]:
    clock = SystemClock()
    pausing, spinning = TimerHeap(clock), TimerHeap(clock)
    spinning._pause = None  # the peer: yields only
    heaps = {"pause between yields": pausing, "yield only (before)": spinning}
    figures: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in heaps}
    syncer = SyncThread("bench-sync")
    try:
        for n in range(rounds):
            for name, heap in heaps.items() if n % 2 else reversed(heaps.items()):
                back, late = await one_round(heap, syncer)
                figures[name][0].append(back)
                figures[name][1].append(late)
                await asyncio.sleep(0.002)
    finally:
        syncer.stop()
        await pausing.close()
        await spinning.close()
    return figures


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.timer_yield")
    parser.add_argument("--rounds", type=int, default=500, help="rounds of each (default 500)")
    args = parser.parse_args(argv)
    print(
        f"timer heap yielding before a target, a sync thread's {JOB_S * 1e3:.0f} ms job "
        f"handed back meanwhile; {args.rounds} rounds each, alternating; "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
    )
    figures = asyncio.run(run(args.rounds))
    print(f"{'':24} {'hand-back p50':>14} {'p99':>8} {'max':>8} {'wake late p50':>14} {'p99':>8}")
    for name, (back, late) in figures.items():
        print(
            f"{name:24} {percentile(back, 50):11.2f} ms {percentile(back, 99):5.2f} ms "
            f"{max(back):5.2f} ms {percentile(late, 50):11.2f} ms {percentile(late, 99):5.2f} ms"
        )
    ours, peer = figures["pause between yields"][0], figures["yield only (before)"][0]
    print(
        f"hand-back p99, yield only / pause between yields: "
        f"{percentile(peer, 99) / percentile(ours, 99):.1f}x"
    )


if __name__ == "__main__":
    main()
