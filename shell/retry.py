"""Backoff for retrying a failed flush, append or hand-over by itself,
instead of waiting for the next tool call or restart (as the reference
does)."""

from __future__ import annotations


class Backoff:
    def __init__(self, first_s: float = 0.05, factor: float = 2.0, most_s: float = 30.0) -> None:
        self._first = first_s
        self._factor = factor
        self._most = most_s
        self._next = first_s

    def next_delay(self) -> float:
        delay = self._next
        self._next = min(self._most, self._next * self._factor)
        return delay

    def reset(self) -> None:
        self._next = self._first
