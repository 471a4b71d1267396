"""``python -m bench.cold [--quick] [--profile] [--keep]``: the cold bench's
command line (see the package's docstring); also how each worker process
starts (``--worker NAME PARAMS``)."""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from bench.runtime.common import log, wall_ms
from bench.runtime.report import print_report
from bench.runtime.workers import Runner, Worker, WorkerFailed, worker_main

from . import data, index, lateness, peer, start
from .check import CheckFailed, check_sample
from .plan import DEFAULT, QUICK, Cold
from .process import shown

WORKERS: Final[dict[str, Worker[Any, Any]]] = {
    worker.name: worker for worker in (*peer.WORKERS, *index.WORKERS)
}
SCENARIOS: Final[tuple[Callable[[Cold], None], ...]] = (
    start.measure,
    lateness.measure,
    index.measure,
)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.cold",
        description="tickler worker --store on 100,000 cold sessions vs APScheduler 3",
    )
    parser.add_argument("--quick", action="store_true", help="smaller scale (about 2 minutes)")
    parser.add_argument(
        "--profile", action="store_true", help="also profile tickler's workers (slower)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the generated data")
    parser.add_argument("--worker", nargs=2, metavar=("NAME", "PARAMS"), help=argparse.SUPPRESS)
    parser.add_argument("--profile-to", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker is not None:
        worker_main(WORKERS, args.worker[0], args.worker[1], args.profile_to)
        return 0
    scale = QUICK if args.quick else DEFAULT
    began = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="tickler-cold-"))
    runner = Runner(root / "profiles" if args.profile else None, module="bench.cold")
    if runner.profile_dir is not None:
        runner.profile_dir.mkdir()
    cold = Cold(scale, root, runner, args.profile, now=int(wall_ms()))
    print(
        f"tickler cold-session bench{' (--quick: smaller scale)' if args.quick else ''}: "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, load average "
        f"{' '.join(f'{v:.1f}' for v in os.getloadavg())} at start, "
        f"{time.strftime('%Y-%m-%d %H:%M %Z')}; data in {root}"
    )
    print(f"command: python -m bench.cold{' --quick' if args.quick else ''}")
    print(f"tickler: {shown(Path('STORE'))} (STORE: a JSONL directory or an SQLite file)")
    print(
        "APScheduler 3: BackgroundScheduler + SQLAlchemyJobStore(sqlite), one date job per session"
    )
    sys.stdout.flush()
    failed = False
    try:
        data.generate(cold)
        cold.notes += check_sample(cold)
        for scenario in SCENARIOS:
            try:
                scenario(cold)
            except (WorkerFailed, CheckFailed, RuntimeError) as exc:
                failed = True
                cold.notes.append(f"FAILED: {exc}; its figures are missing")
                log(f"FAILED: {exc}")
        profiles = None
        if args.profile:
            profiles = [*cold.profiles, *runner.profiles]
            cold.notes.append(
                "--profile: a 'tickler worker' profile covers its whole process, main thread "
                "only (cProfile does not follow the store's threads)"
            )
        print_report(cold.all_rows(), [*cold.notes, *runner.warnings], profiles)
    except CheckFailed as exc:
        print(f"the correctness check FAILED: {exc}")
        failed = True
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(
        f"\ntotal wall time {time.perf_counter() - began:.0f} s; load average "
        f"{' '.join(f'{v:.1f}' for v in os.getloadavg())} at the end"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
