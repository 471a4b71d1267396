"""APScheduler's side of figures 1 to 3 in a process of its own, importing
what an APScheduler process needs and nothing of the bench's: a
BackgroundScheduler on its SQLAlchemy job store (SQLite), whose date jobs
run :func:`bench.cold.target.fired`. ``python -m bench.cold.aps_start
PARAMS``, PARAMS a JSON object: ``path`` (the job store), ``expect`` (job
runs to wait for), ``until_ms`` (give up then, wall ms), ``linger_s`` (then
run on for so long). It prints one JSON line: whether all ran, its peak
resident memory (VmHWM) and its CPU time per job run from the first to the
last; the runs themselves are in the notes file (see the target)."""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import UTC
from pathlib import Path


def peak_rss() -> int:
    """This process's peak resident set size, bytes (VmHWM)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def main() -> None:
    params = json.loads(sys.argv[1])
    from apscheduler.jobstores.sqlalchemy import (  # type: ignore[import-untyped]
        SQLAlchemyJobStore,
    )
    from apscheduler.schedulers.background import (  # type: ignore[import-untyped]
        BackgroundScheduler,
    )

    from .target import fired_cpu

    store = SQLAlchemyJobStore(url=f"sqlite:///{params['path']}")
    sched = BackgroundScheduler(jobstores={"default": store}, timezone=UTC)
    sched.start()
    while len(fired_cpu()) < params["expect"] and time.time() * 1000 < params["until_ms"]:
        time.sleep(0.01)
    time.sleep(params["linger_s"])
    cpu = fired_cpu()
    per_job_ms = (cpu[-1] - cpu[0]) * 1000 / (len(cpu) - 1) if len(cpu) > 1 else float("nan")
    print(
        json.dumps(
            {
                "complete": len(cpu) >= params["expect"],
                "peak_rss": peak_rss(),
                "cpu_ms": per_job_ms,
            }
        ),
        flush=True,
    )
    # Its scheduler thread may be mid-round: leave without waiting for it.
    os._exit(0)


if __name__ == "__main__":
    main()
