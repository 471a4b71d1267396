"""``tickler worker --max-rate``: at most N hand-overs a second from one
worker process, so a fleet that wakes to a large backlog (after an outage of
the agent backend, or of the workers) does not deliver it as fast as it can
to a backend that has just come back.

A token bucket, charged where nothing is held: a session is claimed only
with a token in hand (its first hand-over), so no lease is held while
waiting for one; a session that hands over more than once in one claim
(several one-shots due at once are delivered one per turn) is charged the
extra ones after it ran, and the worker claims nothing until that debt is
paid. Over any T seconds a worker claims at most ``rate`` x T + its burst
sessions; its hand-overs follow their claims by the time it takes to open
a session, so over any T seconds it hands over at most that many plus the
sessions it had in flight (and their extra hand-overs, paid for after).

The bucket reads the worker's wall clock (epoch ms) and is pure otherwise,
so tests drive it with a virtual clock; a clock that steps back adds no
tokens, one that jumps forward adds at most the burst.
"""

from __future__ import annotations

import math
from typing import Final

BATCH_S: Final = 0.05
"""A paced worker claims in batches of at most this many seconds' tokens
(at least one): fewer claim queries at high rates, at most this much added
lateness."""


class Pace:
    """A token bucket of ``rate`` tokens a second. A claim waits for a batch
    of :data:`BATCH_S` seconds' tokens (at least one); the bucket holds one
    token more than a batch (its burst), so the moments between a token's
    arrival and the claim that spends it are not lost to the cap. The
    balance may go below zero (a debt) by :meth:`charge`."""

    def __init__(self, rate: float, now_ms: int) -> None:
        if not (rate > 0 and math.isfinite(rate)):
            raise ValueError("the rate must be a positive number")
        self.rate = rate
        self.batch = max(1, math.floor(rate * BATCH_S))
        self.burst = float(self.batch + 1)
        self._tokens = self.burst  # a worker starts able to deliver at once
        self._at = now_ms
        self.granted = 0  # tokens taken and charged since the start (sessions + extra)

    def _refill(self, now_ms: int) -> None:
        if now_ms > self._at:
            self._tokens = min(self.burst, self._tokens + (now_ms - self._at) * self.rate / 1000)
        self._at = max(self._at, now_ms)  # a clock that stepped back adds nothing

    def available(self, now_ms: int) -> int:
        """Whole tokens in hand now (0 while in debt)."""
        self._refill(now_ms)
        return max(0, math.floor(self._tokens + 1e-9))

    def want(self, free: int) -> int:
        """How many tokens a claim waits for with ``free`` slots: a batch, so
        a low rate claims one at a time."""
        return max(1, min(free, self.batch))

    def take(self, count: int, now_ms: int) -> None:
        """Spend ``count`` tokens (the sessions just claimed)."""
        self._refill(now_ms)
        self._tokens -= count
        self.granted += count

    def charge(self, count: int, now_ms: int) -> None:
        """Spend ``count`` more (extra hand-overs), into debt if need be."""
        if count > 0:
            self.take(count, now_ms)

    def wait_s(self, tokens: int, now_ms: int) -> float:
        """Seconds until ``tokens`` whole tokens are in hand (0 if they are)."""
        self._refill(now_ms)
        missing = tokens - self._tokens
        return 0.0 if missing <= 1e-9 else missing / self.rate
