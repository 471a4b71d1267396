"""A schedule/change payload is one JSON value. A hand-built event whose
data holds two, side by side, is refused by the fold as by the exact
decoder (``evolve``'s path), never read as two changes: the fold decodes a
chunk of payloads as one array, and must not let a payload's commas stand
between changes."""

from __future__ import annotations

import msgspec
import pytest

from tickler.core import SCHEDULE_CHANGE, CorruptScheduleLog, decode_change, fold
from tickler.core.wire import event

CREATE = (
    b'{"version":1,"operation":"create","schedule":{"id":"schedule-%d","kind":"after",'
    b'"prompt":"p","afterSeconds":60,"scheduledAt":"2026-08-05T12:01:00.000Z"}}'
)
DELETE = b'{"version":1,"operation":"delete","id":"schedule-%d"}'


def test_two_values_in_one_payload_are_refused_as_the_exact_decoder_refuses() -> None:
    two = CREATE % 2 + b"," + DELETE % 2
    with pytest.raises(CorruptScheduleLog) as exact:
        decode_change(msgspec.Raw(two))
    events = [
        event(SCHEDULE_CHANGE, 0, 1, CREATE % 1),
        event(SCHEDULE_CHANGE, 1, 1, two),
        event(SCHEDULE_CHANGE, 2, 1, DELETE % 1),
    ]
    with pytest.raises(CorruptScheduleLog) as folded:
        fold(events)
    assert str(folded.value) == str(exact.value.at(1))
    assert folded.value.index == 1


def test_a_value_split_over_two_payloads_is_refused() -> None:
    """Each half is not JSON; joined with a comma they would read as one
    change (a delete of the id "a,b"), its count made up by a payload of
    two values."""
    events = [
        event(SCHEDULE_CHANGE, 0, 1, CREATE % 1 + b"," + CREATE % 2),
        event(SCHEDULE_CHANGE, 1, 1, b'{"version":1,"operation":"delete","id":"a'),
        event(SCHEDULE_CHANGE, 2, 1, b'b"}'),
    ]
    with pytest.raises(CorruptScheduleLog) as folded:
        fold(events)
    assert folded.value.index == 0
