"""Sessions written as the runtime writes them, for the read model's tests
and benchmark: the core decides (tool calls, due deliveries), the changes
and the follow-up go in one append, the delivered mark and the failure
records with the runtime's own encoders, and a store that keeps a wake
index or a failure index (PostgreSQL) is told what the runtime tells it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from returns.pipeline import is_successful

from tickler.core import (
    EMPTY_STATE,
    SCHEDULE_CHANGE,
    DeliverDue,
    Delivery,
    State,
    decide,
    encode_change,
    fold_changes,
    parse_tool_call,
)
from tickler.shell._host import FollowUp
from tickler.shell._loading import Loaded, next_wake
from tickler.shell._ports import FailureIndex, NewEvent, SessionLog, SessionStore, WakeIndex
from tickler.shell._records import (
    DELIVERED,
    FOLLOWUP,
    FOLLOWUP_FAILED,
    encode_delivered,
    encode_followup,
    encode_followup_failed,
    followup_for,
)

from .conftest import make_store


@dataclass
class Scribe:
    """One session's writer, at instants the test chooses."""

    log: SessionLog
    state: State = EMPTY_STATE
    outbox: dict[str, FollowUp] = field(default_factory=dict)
    failed: int = 0  # hand-overs of the outbox head failed in a row

    def _wake(self, now: int) -> None:
        if isinstance(self.log, WakeIndex):
            self.log.set_next_wake(next_wake(Loaded(self.state, dict(self.outbox)), now))

    async def tool(self, name: str, args: object, now: int) -> None:
        command = parse_tool_call(name, args)
        assert is_successful(command), command
        changes, result = decide(self.state, command.unwrap(), now)
        assert is_successful(result), result
        self.log.append([NewEvent(SCHEDULE_CHANGE, encode_change(c), now) for c in changes])
        self.state = fold_changes(changes, self.state)
        self._wake(now)
        await self.log.flush()

    async def dispatch(self, now: int) -> FollowUp:
        """What is due at ``now``, put in the outbox (one append)."""
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
        return message

    async def fail(self, now: int, error: str = "RuntimeError: target down") -> None:
        """A failed hand-over of the outbox head, while the runtime runs:
        recorded at the 1st, 2nd, 4th, 8th... failure, counted in full by a
        failure index."""
        key = next(iter(self.outbox))
        self.failed += 1
        if self.failed & (self.failed - 1) == 0:
            data = encode_followup_failed(key, self.failed, error)
            self.log.append([NewEvent(FOLLOWUP_FAILED, data, now)])
        if isinstance(self.log, FailureIndex):
            self.log.set_handover_failures(self.failed)
        await self.log.flush()

    async def deliver(self, now: int) -> None:
        """The host took the outbox head."""
        key = next(iter(self.outbox))
        self.log.append([NewEvent(DELIVERED, encode_delivered(key), now)])
        del self.outbox[key]
        self.failed = 0
        if isinstance(self.log, FailureIndex):
            self.log.set_handover_failures(0)
        self._wake(now)
        await self.log.flush()


T0 = 4_000_000_000_000  # in 2096: every reminder stays in the future of any run
MIN = 60_000
HOUR = 60 * MIN


@dataclass
class Written:
    source: str
    schema: str
    kind: str
    ids: dict[str, str]  # prompt -> reminder id


def open_store(kind: str, source: str, schema: str) -> SessionStore:
    if kind == "postgres":
        from tickler.adapters.stores import PostgresStore

        return PostgresStore(source, schema=schema)
    return make_store(kind, Path(source).parent)


async def write_sessions(kind: str, source: str, schema: str) -> Written:
    """alpha: an after in an hour, an every of 5 min delivered once 5 s
    late; beta: a one-shot due, its hand-over failed 3 times; gamma: a
    reminder created and deleted."""
    store = open_store(kind, source, schema)
    ids: dict[str, str] = {}
    try:
        alpha = Scribe(await store.open("alpha", created_at=T0))
        await alpha.tool("schedule_create", {"prompt": "call mum", "after_seconds": 3600}, T0)
        await alpha.tool("schedule_create", {"prompt": "stretch", "every_seconds": 300}, T0)
        await alpha.dispatch(T0 + 5 * MIN + 2000)
        await alpha.deliver(T0 + 5 * MIN + 5000)
        beta = Scribe(await store.open("beta", created_at=T0))
        await beta.tool("schedule_create", {"prompt": "pay rent", "after_seconds": 60}, T0)
        await beta.dispatch(T0 + MIN)
        for n in range(3):
            await beta.fail(T0 + MIN + 1000 * (n + 1))
        gamma = Scribe(await store.open("gamma", created_at=T0))
        await gamma.tool("schedule_create", {"prompt": "gone", "after_seconds": 60}, T0)
        gone = gamma.state.active[0].id
        await gamma.tool("schedule_delete", {"id": gone}, T0 + 1)
        for scribe in (alpha, beta):
            for record in scribe.state.active:
                ids[record.prompt] = record.id
        ids["pay rent"] = next(iter(beta.outbox.values())).occurrences[0].id
        for scribe in (alpha, beta, gamma):
            await scribe.log.close()
    finally:
        await store.close()
    return Written(source, schema, kind, ids)


PAST = 1_700_000_000_000  # 2023-11-14T22:13:20Z: before any run of the tests
PAUSED_PROMPT = "water the ferns"
LATE_PROMPT = (
    "pay the\x1b[2J rent\nbefore noon, and a long tail of words no table should show whole"
)
"""Overdue, with an escape sequence and a newline a terminal must not obey,
and longer than a table's prompt column."""


async def write_paused_and_overdue(kind: str, source: str, schema: str) -> Written:
    """paws: its only reminder (due at PAST + 1 h) paused at PAST + 1 min,
    so the session needs no process (its wake is None); late: a one-shot
    due at PAST + 1 min that no runtime ever dispatched (it is overdue at
    any later instant), and an every of 5 min first due at PAST + 5 min."""
    store = open_store(kind, source, schema)
    ids: dict[str, str] = {}
    try:
        paws = Scribe(await store.open("paws", created_at=PAST))
        await paws.tool("schedule_create", {"prompt": PAUSED_PROMPT, "after_seconds": 3600}, PAST)
        paused = paws.state.active[0].id
        await paws.tool("schedule_update", {"id": paused, "paused": True}, PAST + MIN)
        late = Scribe(await store.open("late", created_at=PAST))
        await late.tool("schedule_create", {"prompt": LATE_PROMPT, "after_seconds": 60}, PAST)
        await late.tool("schedule_create", {"prompt": "stretch", "every_seconds": 300}, PAST)
        for scribe in (paws, late):
            for record in scribe.state.active:
                ids[record.prompt] = record.id
            await scribe.log.close()
    finally:
        await store.close()
    return Written(source, schema, kind, ids)
