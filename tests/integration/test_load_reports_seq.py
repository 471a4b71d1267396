"""A damaged change is reported by its own seq, even when the reader hands
over only a tail of the log (the read model's reader, after a snapshot that
does not decode), not by its position counted from where the replay began."""

from __future__ import annotations

import pytest

from tickler.adapters.read._views import SessionRows, _ReadLog
from tickler.core import CorruptScheduleLog, SessionHeader, event
from tickler.shell import Snapshot
from tickler.shell._loading import load_session

# A delete of an id never created: a corrupt change.
_BAD_DELETE = b'{"version":1,"operation":"delete","id":"schedule-9"}'


def test_a_corrupt_change_after_an_unusable_snapshot_is_reported_by_its_seq() -> None:
    header = SessionHeader(id="s", created_at=0)
    # A snapshot through 5 whose state does not decode: the whole log is
    # asked for, and this reader still yields only the events after 5.
    snapshot = Snapshot(
        5, b'{"version":1,"next_wake":null,"state":{"bogus":1},"outbox":[],"failures":[]}'
    )
    events = [event("tickler/turn", 5, 0, b"{}"), event("schedule/change", 6, 0, _BAD_DELETE)]
    log = _ReadLog(SessionRows(header, snapshot, events, []))
    with pytest.raises(CorruptScheduleLog) as raised:
        load_session(log, snapshot)
    assert raised.value.index == 6
