"""``python -m bench.runtime [--quick] [--profile] [--keep]``: the runtime
bench's command line (see the package's docstring); also how each worker
process starts (``--worker NAME PARAMS``)."""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from . import burst, creates, fds, lateness, startup
from .common import DEFAULT, QUICK
from .context import Bench
from .report import print_report
from .workers import Runner, Worker, WorkerFailed, worker_main

WORKERS: Final[dict[str, Worker[Any, Any]]] = {
    worker.name: worker
    for worker in (
        *creates.WORKERS,
        *fds.WORKERS,
        *lateness.WORKERS,
        *burst.WORKERS,
        *startup.WORKERS,
    )
}
# Run in this order, each in turn; the descriptor probe comes first.
SCENARIOS: Final[tuple[Callable[[Bench], None], ...]] = (
    creates.measure,
    lateness.measure,
    burst.measure,
    startup.measure,
)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.runtime", description="tickler runtime benchmarks vs APScheduler 3"
    )
    parser.add_argument("--quick", action="store_true", help="smaller scale (about a minute)")
    parser.add_argument(
        "--profile", action="store_true", help="also profile tickler's workers (slower)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the generated data")
    parser.add_argument("--worker", nargs=2, metavar=("NAME", "PARAMS"), help=argparse.SUPPRESS)
    parser.add_argument("--profile-to", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    if args.worker is not None:
        worker_main(WORKERS, args.worker[0], args.worker[1], args.profile_to)
        return
    scale = QUICK if args.quick else DEFAULT
    began = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="tickler-bench-"))
    runner = Runner(root / "profiles" if args.profile else None)
    if runner.profile_dir is not None:
        runner.profile_dir.mkdir()
    load = os.getloadavg()[0]
    print(
        f"tickler runtime bench{' (--quick: smaller scale)' if args.quick else ''}: "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, load {load:.1f} at start; "
        f"data in {root}"
    )
    print(
        "tickler: JsonlStore + ScheduleRuntime; APScheduler 3 BackgroundScheduler + "
        "SQLAlchemyJobStore(sqlite), both durable per call",
        flush=True,
    )
    bench = Bench(scale, root, runner)
    try:
        fds.measure(bench)
        for scenario in SCENARIOS:
            try:
                scenario(bench)
            except WorkerFailed as exc:
                bench.notes.append(f"FAILED: {exc}; its figures are missing")
        print_report(
            bench.all_rows(),
            [*bench.notes, *runner.warnings],
            None if runner.profile_dir is None else runner.profiles,
        )
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(
        f"\ntotal wall time {time.perf_counter() - began:.0f} s; load {os.getloadavg()[0]:.1f} "
        "at the end"
    )


if __name__ == "__main__":
    main()
