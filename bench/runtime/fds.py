"""Before figures 3 to 5: how many file descriptors the JSONL store holds
per open session and per session written to, so that the sessions held
open in one process stay within the open-files limit."""

from __future__ import annotations

from typing import Any, Final

from . import harness
from .common import Record
from .context import Bench
from .workers import Worker, tickler_worker


class FdProbeParams(Record, frozen=True):
    directory: str
    sessions: int


class FdProbe(Record, frozen=True):
    per_open: float  # descriptors per open session
    per_appended: float  # per session appended to, not yet flushed (the peak)
    per_written: float  # per session written and flushed


async def tickler_fdprobe(p: FdProbeParams) -> FdProbe:
    fds = await harness.count_descriptors(p.directory, p.sessions)
    return FdProbe(
        per_open=(fds.opened - fds.before) / p.sessions,
        per_appended=(fds.appended - fds.opened) / p.sessions,
        per_written=(fds.flushed - fds.opened) / p.sessions,
    )


TICKLER: Final = tickler_worker("fdprobe", FdProbeParams, FdProbe, tickler_fdprobe, profiled=False)
WORKERS: Final[tuple[Worker[Any, Any], ...]] = (TICKLER,)


def measure(bench: Bench) -> None:
    """Probe the store; note its descriptors per session on ``bench``."""
    probe = bench.runner.run(TICKLER, FdProbeParams(directory=bench.fresh_dir("fds"), sessions=200))
    bench.per_open = max(probe.per_open, 0.5)
    bench.per_written = max(probe.per_appended, probe.per_written, 0.0)
    bench.fd_note = (
        f"the hard open-files limit is {bench.fd_limit:,}; the JSONL store holds "
        f"{bench.per_open:.1f} descriptors per open session, plus "
        f"{probe.per_appended:.1f} per session appended to and not yet flushed "
        f"({probe.per_written:.1f} once flushed, until the journal's checkpoint)"
    )
