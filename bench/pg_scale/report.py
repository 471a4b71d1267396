"""The figures side by side: one row per measure, one column per size,
and the growth from the first size to the last (so what does not stay flat
shows)."""

from __future__ import annotations

from dataclasses import dataclass, field


def mib(size: int) -> str:
    return f"{size / 2**20:,.1f} MiB"


@dataclass
class Table:
    sizes: list[int]
    rows: dict[str, dict[int, str]] = field(default_factory=dict)
    values: dict[str, dict[int, float]] = field(default_factory=dict)

    def add(self, label: str, size: int, text: str, value: float | None = None) -> None:
        """One cell; ``value`` (a number that should stay flat) gives the row
        its growth column."""
        self.rows.setdefault(label, {})[size] = text
        if value is not None:
            self.values.setdefault(label, {})[size] = value

    def growth(self, label: str) -> str:
        values = self.values.get(label, {})
        first, last = self.sizes[0], self.sizes[-1]
        if len(self.sizes) < 2 or first not in values or last not in values or not values[first]:
            return ""
        return f"{values[last] / values[first]:.2f}x"

    def lines(self) -> list[str]:
        heads = [f"{n:,} sessions" for n in self.sizes]
        label_w = max(len("what"), *(len(label) for label in self.rows))
        cols = [
            max(len(h), *(len(r.get(n, "")) for r in self.rows.values()))
            for h, n in zip(heads, self.sizes, strict=True)
        ]
        growth = f"{self.sizes[-1] // self.sizes[0]}x sessions" if len(self.sizes) > 1 else ""
        titles = (h.rjust(w) for h, w in zip(heads, cols, strict=True))
        out = [" | ".join(["what".ljust(label_w), *titles]) + (f" | {growth}" if growth else "")]
        out.append("-" * len(out[0]))
        for label, cells in self.rows.items():
            shown = (cells.get(n, "-").rjust(w) for n, w in zip(self.sizes, cols, strict=True))
            line = " | ".join([label.ljust(label_w), *shown])
            out.append(line + (f" | {self.growth(label)}" if growth else ""))
        return out
