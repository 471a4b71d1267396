"""The cold bench's scale and targets, and one run's state: the stores it
generated, the worker runner, the rows and notes gathered so far."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from bench.runtime.report import Row
from bench.runtime.workers import Runner

from .stores import ApsCold, ColdStore


@dataclass(frozen=True)
class Scale:
    sessions: int = 100_000  # cold sessions in the large store
    small: int = 1_000  # and in the small one (figures 2 and 4)
    due: int = 2_000  # occurrences due in the lateness window, one per session
    window_s: float = 20.0  # spread evenly over it
    lead_s: float = 10.0  # from writing them to the window's start (the worker starts)
    drain_s: float = 30.0  # waited for after the window's end
    start_runs: int = 3  # fresh worker processes per start figure (the median)
    linger_s: float = 1.0  # the worker runs on after its last delivery, before RSS is read
    calls: int = 2_000  # timed calls per index query (the median)


DEFAULT: Final = Scale()
QUICK: Final = Scale(
    sessions=10_000, due=500, window_s=5.0, lead_s=5.0, drain_s=10.0, start_runs=1, calls=500
)

# Targets (issue 26)
T_FIRST_S: Final = 2.0  # worker start to first delivery, 100,000 sessions
T_RSS: Final = 150 * 2**20  # peak resident memory, 100,000 sessions
T_FLAT: Final = 1.3  # 100,000 / 1,000 sessions: memory and the cost of finding what is due
T_P99_MS: Final = 50.0  # firing lateness p99

SAMPLE_FAR: Final = 40  # the correctness check's small store
SAMPLE_DUE: Final = 10
SAMPLE_LOOK: Final = 5  # far sessions whose rows it marks "look again"


@dataclass
class Cold:
    """One run of the bench."""

    scale: Scale
    root: Path
    runner: Runner
    profile: bool
    now: int  # when the far-future sessions were made, epoch ms
    stores: dict[tuple[str, int], ColdStore] = field(default_factory=dict)  # (kind, sessions)
    peers: dict[int, ApsCold] = field(default_factory=dict)  # by sessions
    rows: dict[int, list[Row]] = field(default_factory=lambda: {n: [] for n in range(1, 5)})
    notes: list[str] = field(default_factory=list)
    profiles: list[tuple[str, Path]] = field(default_factory=list)

    @property
    def sizes(self) -> tuple[int, int]:
        return self.scale.small, self.scale.sessions

    def run_size(self, sessions: int) -> int:
        """Sessions of each run in a store of ``sessions`` (the rest are far
        ahead, written once): the lateness window's in the large store."""
        return self.scale.due if sessions == self.scale.sessions else 1

    def profile_path(self, name: str) -> Path | None:
        """Where a profiled tickler worker writes its profile (None: not profiled)."""
        if not self.profile:
            return None
        path = self.root / f"{name}-{len(self.profiles)}.prof"
        self.profiles.append((name, path))
        return path

    def all_rows(self) -> list[Row]:
        return [row for n in sorted(self.rows) for row in self.rows[n]]


def ratio(large: float, small: float) -> float:
    return large / small if small > 0 else math.nan
