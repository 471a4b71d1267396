"""The table printed at the end: one row per figure or explanation, the
ratio to the peer, the target and whether it was met; then the notes."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path


def rate(value: float) -> str:
    return f"{value:,.0f}/s"


def ms(value: float) -> str:
    if math.isinf(value):
        return "> cap"
    return f"{value:,.1f} ms" if value < 10_000 else f"{value / 1000:,.1f} s"


def secs(value: float) -> str:
    return f"{value * 1000:,.0f} ms" if value < 10 else f"{value:,.1f} s"


def size(value: float) -> str:
    return f"{value:,.0f} B"


def better(ratio: float) -> str:
    """How many times better tickler is (below 1: worse)."""
    if math.isnan(ratio) or math.isinf(ratio):
        return "-"
    return f"{ratio:,.1f}x" if ratio >= 1 else f"{ratio:.2f}x"


def status(ok: bool) -> str:
    return "PASS" if ok else "MISS"


@dataclass(frozen=True)
class Row:
    figure: str
    tickler: str
    aps: str = "-"
    ratio: str = "-"
    target: str = "-"
    status: str = "-"

    def cells(self) -> tuple[str, ...]:
        return tuple(getattr(self, f.name) for f in fields(self))


HEADER = Row("figure", "tickler", "APScheduler", "tickler adv.", "target", "status")


def print_table(rows: Sequence[Row]) -> None:
    widths = [
        max(len(c) for c in column)
        for column in zip(*(r.cells() for r in (HEADER, *rows)), strict=True)
    ]

    def line(r: Row) -> str:
        cells = r.cells()
        left = cells[0].ljust(widths[0])
        rest = "  ".join(c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))
        return f"{left}  {rest}"

    print(line(HEADER))
    print("-" * len(line(HEADER)))
    for r in rows:
        print(line(r))


def print_profiles(profiles: Sequence[tuple[str, Path]]) -> None:
    import pstats

    for name, path in profiles:
        if not path.exists():
            continue
        print(f"\n--- cProfile of {name}, measured phase only (top 25 by internal time) ---")
        stats = pstats.Stats(str(path), stream=sys.stdout)
        stats.strip_dirs().sort_stats("tottime").print_stats(25)


def print_report(
    rows: Sequence[Row], notes: Sequence[str], profiles: Sequence[tuple[str, Path]] | None
) -> None:
    """The table, the notes, and with ``--profile`` (``profiles`` not None)
    the hotspots of tickler's workers."""
    print()
    print_table(rows)
    print()
    print(
        "tickler adv. = how many times better tickler is (rate ratio, or APS/tickler for "
        "times and bytes); below 1x tickler is worse."
    )
    for note in notes:
        print(f"note: {note}")
    if profiles is not None:
        print("note: --profile: tickler's workers ran under cProfile; figures are slower than real")
        print_profiles(profiles)
