"""One run's state, shared by its scenarios in turn: the scale, the data
directory, the worker runner, the rows and notes gathered so far, and what
an earlier scenario learned that a later one needs (the store's descriptors
per session, the create rate)."""

from __future__ import annotations

import math
import resource
from pathlib import Path

from .common import FD_RESERVE, Scale
from .report import Row
from .workers import Runner


def round_down(value: int, step: int) -> int:
    return max(step, value // step * step)


class Bench:
    def __init__(self, scale: Scale, root: Path, runner: Runner) -> None:
        self.scale = scale
        self.root = root
        self.runner = runner
        self.rows: dict[int, list[Row]] = {n: [] for n in range(1, 7)}  # by figure
        self.notes: list[str] = []
        self.fd_limit = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        self.create_rate = math.nan  # figure 2's, 64 sessions in one process
        self.per_open = 2.0  # descriptors per open session (probed first)
        self.per_written = 1.0  # and per session written to
        self.fd_note = ""

    def path(self, name: str) -> Path:
        return self.root / name

    def fresh_dir(self, name: str) -> str:
        path = self.path(name)
        path.mkdir()
        return str(path)

    def sessions_within_fds(self, wanted: int, written: int) -> int:
        """How many of ``wanted`` sessions one process can hold open, when
        ``written`` of them are written to."""
        room = (self.fd_limit - FD_RESERVE - written * self.per_written) / self.per_open
        return min(wanted, round_down(int(room), 50))

    def all_rows(self) -> list[Row]:
        return [row for n in sorted(self.rows) for row in self.rows[n]]
