"""Loading a session into the runtime: the snapshot if one is usable, then
the log after it; and writing the snapshot back."""

from __future__ import annotations

import bisect
import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final

import msgspec

from tickler.core import (
    EMPTY_STATE,
    SCHEDULE_CHANGE,
    CorruptScheduleLog,
    SessionEvent,
    SnapshotError,
    State,
    decode_state,
    encode_state,
    fold,
    next_target,
)
from tickler.shell._host import FollowUp
from tickler.shell._ports import SessionLog, Snapshot
from tickler.shell._records import (
    DELIVERED,
    FOLLOWUP,
    FOLLOWUP_FAILED,
    FailureCount,
    decode_delivered,
    decode_followup,
    decode_followup_failed,
    encode_followup,
)


@dataclass
class Loaded:
    """What the runtime holds for a session: the schedule state, the outbox
    of follow-ups the host has not taken yet (in log order), and the failed
    hand-overs of those the log records."""

    state: State
    outbox: dict[str, FollowUp] = field(default_factory=dict)
    failures: dict[str, FailureCount] = field(default_factory=dict)


class _Failures(msgspec.Struct, frozen=True, array_like=True):
    key: str
    earlier: int
    last: int
    error: str | None


class _Image(msgspec.Struct, frozen=True):
    version: int
    next_wake: int | None
    state: msgspec.Raw
    outbox: list[msgspec.Raw]
    failures: list[_Failures] = []  # absent from snapshots before 2026-12


logger = logging.getLogger("tickler.runtime")

_IMAGE: Final = msgspec.json.Decoder(_Image)
# The next wake leads the image, so the runtime can arm its timer from the
# first bytes before it decodes the rest.
_HINT: Final = re.compile(rb'\{"version":1,"next_wake":(null|-?[0-9]{1,16}),')


def next_wake(loaded: Loaded, now: int) -> int | None:
    """When the session next needs a process: ``now`` while a follow-up
    waits in the outbox, else the core's answer (``next_target``, what
    ``decide(DeliverDue)`` waits for; None: nothing is pending). The one
    answer the runtime's timer, the wake index and the snapshot's hint all
    use."""
    return now if loaded.outbox else next_target(loaded.state)


def snapshot_of(loaded: Loaded, through: int, now: int) -> Snapshot:
    state = loaded.state
    wake = next_wake(loaded, now)
    next_wake_json = b"null" if wake is None else str(wake).encode()
    outbox = b",".join(encode_followup(m) for m in loaded.outbox.values())
    failures = msgspec.json.encode(
        [_Failures(key, *count) for key, count in loaded.failures.items() if key in loaded.outbox]
    )
    data = (
        b'{"version":1,"next_wake":'
        + next_wake_json
        + b',"state":'
        + encode_state(state)
        + b',"outbox":['
        + outbox
        + b'],"failures":'
        + failures
        + b"}"
    )
    return Snapshot(through, data)


def usable(log: SessionLog, snapshot: Snapshot | None) -> Snapshot | None:
    """The snapshot if it lies within the log's owned part (never beyond)."""
    if snapshot is None or not log.header.owned_from <= snapshot.through <= log.length:
        return None
    return snapshot


def wake_hint(snapshot: Snapshot) -> int | None:
    """The next wake a snapshot recorded, read from its first bytes (None
    when unknown or nothing was pending; a past instant when a follow-up
    was pending: then look at once). Only a cache of :func:`next_wake` as
    :func:`snapshot_of` wrote it, read before the state is decoded; the
    runtime decides again (its drive) once the session is loaded."""
    match = _HINT.match(snapshot.data, 0, 64)
    if match is None or match.group(1) == b"null":
        return None
    return int(match.group(1))


def _decode_image(data: bytes) -> _Image:
    try:
        return _IMAGE.decode(data)
    except msgspec.DecodeError:
        # msgspec refuses the escape of a lone surrogate, which a prompt may
        # hold (written as the log writes it); the stdlib reads it, and the
        # parts are decoded as they are from the log.
        value = json.loads(data)
    if isinstance(value, dict):
        if "state" in value:
            value["state"] = _raw(value["state"])
        if isinstance(value.get("outbox"), list):
            value["outbox"] = [_raw(message) for message in value["outbox"]]
    return msgspec.convert(value, _Image)


def _raw(value: object) -> msgspec.Raw:
    return msgspec.Raw(json.dumps(value).encode())  # ASCII: lone surrogates escaped


def _from_snapshot(log: SessionLog, snapshot: Snapshot | None) -> tuple[Loaded, int] | None:
    snapshot = usable(log, snapshot)
    if snapshot is None:
        return None
    try:
        image = _decode_image(snapshot.data)
        if image.version != 1:
            return None  # another version's: not ours to read
        outbox = [decode_followup(raw) for raw in image.outbox]
        state = decode_state(bytes(image.state))
    except (msgspec.MsgspecError, SnapshotError, ValueError, RecursionError) as exc:
        logger.warning(
            "session %s: its snapshot through %d does not decode (%s); reading its log instead",
            log.header.id,
            snapshot.through,
            exc,
        )
        return None
    failures = {f.key: FailureCount(f.earlier, f.last, f.error) for f in image.failures}
    return Loaded(state, {m.key: m for m in outbox}, failures), snapshot.through


def _track(loaded: Loaded, event: SessionEvent) -> None:
    """Follow the outbox and its failures; a malformed runtime record is a
    corrupt log (a skipped one could lose or repeat a delivery)."""
    try:
        if event.type == FOLLOWUP:
            message = decode_followup(event.data)
            loaded.outbox[message.key] = message
        elif event.type == DELIVERED:
            key = decode_delivered(event.data)
            loaded.outbox.pop(key, None)
            loaded.failures.pop(key, None)
        elif event.type == FOLLOWUP_FAILED:
            failed = decode_followup_failed(event.data)
            if failed.key in loaded.outbox:
                count = loaded.failures.get(failed.key, FailureCount())
                loaded.failures[failed.key] = count.recorded(failed.attempt, failed.error)
    except (msgspec.MsgspecError, ValueError) as exc:
        raise CorruptScheduleLog(f"malformed {event.type} record: {exc}", event.seq) from None


class _Seqs:
    """The seq of each event ``fold`` was given, by its position, kept only
    where the seqs break their run (a store yields ``start``, ``start + 1``,
    ... by contract; a reader that skips ahead is still reported by the
    event's own seq)."""

    def __init__(self, start: int) -> None:
        self.count = 0
        # (position, seq) where a run of consecutive seqs begins
        self.runs: list[tuple[int, int]] = [(0, start)]

    def note(self, seq: int) -> None:
        position, first = self.runs[-1]
        if seq != first + self.count - position:
            self.runs.append((self.count, seq))
        self.count += 1

    def seq(self, index: int) -> int:
        run = bisect.bisect_right(self.runs, index, key=lambda begun: begun[0]) - 1
        position, first = self.runs[max(run, 0)]
        return first + index - position


def _tracked(loaded: Loaded, events: Iterator[SessionEvent], seqs: _Seqs) -> Iterator[SessionEvent]:
    """``events``, following the outbox records as they pass (the rules'
    changes are ``fold``'s to read), their seqs noted by position."""
    for event in events:
        seqs.note(event.seq)
        if event.type != SCHEDULE_CHANGE:
            try:
                _track(loaded, event)
            except CorruptScheduleLog as exc:
                raise _Malformed(exc) from None
        yield event


class _Malformed(Exception):
    """A runtime record broke (located already): not a change ``fold``
    judged."""

    def __init__(self, error: CorruptScheduleLog) -> None:
        super().__init__(error)
        self.error = error


def load_session(log: SessionLog, snapshot: Snapshot | None = None) -> Loaded:
    """The session's state and outbox: from ``snapshot`` (when usable) plus
    the events after it, else from the whole owned log. Raises
    :class:`CorruptScheduleLog` (``index`` = the event's seq)."""
    resumed = _from_snapshot(log, snapshot)
    loaded, start = (Loaded(EMPTY_STATE), log.header.owned_from) if resumed is None else resumed
    seqs = _Seqs(start)
    try:
        loaded.state = fold(_tracked(loaded, log.events(start), seqs), state=loaded.state)
    except CorruptScheduleLog as exc:
        raise exc if exc.index is None else exc.at(seqs.seq(exc.index)) from None
    except _Malformed as malformed:
        raise malformed.error from None
    return loaded
