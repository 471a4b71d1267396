"""Backoff for retrying a failed flush, append or hand-over by itself,
instead of waiting for the next tool call or restart (as the reference
does)."""

from __future__ import annotations

import logging

from tickler.shell._records import error_text


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


class Outage:
    """The log lines of an operation retried while it fails: one line when
    it starts failing (with the cause), DEBUG for each failure after it (with
    the traceback), one line when it works again. A full disk or a database
    that is down then costs two lines, not one per retry."""

    __slots__ = ("_level", "_logger", "_what", "failures")

    def __init__(self, logger: logging.Logger, what: str, *, level: int = logging.WARNING) -> None:
        self._logger = logger
        self._what = what
        self._level = level
        self.failures = 0  # in a row

    def failed(self, error: BaseException) -> None:
        self.failures += 1
        if self.failures == 1:
            self._logger.log(
                self._level,
                "%s failed: %s; retrying (until it works again, failures are logged at DEBUG)",
                self._what,
                error_text(error),
            )
        self._logger.debug("%s failed (%d in a row)", self._what, self.failures, exc_info=error)

    def ok(self) -> None:
        if self.failures:
            self._logger.log(
                self._level, "%s works again (after %d failures)", self._what, self.failures
            )
            self.failures = 0
