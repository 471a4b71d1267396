"""A persistent map that is cheap to build in bulk: a frozen base dict plus a
small persistent overlay of changes.

Building a persistent map entry by entry costs far more than a dict, which
would dominate folding a long log or loading a snapshot. Here the base is
built once at C speed (a dict nobody mutates) and changes go to an overlay
(``None`` marks a removal). When the overlay grows past half the base, the
two are merged into a new base: amortised O(1) per change, and every
version stays immutable.

The overlay is an ``immutables.Map`` (the hash array mapped trie behind
``contextvars``): a change costs well under a microsecond, and a new version
is a few small trie nodes, so the garbage collector, which scans every
young object, pays for the change only. ``pyrsistent``'s map was a C vector
that the collector walked whole for every new version: a cost that grew
with the map, paid over and over on a busy store.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final, Generic, TypeVar

from immutables import Map

V = TypeVar("V")
_MIN_OVERLAY: Final = 1024
_EMPTY: Final[Map[str, Any]] = Map()


class LayeredMap(Generic[V]):
    __slots__ = ("_base", "_len", "_overlay")

    def __init__(
        self,
        base: dict[str, V] | None = None,
        overlay: Map[str, V | None] | None = None,
        length: int | None = None,
    ) -> None:
        self._base: dict[str, V] = {} if base is None else base  # never mutated
        self._overlay: Map[str, V | None] = _EMPTY if overlay is None else overlay
        self._len = len(self._base) if length is None else length

    def get(self, key: str) -> V | None:
        if key in self._overlay:
            return self._overlay[key]
        return self._base.get(key)

    def __getitem__(self, key: str) -> V:
        value = self.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __len__(self) -> int:
        return self._len

    def items(self) -> Iterator[tuple[str, V]]:
        overlay = self._overlay
        for key, value in self._base.items():
            if key not in overlay:
                yield key, value
        for key, maybe in overlay.items():
            if maybe is not None:
                yield key, maybe

    def values(self) -> Iterator[V]:
        return (value for _, value in self.items())

    def __iter__(self) -> Iterator[str]:
        return (key for key, _ in self.items())

    def to_dict(self) -> dict[str, V]:
        return dict(self.items())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LayeredMap):
            return NotImplemented
        return self._len == other._len and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        raise TypeError("LayeredMap is not hashable")

    def __repr__(self) -> str:
        return f"LayeredMap({self.to_dict()!r})"

    def _with(self, overlay: Map[str, V | None], length: int) -> LayeredMap[V]:
        if len(overlay) > max(_MIN_OVERLAY, len(self._base) // 2):
            merged = dict(self._base)
            for key, maybe in overlay.items():
                if maybe is None:
                    merged.pop(key, None)
                else:
                    merged[key] = maybe
            return LayeredMap(merged, _EMPTY, length)
        return LayeredMap(self._base, overlay, length)

    def set(self, key: str, value: V) -> LayeredMap[V]:
        length = self._len if key in self else self._len + 1
        return self._with(self._overlay.set(key, value), length)

    def discard(self, key: str) -> LayeredMap[V]:
        if key not in self:
            return self
        if key in self._base:
            return self._with(self._overlay.set(key, None), self._len - 1)
        return self._with(self._overlay.delete(key), self._len - 1)
