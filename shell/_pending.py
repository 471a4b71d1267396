"""What a session still owes, computed from its events alone (pure).

* Pending deliveries: ``tickler/followup`` records the host has not taken
  (no ``tickler/delivered`` mark and no turn input with that key). A
  delivery target that is down leaves them here; the runtime keeps handing
  them over with backoff. ``failures`` counts the failed hand-overs the log
  records (the 1st, 2nd, 4th, 8th... failure is recorded, so this is a
  lower bound); ``last_error`` is the latest recorded one.
* Pending turns: turn inputs (``tickler/turn-input``) with neither a
  finished turn nor an abandonment, with their turn starts so far, their
  recorded model failures and their cuts (``tickler/turn-cut``: a session
  closed under the turn).
* Abandoned turns: inputs given up after too many failed starts.

``tickler inspect`` shows these; ``ScheduleRuntime.pending_deliveries``
gives the live view of one runtime with the same row type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

import msgspec

from tickler.core import CorruptScheduleLog, SessionEvent
from tickler.shell._host import FollowUp
from tickler.shell._records import (
    DELIVERED,
    FOLLOWUP,
    FOLLOWUP_FAILED,
    FailureCount,
    decode_delivered,
    decode_followup,
    decode_followup_failed,
)
from tickler.shell._reference_host import (
    TURN,
    TURN_ABANDONED,
    TURN_CUT,
    TURN_FAILED,
    TURN_INPUT,
    TURN_REF,
    TURN_START,
    Source,
    TurnAbandoned,
    TurnCut,
    TurnFailed,
    TurnInput,
    TurnRecord,
)


class PendingDelivery(msgspec.Struct, frozen=True):
    """A follow-up appended to the outbox and not yet taken by the host."""

    key: str
    ids: tuple[str, ...]  # the reminders it delivers, in batch order
    failures: int = 0
    last_error: str | None = None
    queued_at: int | None = None  # epoch ms of its ``tickler/followup`` record

    @classmethod
    def of(
        cls, message: FollowUp, failures: int = 0, last_error: str | None = None
    ) -> PendingDelivery:
        return cls(message.key, tuple(o.id for o in message.occurrences), failures, last_error)


class PendingTurn(msgspec.Struct, frozen=True):
    """A turn input still waiting for its turn (or given up, in ``abandoned``)."""

    input: int
    source: Source
    key: str | None
    starts: int = 0  # turn starts so far (failed, cut, or cut off by a crash)
    failures: int = 0  # recorded model failures
    last_error: str | None = None
    cuts: int = 0  # starts cut by a closing session (recorded; not failures)


class Pending(msgspec.Struct, frozen=True):
    deliveries: tuple[PendingDelivery, ...]
    turns: tuple[PendingTurn, ...]
    abandoned: tuple[PendingTurn, ...]

    @property
    def stuck(self) -> bool:
        """Anything owed that has failed at least once (a turn start with no
        recorded outcome counts: a crash cut it off), or was given up. A
        turn cut by a closing session is owed, not stuck."""
        return bool(
            self.abandoned
            or any(d.failures for d in self.deliveries)
            or any(t.failures or t.starts > t.cuts for t in self.turns)
        )


@dataclass
class _Delivery:
    row: PendingDelivery
    failures: FailureCount = field(default_factory=FailureCount)


@dataclass
class _Turn:
    item: TurnInput
    starts: int = 0
    failures: int = 0
    last_error: str | None = None
    cuts: int = 0


@dataclass
class _Scan:
    deliveries: dict[str, _Delivery] = field(default_factory=dict)
    turns: dict[int, _Turn] = field(default_factory=dict)
    abandoned: list[PendingTurn] = field(default_factory=list)

    def read(self, event: SessionEvent) -> None:
        reader = _READERS.get(event.type)
        if reader is not None:
            reader(self, event)

    def _followup(self, event: SessionEvent) -> None:
        message = decode_followup(event.data)
        row = msgspec.structs.replace(PendingDelivery.of(message), queued_at=event.time)
        self.deliveries[message.key] = _Delivery(row)

    def _delivered(self, event: SessionEvent) -> None:
        self.deliveries.pop(decode_delivered(event.data), None)

    def _input(self, event: SessionEvent) -> None:
        item = msgspec.json.decode(event.data, type=TurnInput)
        self.turns[item.n] = _Turn(item)
        if item.key is not None:  # the host took it: delivered
            self.deliveries.pop(item.key, None)

    def _start(self, event: SessionEvent) -> None:
        if (turn := self.turns.get(TURN_REF.decode(event.data).input)) is not None:
            turn.starts += 1

    def _turn_failed(self, event: SessionEvent) -> None:
        failed = msgspec.json.decode(event.data, type=TurnFailed)
        if (turn := self.turns.get(failed.input)) is not None:
            turn.failures += 1
            turn.last_error = failed.error

    def _turn_cut(self, event: SessionEvent) -> None:
        cut = msgspec.json.decode(event.data, type=TurnCut)
        if (turn := self.turns.get(cut.input)) is not None:
            turn.cuts += 1

    def _abandoned(self, event: SessionEvent) -> None:
        gone = msgspec.json.decode(event.data, type=TurnAbandoned)
        if (turn := self.turns.pop(gone.input, None)) is not None:
            self.abandoned.append(_row(turn))

    def _turn(self, event: SessionEvent) -> None:
        self.turns.pop(msgspec.json.decode(event.data, type=TurnRecord).input, None)

    def _followup_failed(self, event: SessionEvent) -> None:
        failed = decode_followup_failed(event.data)
        found = self.deliveries.get(failed.key)
        if found is None:
            return
        found.failures = found.failures.recorded(failed.attempt, failed.error)
        found.row = msgspec.structs.replace(
            found.row, failures=found.failures.total, last_error=failed.error
        )


_READERS: Final[dict[str, Callable[[_Scan, SessionEvent], None]]] = {
    FOLLOWUP: _Scan._followup,
    DELIVERED: _Scan._delivered,
    FOLLOWUP_FAILED: _Scan._followup_failed,
    TURN_INPUT: _Scan._input,
    TURN_START: _Scan._start,
    TURN_FAILED: _Scan._turn_failed,
    TURN_CUT: _Scan._turn_cut,
    TURN_ABANDONED: _Scan._abandoned,
    TURN: _Scan._turn,
}


def _row(turn: _Turn) -> PendingTurn:
    item = turn.item
    return PendingTurn(
        item.n, item.source, item.key, turn.starts, turn.failures, turn.last_error, turn.cuts
    )


def pending_work(events: Iterable[SessionEvent]) -> Pending:
    """The deliveries and turns ``events`` (a session's owned events, in
    order) leave owed. Raises :class:`CorruptScheduleLog` (``index`` = the
    event's seq) for a malformed runtime or host record."""
    scan = _Scan()
    for event in events:
        try:
            scan.read(event)
        except (msgspec.MsgspecError, ValueError) as exc:
            raise CorruptScheduleLog(f"malformed {event.type} record: {exc}", event.seq) from None
    return Pending(
        tuple(d.row for d in scan.deliveries.values()),
        tuple(_row(t) for t in scan.turns.values()),
        tuple(scan.abandoned),
    )
