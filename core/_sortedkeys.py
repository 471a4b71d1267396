"""A persistent sorted sequence: the due index inside ``State``.

Keys live in sorted chunks (tuples), so one insert or removal copies one chunk
and the short tuple of chunk boundaries, all at C speed, and returns a new
value sharing every other chunk. Cost per change stays nearly flat from 10^3 to
10^6 keys, where a tree of Python objects would pay a Python call per level.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from typing import Final, TypeAlias

from pyrsistent import PVector, pvector

# (target epoch ms, creation order, id): ordered by target, then creation,
# exactly as the due decision needs.
DueKey: TypeAlias = tuple[int, int, str]
K: TypeAlias = DueKey

_CHUNK: Final = 256  # a split leaves chunks of this size; a chunk never exceeds twice it


class SortedKeys:
    """An immutable sorted sequence of unique keys."""

    __slots__ = ("_chunks", "_len", "_maxes")

    def __init__(self, chunks: tuple[tuple[K, ...], ...] = (), length: int = 0) -> None:
        # Persistent vectors (C): replacing one chunk costs O(log n), not a
        # copy of every chunk boundary, so huge pools stay cheap to change.
        self._chunks: PVector[tuple[K, ...]] = pvector(chunks)
        self._maxes: PVector[K] = pvector(chunk[-1] for chunk in chunks)
        self._len = length

    @classmethod
    def from_sorted(cls, keys: Iterable[K]) -> SortedKeys:
        flat = tuple(keys)
        chunks = tuple(flat[i : i + _CHUNK] for i in range(0, len(flat), _CHUNK))
        return cls(chunks, len(flat))

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[K]:
        for chunk in self._chunks:
            yield from chunk

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SortedKeys):
            return NotImplemented
        return self._len == other._len and all(a == b for a, b in zip(self, other, strict=True))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"SortedKeys({list(self)!r})"

    def first(self) -> K | None:
        return self._chunks[0][0] if self._chunks else None

    def _replace(self, at: int, new: tuple[tuple[K, ...], ...], delta: int) -> SortedKeys:
        out = SortedKeys.__new__(SortedKeys)
        if len(new) == 1:  # the usual case: one chunk changed in place
            out._chunks = self._chunks.set(at, new[0])
            out._maxes = self._maxes.set(at, new[0][-1])
        else:  # a split or an emptied chunk: rebuild the (short) spine
            chunks = [*self._chunks[:at], *new, *self._chunks[at + 1 :]]
            out._chunks = pvector(chunks)
            out._maxes = pvector(chunk[-1] for chunk in chunks)
        out._len = self._len + delta
        return out

    def insert(self, key: K) -> SortedKeys:
        if not self._chunks:
            return SortedKeys(((key,),), 1)
        at = min(bisect_left(self._maxes, key), len(self._chunks) - 1)
        chunk = self._chunks[at]
        pos = bisect_left(chunk, key)
        grown = (*chunk[:pos], key, *chunk[pos:])
        if len(grown) > 2 * _CHUNK:
            return self._replace(at, (grown[:_CHUNK], grown[_CHUNK:]), 1)
        return self._replace(at, (grown,), 1)

    def remove(self, key: K) -> SortedKeys:
        """Without ``key``; raises KeyError when it is absent."""
        at = bisect_left(self._maxes, key)
        if at == len(self._chunks):
            raise KeyError(key)
        chunk = self._chunks[at]
        pos = bisect_left(chunk, key)
        if chunk[pos] != key:
            raise KeyError(key)
        shrunk = chunk[:pos] + chunk[pos + 1 :]
        return self._replace(at, (shrunk,) if shrunk else (), -1)

    def upto(self, bound: K) -> Iterator[K]:
        """Keys ``<= bound`` in order."""
        for chunk in self._chunks:
            if chunk[-1] <= bound:
                yield from chunk
                continue
            yield from chunk[: bisect_right(chunk, bound)]
            return
