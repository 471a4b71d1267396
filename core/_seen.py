"""Every id ever created in the owned suffix, kept small.

Allocation yields ``schedule-1``, ``schedule-2``, ... so the set is stored as
"``schedule-1`` to ``schedule-<contiguous>``" plus a persistent map of every
other id. The form is canonical (an id that extends the run is never kept in
``others``), so two equal sets compare equal structurally.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Final

from pyrsistent import PMap, pmap

from tickler.core._rules import ID_PREFIX, allocation_rule

PREFIX: Final = ID_PREFIX


# More digits than any count of ids can have (and than Python's ``int()``
# reads: it refuses strings of thousands of digits).
_MAX_DIGITS: Final = 19


def allocated_number(schedule_id: str) -> int | None:
    """N for an id spelled exactly ``schedule-N`` (N >= 1, no leading zero);
    None for any other id, and for an N of more than 19 digits, which no
    allocation reaches."""
    if not schedule_id.startswith(PREFIX):
        return None
    digits = schedule_id[len(PREFIX) :]
    if not digits.isascii() or not digits.isdigit() or digits[0] == "0":
        return None
    return int(digits) if len(digits) <= _MAX_DIGITS else None


class SeenIds:
    __slots__ = ("_contiguous", "_others")

    def __init__(self, contiguous: int = 0, others: PMap[str, None] | None = None) -> None:
        self._contiguous = contiguous
        self._others: PMap[str, None] = pmap() if others is None else others

    @classmethod
    def of(cls, contiguous: int, others: Iterable[str]) -> SeenIds:
        return cls(contiguous, pmap(dict.fromkeys(others)))

    @property
    def contiguous(self) -> int:
        """``schedule-1`` .. ``schedule-<contiguous>`` are all seen."""
        return self._contiguous

    @property
    def others(self) -> Iterable[str]:
        """Every other seen id."""
        return iter(self._others)

    def __contains__(self, schedule_id: object) -> bool:
        if not isinstance(schedule_id, str):
            return False
        if not self._others and schedule_id == f"{PREFIX}{self._contiguous + 1}":
            return False  # the usual question: is the next allocated id free?
        return _in_run(schedule_id, self._contiguous) or schedule_id in self._others

    def __len__(self) -> int:
        return self._contiguous + len(self._others)

    def __iter__(self) -> Iterator[str]:
        for n in range(1, self._contiguous + 1):
            yield f"{PREFIX}{n}"
        yield from self._others

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SeenIds):
            return NotImplemented
        return self._contiguous == other._contiguous and self._others == other._others

    def __hash__(self) -> int:
        return hash((self._contiguous, self._others))

    def __repr__(self) -> str:
        return f"SeenIds(contiguous={self._contiguous}, others={sorted(self._others)!r})"

    def add(self, schedule_id: str) -> SeenIds:
        """With ``schedule_id`` added (it must be new)."""
        if schedule_id != f"{PREFIX}{self._contiguous + 1}":
            return SeenIds(self._contiguous, self._others.set(schedule_id, None))
        contiguous, others = self._contiguous + 1, self._others
        while (following := f"{PREFIX}{contiguous + 1}") in others:
            others = others.discard(following)
            contiguous += 1
        return SeenIds(contiguous, others)

    def allocate(self) -> str:
        """The id the next create takes: the rulebook's
        :func:`~tickler.core._rules.allocation_rule` over these ids (only
        ``schedule-1``..``N`` seen: ``schedule-<N+1>``, found at once)."""
        return allocation_rule(self, len(self))


class SeenBuilder:
    """The mutable twin of :class:`SeenIds`, used while folding a whole log."""

    __slots__ = ("contiguous", "next_id", "others")

    def __init__(self) -> None:
        self.contiguous = 0
        self.next_id = f"{PREFIX}1"
        self.others: set[str] = set()

    def __contains__(self, schedule_id: object) -> bool:
        if schedule_id == self.next_id:  # the usual question: is the next allocated id free?
            return False  # (``add`` keeps next_id out of ``others``)
        if not isinstance(schedule_id, str):
            return False
        return schedule_id in self.others or _in_run(schedule_id, self.contiguous)

    def add(self, schedule_id: str) -> None:
        if schedule_id != self.next_id:
            self.others.add(schedule_id)
            return
        self.contiguous += 1
        self.next_id = f"{PREFIX}{self.contiguous + 1}"
        while self.next_id in self.others:
            self.others.remove(self.next_id)
            self.contiguous += 1
            self.next_id = f"{PREFIX}{self.contiguous + 1}"

    def freeze(self) -> SeenIds:
        return SeenIds(self.contiguous, pmap(dict.fromkeys(self.others)))


def _in_run(schedule_id: str, contiguous: int) -> bool:
    number = allocated_number(schedule_id)
    return number is not None and number <= contiguous
