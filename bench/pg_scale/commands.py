"""The commands an operator runs against the loaded schema, timed as
processes (the median of ``RUNS``; Python's start-up and the CLI's imports
are in each, and ``tickler --help`` shows how much that is):

* ``tickler reminders DSN --schema S --due-within 1h``, while the burst's
  sessions are due (it lists the first 100 of them) and once nothing is
  due within the hour;
* ``tickler db migrate`` on the loaded schema, up to date (what a deploy
  runs every time), and from version 2 (it builds the version-3 pause
  index over every event: the cost of that upgrade at this size).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Final

import psycopg

from .load import SCHEMA

RUNS: Final = 3
TICKLER: Final = str(Path(sys.executable).with_name("tickler"))


def reminders_argv(dsn: str) -> list[str]:
    return [TICKLER, "reminders", dsn, "--schema", SCHEMA, "--due-within", "1h"]


def migrate_argv(dsn: str) -> list[str]:
    return [TICKLER, "db", "migrate", "--dsn", dsn, "--schema", SCHEMA]


def run_s(argv: list[str], runs: int = RUNS) -> float:
    """The median wall time of ``argv``, which must exit 0."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, check=False)
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[:3])} failed: {done.stderr.decode()[-500:]}")
    return statistics.median(times)


def start_up_s() -> float:
    return run_s([TICKLER, "--help"])


def migrate_from_v2_s(dsn: str) -> float:
    """Put the schema back to version 2 (no pause index), time one migrate."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP INDEX {SCHEMA}.events_paused")
        conn.execute(f"DELETE FROM {SCHEMA}.migrations WHERE version = 3")
    return run_s(migrate_argv(dsn), runs=1)
