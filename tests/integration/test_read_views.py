"""The read model's pieces that need no store: a session's rows folded into
reminder and delivery rows (a snapshot that hides a one-shot's creation,
a follow-up the reference host took as a turn input, history read only in
part), durations and sources as the CLI takes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tickler.adapters.cli._reminders import parse_duration_ms
from tickler.adapters.read._model import is_dsn
from tickler.adapters.read._views import HISTORY_TYPES, ONE_SHOT, SessionRows, summarize
from tickler.adapters.stores._memory import MemoryStore
from tickler.core import SessionEvent, format_instant
from tickler.shell._loading import Loaded, snapshot_of
from tickler.shell._ports import NewEvent
from tickler.shell._reference_host import TURN_INPUT

from .read_support import MIN, T0, Scribe


async def written() -> tuple[Scribe, list[SessionEvent]]:
    """A session with an after due at T0+1min dispatched (its follow-up in
    the outbox) and an every of 5 min."""
    store = MemoryStore()
    scribe = Scribe(await store.open("s1", created_at=T0))
    await scribe.tool("schedule_create", {"prompt": "pay", "after_seconds": 60}, T0)
    await scribe.tool("schedule_create", {"prompt": "move", "every_seconds": 300}, T0)
    await scribe.dispatch(T0 + MIN)
    return scribe, list(scribe.log.events())


async def test_a_dispatched_one_shot_stays_listed_while_its_follow_up_waits() -> None:
    scribe, events = await written()
    whole = summarize(SessionRows(scribe.log.header, None, events, events))
    assert [(v.prompt, v.kind, v.outbox, v.next_due_ms) for v in whole.reminders] == [
        ("move", "every", "idle", T0 + 5 * MIN),
        ("pay", "after", "pending", T0 + MIN),
    ]
    # Its creation folded into a snapshot: the kind is no longer known.
    image = snapshot_of(Loaded(scribe.state, dict(scribe.outbox)), len(events), T0 + MIN)
    history = [e for e in events if e.type in HISTORY_TYPES]
    hidden = summarize(SessionRows(scribe.log.header, image, [], history))
    assert [(v.prompt, v.kind, v.outbox) for v in hidden.reminders] == [
        ("move", "every", "idle"),
        ("pay", ONE_SHOT, "pending"),
    ]


async def test_a_turn_input_with_the_key_is_a_delivery() -> None:
    scribe, _ = await written()
    key = next(iter(scribe.outbox))
    data = f'{{"n":3,"source":"reminder","text":"pay","key":"{key}"}}'.encode()
    scribe.log.append([NewEvent(TURN_INPUT, data, T0 + MIN + 250)])
    events = list(scribe.log.events())
    summary = summarize(SessionRows(scribe.log.header, None, events, events))
    assert [(d.status, d.lateness_ms) for d in summary.deliveries] == [("delivered", 250)]
    assert [v.prompt for v in summary.reminders] == ["move"]


async def test_a_delivery_whose_follow_up_record_was_not_read_comes_from_its_key() -> None:
    scribe, _ = await written()
    await scribe.deliver(T0 + MIN + 40)
    events = list(scribe.log.events())
    summary = summarize(SessionRows(scribe.log.header, None, events, events[-1:]))
    (row,) = summary.deliveries
    assert row.occurrence_key == f"schedule-1@{format_instant(T0 + MIN)}"
    assert (row.reminder_ids, row.due_ms, row.lateness_ms) == (("schedule-1",), T0 + MIN, 40)


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("90s", 90_000),
        ("30m", 1_800_000),
        ("1h30m", 5_400_000),
        ("2d", 172_800_000),
        ("1W", 604_800_000),
    ],
)
def test_durations(text: str, ms: int) -> None:
    assert parse_duration_ms(text) == ms


@pytest.mark.parametrize("text", ["", "1", "h", "1.5h", "-1h", "1h 30m", "soon"])
def test_durations_refused(text: str) -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        parse_duration_ms(text)


def test_what_counts_as_a_dsn(tmp_path: Path) -> None:
    assert is_dsn("postgresql://u@h/db")
    assert is_dsn("postgres://u@h/db")
    assert is_dsn("host=127.0.0.1 dbname=test")
    assert not is_dsn(str(tmp_path))
    odd = tmp_path / "a=b"
    odd.mkdir()
    assert not is_dsn(str(odd))  # a folder of that name wins


async def test_a_calendar_reminder_shows_its_zone_and_a_paused_one_is_due_never() -> None:
    store = MemoryStore()
    scribe = Scribe(await store.open("s2", created_at=T0))
    calendar = {"cron": "0 9 * * 1-5", "time_zone": "Europe/Berlin"}
    await scribe.tool("schedule_create", {"prompt": "stand-up", "calendar": calendar}, T0)
    await scribe.tool("schedule_create", {"prompt": "water", "every_seconds": 300}, T0)
    await scribe.tool("schedule_update", {"id": "schedule-2", "paused": True}, T0 + 1)
    events = list(scribe.log.events())
    summary = summarize(SessionRows(scribe.log.header, None, events, events))
    rows = {v.id: v for v in summary.reminders}
    stand_up, water = rows["schedule-1"], rows["schedule-2"]
    assert (stand_up.kind, stand_up.time_zone, stand_up.paused) == (
        "calendar",
        "Europe/Berlin",
        False,
    )
    assert stand_up.next_due_ms is not None
    assert stand_up.next_due_ms > T0
    assert (water.kind, water.time_zone, water.paused, water.next_due_ms) == (
        "every",
        None,
        True,
        None,
    )
