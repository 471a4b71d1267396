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

The heap pauses only while such a job is out (``HAND_BACKS``): a pause
stops the whole loop while it lasts, so another task pays it at each of
its awaits.

Each round arms the real heap on the real clock 3 ms ahead with its margin
at the cap (so it yields from the start) and, at the same moment, hands a
``SyncThread`` (the stores' sync thread) a job that sleeps 1 ms in place of
an fsync (or, in the rounds without a job, none), while another task awaits
20 times: the job always ends within the yield, the case the pause is
for. Measured: the time from the job's hand-over to the loop running
its completion, less the job's 1 ms (the thread must take the GIL back
after the sleep, and again to hand the result over), and the wake's
lateness after the target, and how long the other task's awaits took.
The peer, in the same run and alternating round by round, is the same
heap with its pause switched off (it only yields, as it did before).

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
HOPS = 20  # another task's awaits during the wait


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered), max(1, math.ceil(p / 100 * len(ordered)))) - 1]


class Figures:
    def __init__(self) -> None:
        self.back: list[float] = []  # the job's hand-back, ms
        self.hops: list[float] = []  # another task's HOPS awaits, ms
        self.late: list[float] = []  # the wake after the target, ms


async def hops() -> float:
    """``HOPS`` awaits of another task on the loop, ms."""
    began = time.perf_counter_ns()
    for _ in range(HOPS):
        await asyncio.sleep(0)
    return (time.perf_counter_ns() - began) / 1e6


async def one_round(heap: TimerHeap, syncer: SyncThread | None, out: Figures) -> None:
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
    if syncer is not None:
        syncer.submit(job, done)
    await asyncio.sleep(0)  # the heap starts to yield
    out.hops.append(await hops())
    if syncer is not None:
        out.back.append((await handed - submitted) / 1e6 - JOB_S * 1e3)
    out.late.append((await woke - target_ms * 1_000_000) / 1e6)


async def run(rounds: int) -> dict[tuple[str, bool], Figures]:
    clock = SystemClock()
    pausing, spinning = TimerHeap(clock), TimerHeap(clock)
    spinning._pause = None  # the peer: yields only
    heaps = {PAUSING: pausing, SPINNING: spinning}
    figures = {(name, job): Figures() for name in heaps for job in (True, False)}
    syncer = SyncThread("bench-sync")
    try:
        for warm in (True, False):  # a first pass starts the thread, warms the loop
            for n in range(20 if warm else rounds):
                order = list(heaps.items()) if n % 2 else list(reversed(heaps.items()))
                for job in (True, False):
                    for name, heap in order:
                        out = Figures() if warm else figures[name, job]
                        await one_round(heap, syncer if job else None, out)
                        await asyncio.sleep(0.002)
    finally:
        syncer.stop()
        await pausing.close()
        await spinning.close()
    return figures


PAUSING = "pause while a job is out"
SPINNING = "yield only (the peer)"


def p50_p99(values: Sequence[float]) -> str:
    if not values:
        return "-"
    return f"{percentile(values, 50):.2f} / {percentile(values, 99):.2f} ms"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.timer_yield")
    parser.add_argument("--rounds", type=int, default=300, help="rounds of each (default 300)")
    args = parser.parse_args(argv)
    print(
        f"timer heap yielding for {AHEAD_MS} ms before a target; a sync thread's "
        f"{JOB_S * 1e3:.0f} ms job handed back meanwhile (or none), and another task's "
        f"{HOPS} awaits; {args.rounds} rounds each, alternating; "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
    )
    figures = asyncio.run(run(args.rounds))
    head = f"{'':26} {'job':4} {'hand-back p50 / p99':>20} {HOPS} awaits p50 / p99"
    print(f"{head:>50} {'wake after target p50 / p99':>29}")
    for (name, job), f in figures.items():
        print(
            f"{name:26} {'yes' if job else 'no':4} {p50_p99(f.back):>20} "
            f"{p50_p99(f.hops):>22} {p50_p99(f.late):>29}"
        )
    ours, peer = figures[PAUSING, True].back, figures[SPINNING, True].back
    print(
        f"hand-back p99, {SPINNING} / {PAUSING}: "
        f"{percentile(peer, 99) / percentile(ours, 99):.1f}x (the job always ends within "
        "the yield here: the case the pause is for)"
    )


if __name__ == "__main__":
    main()
