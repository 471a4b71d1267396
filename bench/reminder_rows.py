"""Sessions for bench/reminders.py, written as the runtime writes them.

``write_session`` drives one session log with the core's decisions (tool
calls, a due delivery) and the runtime's record encoders, and tells a log
that keeps a wake index or a failure index (PostgreSQL) what the runtime
would. Run over a real store's log it is a real session; run over
:class:`Capture` it yields the same rows without a store, which the bench
bulk-loads with COPY (and checks against sessions written through the real
store: they must be equal row for row).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from returns.pipeline import is_successful

from tickler.core import (
    EMPTY_STATE,
    SCHEDULE_CHANGE,
    DeliverDue,
    Delivery,
    SessionEvent,
    SessionHeader,
    State,
    decide,
    encode_change,
    fold_changes,
    parse_tool_call,
)
from tickler.core.wire._session import event
from tickler.shell._host import FollowUp
from tickler.shell._loading import Loaded, next_wake
from tickler.shell._ports import FailureIndex, NewEvent, SessionLog, Snapshot, WakeIndex
from tickler.shell._records import (
    DELIVERED,
    FOLLOWUP,
    FOLLOWUP_FAILED,
    encode_delivered,
    encode_followup,
    encode_followup_failed,
    followup_for,
)

MIN = 60_000
DAY = 24 * 60 * MIN


@dataclass(frozen=True)
class Spec:
    """One session: one-shots after these seconds, an every, a delivery
    of it (and how late), failed hand-overs of a due one-shot."""

    afters: tuple[int, ...]
    every_s: int | None
    delivered_late_ms: int | None
    failures: int


def spec_for(rng: random.Random) -> Spec:
    """The mix: 1-3 one-shots within 30 days; a third with an every (half of
    those delivered once, up to 10 s late); 1 in 100 failing."""
    afters = tuple(rng.randint(60, 30 * 86_400) for _ in range(rng.randint(1, 3)))
    every = rng.choice([300, 3600, 86_400]) if rng.random() < 0.33 else None
    late = rng.randint(0, 10_000) if every is not None and rng.random() < 0.5 else None
    failures = rng.randint(1, 12) if rng.random() < 0.01 else 0
    return Spec(afters, every, late, failures)


@dataclass
class Capture:
    """A session log that only keeps what is appended, and the wake and
    failure indexes a store would write (what the bench bulk-loads)."""

    session: SessionHeader
    rows: list[SessionEvent] = field(default_factory=list)
    wake: int | None = None
    failures: int = 0

    @property
    def header(self) -> SessionHeader:
        return self.session

    @property
    def length(self) -> int:
        return len(self.rows)

    def events(self, start: int = 0) -> Iterator[SessionEvent]:
        return iter(self.rows[start:])

    def append(self, batch: Sequence[NewEvent]) -> tuple[SessionEvent, ...]:
        added = tuple(
            event(e.type, len(self.rows) + n, e.time, e.data) for n, e in enumerate(batch)
        )
        self.rows.extend(added)
        return added

    async def flush(self) -> None:
        return None

    def load_snapshot(self) -> Snapshot | None:
        return None

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        return None

    async def close(self) -> None:
        return None

    def set_next_wake(self, at: int | None) -> None:
        self.wake = at

    @property
    def handover_failures(self) -> int:
        return self.failures

    def set_handover_failures(self, count: int) -> None:
        self.failures = count


@dataclass
class _Writer:
    log: SessionLog
    state: State = EMPTY_STATE
    outbox: dict[str, FollowUp] = field(default_factory=dict)

    def _wake(self, now: int) -> None:
        if isinstance(self.log, WakeIndex):
            self.log.set_next_wake(next_wake(Loaded(self.state, dict(self.outbox)), now))

    async def tool(self, args: dict[str, object], now: int, name: str = "schedule_create") -> None:
        command = parse_tool_call(name, args)
        assert is_successful(command), command
        changes, _ = decide(self.state, command.unwrap(), now)
        self.log.append([NewEvent(SCHEDULE_CHANGE, encode_change(c), now) for c in changes])
        self.state = fold_changes(changes, self.state)
        self._wake(now)
        await self.log.flush()

    async def dispatch(self, now: int) -> None:
        changes, result = decide(self.state, DeliverDue(), now)
        outcome = result.value_or(None)
        assert isinstance(outcome, Delivery), outcome
        message = followup_for(outcome)
        batch = [NewEvent(SCHEDULE_CHANGE, encode_change(c), now) for c in changes]
        self.log.append([*batch, NewEvent(FOLLOWUP, encode_followup(message), now)])
        self.state = fold_changes(changes, self.state)
        self.outbox[message.key] = message
        self._wake(now)
        await self.log.flush()

    async def fail(self, attempt: int, now: int) -> None:
        key = next(iter(self.outbox))
        if attempt & (attempt - 1) == 0:  # the runtime records the 1st, 2nd, 4th...
            data = encode_followup_failed(key, attempt, "RuntimeError: target down")
            self.log.append([NewEvent(FOLLOWUP_FAILED, data, now)])
        if isinstance(self.log, FailureIndex):
            self.log.set_handover_failures(attempt)
        await self.log.flush()

    async def deliver(self, now: int) -> None:
        key = next(iter(self.outbox))
        self.log.append([NewEvent(DELIVERED, encode_delivered(key), now)])
        del self.outbox[key]
        if isinstance(self.log, FailureIndex):
            self.log.set_handover_failures(0)
        self._wake(now)
        await self.log.flush()


async def write_session(log: SessionLog, spec: Spec, t0: int) -> None:
    """``spec`` created at ``t0`` (an every is delivered, a failing
    one-shot fails, in the minutes before ``t0``)."""
    writer = _Writer(log)
    start = t0 - 30 * MIN
    if spec.every_s is not None:
        await writer.tool({"prompt": "stand up and stretch", "every_seconds": spec.every_s}, start)
        if spec.delivered_late_ms is not None:
            due = start + spec.every_s * 1000
            if due <= t0:
                await writer.dispatch(due)
                await writer.deliver(due + spec.delivered_late_ms)
    if spec.failures:
        await writer.tool({"prompt": "send the invoice", "after_seconds": 60}, start)
        await writer.dispatch(start + MIN)
        for attempt in range(1, spec.failures + 1):
            await writer.fail(attempt, start + MIN + attempt * 1000)
    for n, after in enumerate(spec.afters):
        await writer.tool({"prompt": f"follow up #{n}", "after_seconds": after}, t0)
