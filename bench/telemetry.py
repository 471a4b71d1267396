"""What telemetry costs the runtime's hot paths, in one process.

Run ``python -m bench.telemetry`` from the repository root (about a
minute; ``--quick`` for a few seconds). Three ways to run, taking turns in
each round on the same memory log and virtual clock (no fsync, no sleeping,
so the figure is the runtime's own CPU time):

* ``off``: as without the ``otel`` extra (the OpenTelemetry API hidden);
* ``api``: the API installed and no SDK set up (the API's no-op
  instruments; no span started);
* ``metrics``: the SDK's meter provider set up, no tracer provider (metrics
  aggregated, no span started);
* ``sdk``: the SDK set up: metrics aggregated, spans recorded and handed to
  a processor that drops them (an exporter's own cost is not counted).

Figures: CPU time per tool call (a create and a delete, a list) and per
delivery (one-shots due at once in one session, each a hand-over), the
median over rounds, and each way's cost over ``off``'s. Only ratios
measured in the same run mean much: the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import platform
import statistics
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Final

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from tickler.adapters.stores._memory import MemoryLog
from tickler.core import SessionHeader
from tickler.shell import _telemetry
from tickler.shell._clock import VirtualClock
from tickler.shell._host import FollowUp, IdleClaim, ReleaseOnce
from tickler.shell._runtime import ScheduleRuntime
from tickler.shell._timers import TimerHeap

T0: Final = 1_785_931_200_000
WAYS: Final = ("off", "api", "metrics", "sdk")


class _Drop(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


class _Host:
    """Takes every follow-up at once."""

    def __init__(self) -> None:
        self.taken = 0
        self.expected = 0
        self.done = asyncio.Event()

    def claim_idle(self) -> IdleClaim | None:
        return ReleaseOnce(lambda: None)

    async def when_idle(self) -> None:
        return None

    async def followup(self, message: FollowUp) -> None:
        self.taken += 1
        if self.taken == self.expected:
            self.done.set()


def use(way: str) -> None:
    """Make ``way`` the telemetry of this process."""
    if way == "off":
        _telemetry._otel = None
    elif way == "api":
        _telemetry.use_providers()
    elif way == "metrics":
        _telemetry.use_providers(MeterProvider(metric_readers=[InMemoryMetricReader()]))
    else:
        tracers = TracerProvider()
        tracers.add_span_processor(SimpleSpanProcessor(_Drop()))
        _telemetry.use_providers(MeterProvider(metric_readers=[InMemoryMetricReader()]), tracers)


async def session() -> tuple[ScheduleRuntime, VirtualClock, TimerHeap, _Host]:
    clock = VirtualClock(T0)
    timers = TimerHeap(clock)
    host = _Host()
    runtime = ScheduleRuntime(
        MemoryLog(SessionHeader(id="bench", created_at=T0)), host, clock, timers=timers
    )
    await runtime.start()
    return runtime, clock, timers, host


async def tools(calls: int) -> float:
    """CPU seconds per call: creates and deletes in turn, then lists."""
    runtime, _, timers, _ = await session()
    create = {"prompt": "p", "after_seconds": 3600}
    started = time.process_time()
    for n in range(calls // 2):
        await runtime.call_tool("schedule_create", create)
        await runtime.call_tool("schedule_delete", {"id": f"schedule-{n + 1}"})
    elapsed = time.process_time() - started
    await runtime.dispose()
    await timers.close()
    return elapsed / (calls // 2 * 2)


async def lists(calls: int) -> float:
    runtime, _, timers, _ = await session()
    started = time.process_time()
    for _ in range(calls):
        await runtime.call_tool("schedule_list", {})
    elapsed = time.process_time() - started
    await runtime.dispose()
    await timers.close()
    return elapsed / calls


async def deliveries(count: int) -> float:
    """CPU seconds per delivery: ``count`` one-shots due at once."""
    runtime, clock, timers, host = await session()
    for _ in range(count):
        await runtime.call_tool("schedule_create", {"prompt": "p", "after_seconds": 1})
    host.expected = count
    started = time.process_time()
    clock.set_wall(T0 + 2_000)
    runtime.request_drive()
    await host.done.wait()
    elapsed = time.process_time() - started
    await runtime.dispose()
    await timers.close()
    return elapsed / count


def measure(
    name: str, probe: Callable[[int], Coroutine[object, object, float]], size: int, rounds: int
) -> dict[str, float]:
    samples: dict[str, list[float]] = {way: [] for way in WAYS}
    for _ in range(rounds):
        for way in WAYS:
            use(way)
            gc.collect()
            samples[way].append(asyncio.run(probe(size)))
    medians = {way: statistics.median(values) for way, values in samples.items()}
    off = medians["off"]
    cells = "  ".join(
        f"{way} {1e6 * medians[way]:6.1f} us ({medians[way] / off:4.2f}x)" for way in WAYS
    )
    print(f"{name:<34} {cells}", flush=True)
    return medians


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.telemetry", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer calls and rounds")
    args = parser.parse_args(argv)
    size, rounds = (1_000, 3) if args.quick else (4_000, 7)
    print(
        f"telemetry cost on the runtime's hot paths: Python {platform.python_version()}, "
        f"{rounds} rounds, CPU time per operation, median (x: over off)"
    )
    measure("tool call (create, delete)", tools, size, rounds)
    measure("tool call (list)", lists, size, rounds)
    measure("delivery (one-shots due at once)", deliveries, size // 4, rounds)
    use("api")


if __name__ == "__main__":
    main()
