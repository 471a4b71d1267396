"""The read model over the real JSONL, SQLite and PostgreSQL stores: every
session's reminders with their outbox state, failures and last delivery,
the delivery history, filters and sorting; it reads while a writer holds a
session (its lease, its lock) and takes nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tickler.adapters import DeliveryView, ReminderView, SourceError, open_read_model
from tickler.core import ReminderState, format_instant

from .conftest import store_path
from .pgsupport import PgSchema, pg_schema
from .read_support import (
    HOUR,
    LATE_PROMPT,
    MIN,
    PAST,
    PAUSED_PROMPT,
    T0,
    Scribe,
    Written,
    open_store,
    write_paused_and_overdue,
    write_sessions,
)

__all__ = ["pg_schema"]  # the fixture, imported for pytest


@pytest.fixture(params=["jsonl", "sqlite", "postgres"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def backend(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> tuple[str, str]:
    """(source, schema) of an empty store of ``kind``."""
    if kind == "postgres":
        pg: PgSchema = request.getfixturevalue("pg_schema")
        return pg.dsn, pg.schema
    return str(store_path(kind, tmp_path)), "tickler"


@pytest.fixture
def written(kind: str, backend: tuple[str, str]) -> Written:
    return asyncio.run(write_sessions(kind, *backend))


def by_prompt(views: list[ReminderView]) -> dict[str, ReminderView]:
    return {v.prompt: v for v in views}


async def test_every_sessions_reminders_with_outbox_and_history(written: Written) -> None:
    async with open_read_model(written.source, schema=written.schema) as model:
        assert await model.sessions() == ["alpha", "beta", "gamma"]
        views = await model.reminders(now_ms=T0 + 10 * MIN)
        assert model.problems == []
    # Soonest first: the failing one-shot (due T0+1min), the every, the after.
    assert [v.prompt for v in views] == ["pay rent", "stretch", "call mum"]
    shown = by_prompt(views)
    # The log records the 1st and 2nd failure (then the 4th...); each store's
    # failure index (PostgreSQL's sessions row, the embedded wake index)
    # counts every one.
    failures = 3
    assert shown["pay rent"] == ReminderView(
        session_id="beta",
        id=written.ids["pay rent"],
        kind="after",
        prompt="pay rent",
        next_due_ms=T0 + MIN,
        time_zone=None,
        paused=False,
        state=ReminderState.FAILING,  # dispatched: its hand-over keeps failing
        overdue_ms=None,
        outbox="failing",
        failures=failures,
        last_delivery_ms=None,
        last_lateness_ms=None,
    )
    assert shown["stretch"] == ReminderView(
        session_id="alpha",
        id=written.ids["stretch"],
        kind="every",
        prompt="stretch",
        next_due_ms=T0 + 10 * MIN,
        time_zone=None,
        paused=False,
        state=ReminderState.DUE,  # its next occurrence is now
        overdue_ms=0,
        outbox="idle",
        failures=0,
        last_delivery_ms=T0 + 5 * MIN + 5000,
        last_lateness_ms=5000,
    )
    assert shown["call mum"].kind == "after"
    assert shown["call mum"].next_due_ms == T0 + HOUR
    assert (shown["call mum"].outbox, shown["call mum"].last_delivery_ms) == ("idle", None)


async def test_filters_and_sorts(written: Written) -> None:
    now = T0 + 10 * MIN
    async with open_read_model(written.source, schema=written.schema) as model:
        soon = await model.reminders(now_ms=now, due_within_ms=MIN)
        failing = await model.reminders(now_ms=now, failing=True)
        alpha = await model.reminders(now_ms=now, session_id="alpha", sort="session")
        first = await model.reminders(now_ms=now, limit=1)
        by_session = await model.reminders(now_ms=now, sort="session")
        by_failures = await model.reminders(now_ms=now, sort="failures", limit=2)
        nobody = await model.reminders(now_ms=now, session_id="nobody")
        with pytest.raises(ValueError, match="unknown sort"):
            await model.reminders(now_ms=now, sort="prompt")
    assert [v.prompt for v in soon] == ["pay rent", "stretch"]  # overdue ones too
    assert [v.prompt for v in failing] == ["pay rent"]
    assert [v.prompt for v in alpha] == ["stretch", "call mum"]
    assert [v.prompt for v in first] == ["pay rent"]
    assert [(v.session_id, v.prompt) for v in by_session] == [
        ("alpha", "stretch"),
        ("alpha", "call mum"),
        ("beta", "pay rent"),
    ]
    assert [v.prompt for v in by_failures] == ["pay rent", "stretch"]
    assert nobody == []


async def test_deliveries_pending_first_then_the_latest(written: Written) -> None:
    async with open_read_model(written.source, schema=written.schema) as model:
        rows = await model.deliveries()
        only_alpha = await model.deliveries(session_id="alpha")
    failures = 3  # every store's failure index counts each one
    assert rows == [
        DeliveryView(
            session_id="beta",
            occurrence_key=f"{written.ids['pay rent']}@{format_instant(T0 + MIN)}",
            reminder_ids=(written.ids["pay rent"],),
            due_ms=T0 + MIN,
            delivered_ms=None,
            lateness_ms=None,
            status="failing",
            failures=failures,
        ),
        DeliveryView(
            session_id="alpha",
            occurrence_key=f"{written.ids['stretch']}@{format_instant(T0 + 5 * MIN)}",
            reminder_ids=(written.ids["stretch"],),
            due_ms=T0 + 5 * MIN,
            delivered_ms=T0 + 5 * MIN + 5000,
            lateness_ms=5000,
            status="delivered",
            failures=0,
        ),
    ]
    assert only_alpha == rows[1:]


async def test_it_reads_while_a_writer_holds_a_session(written: Written) -> None:
    store = open_store(written.kind, written.source, written.schema)
    try:
        held = Scribe(await store.open("alpha", created_at=T0))
        async with open_read_model(written.source, schema=written.schema) as model:
            views = await model.reminders(now_ms=T0, session_id="alpha")
        # The writer still holds it, and goes on writing.
        await held.tool("schedule_create", {"prompt": "more", "after_seconds": 60}, T0 + 2)
        await held.log.close()
    finally:
        await store.close()
    assert sorted(v.prompt for v in views) == ["call mum", "stretch"]


async def test_a_session_that_cannot_be_read_is_a_problem_not_a_failure(
    written: Written,
) -> None:
    store = open_store(written.kind, written.source, written.schema)
    try:
        log = await store.open("delta", created_at=T0)
        from tickler.shell._ports import NewEvent

        log.append(
            [NewEvent("schedule/change", b'{"version":1,"operation":"delete","id":"x"}', T0)]
        )
        await log.close()
    finally:
        await store.close()
    async with open_read_model(written.source, schema=written.schema) as model:
        views = await model.reminders(now_ms=T0, session_id="delta")
        assert views == []
        assert [sid for sid, _ in model.problems] == ["delta"]


async def test_a_source_that_is_no_store_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(SourceError, match="neither a JSONL store directory nor an SQLite"):
        async with open_read_model(str(tmp_path / "notes.txt")):
            pass
    with pytest.raises(SourceError, match="no such file or directory"):
        async with open_read_model(str(tmp_path / "missing")):
            pass


def test_version_2_adds_the_read_models_indexes(pg_schema: PgSchema) -> None:
    from tickler.adapters.stores._postgres_schema import SCHEMA_VERSION, migrate

    def indexes() -> set[str]:
        rows = pg_schema.query(
            "SELECT indexname FROM pg_indexes WHERE schemaname = %s", (pg_schema.schema,)
        )
        return {str(r[0]) for r in rows}

    assert {"sessions_due_id", "sessions_failing", "events_delivered"} <= indexes()
    # A schema left at version 1 (before them) is refused, then upgraded.
    for name in ("sessions_due_id", "sessions_failing", "events_delivered"):
        pg_schema.query(f"DROP INDEX {{s}}.{name}")
    pg_schema.query("UPDATE {s}.migrations SET version = 1")

    async def read() -> list[str]:
        async with open_read_model(pg_schema.dsn, schema=pg_schema.schema) as model:
            return await model.sessions()

    with pytest.raises(Exception, match="run tickler db migrate"):
        asyncio.run(read())
    assert migrate(pg_schema.dsn, pg_schema.schema) == (1, SCHEMA_VERSION)
    assert {"sessions_due_id", "sessions_failing", "events_delivered"} <= indexes()
    assert asyncio.run(read()) == []


def test_version_3_adds_the_pause_index_and_migrate_applies_it(pg_schema: PgSchema) -> None:
    """A schema at version 2 (before the pause index) is refused by the read
    model; ``migrate`` builds the index from the events already there, and
    the session whose only reminder is paused is listed."""
    from tickler.adapters.stores._postgres_schema import SCHEMA_VERSION, migrate

    asyncio.run(write_paused_and_overdue("postgres", pg_schema.dsn, pg_schema.schema))
    pg_schema.query("DROP INDEX {s}.events_paused")
    pg_schema.query("UPDATE {s}.migrations SET version = 2")

    async def listed() -> list[str]:
        async with open_read_model(pg_schema.dsn, schema=pg_schema.schema) as model:
            return [v.prompt for v in await model.reminders(now_ms=PAST, session_id=None)]

    with pytest.raises(Exception, match="run tickler db migrate"):
        asyncio.run(listed())
    assert SCHEMA_VERSION == 3
    assert migrate(pg_schema.dsn, pg_schema.schema) == (2, 3)
    rows = pg_schema.query(
        "SELECT indexdef FROM pg_indexes WHERE schemaname = %s AND indexname = 'events_paused'",
        (pg_schema.schema,),
    )
    assert len(rows) == 1
    assert PAUSED_PROMPT in asyncio.run(listed())


async def test_postgres_walks_the_wake_index_to_the_same_answer(pg_schema: PgSchema) -> None:
    """Many sessions, small limits (several pages of the walk), and a
    failing session whose wake a worker put off past its soonest reminder:
    every cut equals the same cut of the whole list."""
    store = pg_schema.store()
    try:
        for n in range(60):
            scribe = Scribe(await store.open(f"s{n:02d}", created_at=T0))
            for after in (60 + (n * 37) % 600, 3600 + n):
                args = {"prompt": f"p{n}-{after}", "after_seconds": after}
                await scribe.tool("schedule_create", args, T0)
            await scribe.log.close()
    finally:
        await store.close()
    # What a worker's defer does: one more failure, the wake put off.
    pg_schema.query(
        "UPDATE {s}.sessions SET failures = 1, next_due_at = %s WHERE id = 's07'", (T0 + 99 * HOUR,)
    )
    async with open_read_model(pg_schema.dsn, schema=pg_schema.schema) as model:
        whole = []
        for sort in ("due", "session", "failures"):
            whole = await model.reminders(now_ms=T0, sort=sort)
            assert len(whole) == 120
            for limit in (1, 3, 17, 40, 119):
                cut = await model.reminders(now_ms=T0, sort=sort, limit=limit)
                assert cut == whole[:limit], (sort, limit)
            soon = await model.reminders(now_ms=T0, due_within_ms=5 * MIN, sort=sort)
            assert soon == [
                v for v in whole if v.next_due_ms is not None and v.next_due_ms <= T0 + 5 * MIN
            ]
    s07 = [v for v in whole if v.session_id == "s07"]
    assert len(s07) == 2
    assert all(v.next_due_ms is not None and v.next_due_ms < T0 + 2 * HOUR for v in s07)


async def test_postgres_finds_sessions_whose_reminders_are_all_paused_in_every_cut(
    pg_schema: PgSchema, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sessions whose reminders are all paused have no wake, some that
    paused one of two have: every sort and cut (in pages of 4 sessions)
    equals the same cut of the whole list, paused ones last by session."""
    from tickler.adapters.read import _postgres as _read_postgres

    monkeypatch.setattr(_read_postgres, "PAGE", 4)
    store = pg_schema.store()
    all_paused = {3, 4, 11, 12, 13, 22, 29}
    try:
        for n in range(30):
            scribe = Scribe(await store.open(f"s{n:02d}", created_at=T0))
            for after in (60 + (n * 37) % 600, 3600 + n):
                args = {"prompt": f"p{n}-{after}", "after_seconds": after}
                await scribe.tool("schedule_create", args, T0)
            pause = [r.id for r in scribe.state.active]
            for schedule_id in pause if n in all_paused else pause[:1] if n % 5 == 0 else []:
                await scribe.tool("schedule_update", {"id": schedule_id, "paused": True}, T0 + 1)
            if n == 22:  # paused, then resumed and paused again: still one session
                await scribe.tool("schedule_update", {"id": pause[0], "paused": False}, T0 + 2)
                await scribe.tool("schedule_update", {"id": pause[0], "paused": True}, T0 + 3)
            await scribe.log.close()
    finally:
        await store.close()
    no_wake = pg_schema.query("SELECT id FROM {s}.sessions WHERE next_due_at IS NULL ORDER BY id")
    assert [str(r[0]) for r in no_wake] == [f"s{n:02d}" for n in sorted(all_paused)]
    async with open_read_model(pg_schema.dsn, schema=pg_schema.schema) as model:
        for sort in ("due", "session", "failures"):
            whole = await model.reminders(now_ms=T0, sort=sort)
            assert len(whole) == 60
            paused = [v for v in whole if v.state == "paused"]
            assert len(paused) == 2 * len(all_paused) + 6  # and one of s00, s05 ... s25
            assert all(v.next_due_ms is None and v.paused for v in paused)
            if sort != "session":
                assert whole[-len(paused) :] == paused  # due never: last
            for limit in (1, 5, 17, 40, 45, 50, 52, 55, 59):
                cut = await model.reminders(now_ms=T0, sort=sort, limit=limit)
                assert cut == whole[:limit], (sort, limit)
            soon = await model.reminders(now_ms=T0, due_within_ms=5 * MIN, sort=sort)
            assert soon == [
                v for v in whole if v.next_due_ms is not None and v.next_due_ms <= T0 + 5 * MIN
            ]
        assert model.problems == []


async def test_a_session_is_read_again_once_it_changed(kind: str, backend: tuple[str, str]) -> None:
    """One read model kept open (a dashboard): a session written meanwhile
    shows its change (PostgreSQL and JSONL keep unchanged ones)."""
    source, schema = backend
    store = open_store(kind, source, schema)
    try:
        scribe = Scribe(await store.open("s1", created_at=T0))
        await scribe.tool("schedule_create", {"prompt": "one", "after_seconds": 60}, T0)
        async with open_read_model(source, schema=schema) as model:
            first = await model.reminders(now_ms=T0)
            await scribe.tool("schedule_create", {"prompt": "two", "after_seconds": 120}, T0 + 1)
            second = await model.reminders(now_ms=T0)
            third = await model.reminders(now_ms=T0)
        await scribe.log.close()
    finally:
        await store.close()
    assert [v.prompt for v in first] == ["one"]
    assert [v.prompt for v in second] == [v.prompt for v in third] == ["one", "two"]


async def test_a_paused_reminder_is_listed_paused_and_an_overdue_one_marked(
    kind: str, backend: tuple[str, str]
) -> None:
    """The session whose only reminder is paused needs no process (on
    PostgreSQL its wake is None), yet its reminder is listed: paused, no
    next due. The one no runtime dispatched is due, overdue by how much."""
    source, schema = backend
    await write_paused_and_overdue(kind, source, schema)
    now = PAST + 3 * MIN
    async with open_read_model(source, schema=schema) as model:
        by_due = await model.reminders(now_ms=now)
        by_session = await model.reminders(now_ms=now, sort="session")
        first_two = await model.reminders(now_ms=now, limit=2)
        paws_only = await model.reminders(now_ms=now, session_id="paws")
        soon = await model.reminders(now_ms=now, due_within_ms=HOUR)
        assert model.problems == []
    # Soonest first, the paused one (due never) last.
    assert [v.prompt for v in by_due] == [LATE_PROMPT, "stretch", PAUSED_PROMPT]
    assert [v.prompt for v in by_session] == [LATE_PROMPT, "stretch", PAUSED_PROMPT]
    assert [v.prompt for v in first_two] == [LATE_PROMPT, "stretch"]
    assert paws_only == by_due[2:]
    assert [v.prompt for v in soon] == [LATE_PROMPT, "stretch"]
    late, stretch, paused = by_due
    assert (paused.state, paused.next_due_ms, paused.overdue_ms) == ("paused", None, None)
    assert paused.paused
    assert (late.state, late.next_due_ms, late.overdue_ms) == ("due", PAST + MIN, 2 * MIN)
    assert (stretch.state, stretch.next_due_ms, stretch.overdue_ms) == (
        "scheduled",
        PAST + 5 * MIN,
        None,
    )


async def test_every_reminder_carries_the_cores_state(written: Written) -> None:
    """A one-shot dispatched whose hand-over keeps failing is failing; one
    waiting for its target, delivering; the others scheduled."""
    async with open_read_model(written.source, schema=written.schema) as model:
        views = by_prompt(await model.reminders(now_ms=T0 + 10 * MIN - 1))
    assert {p: (v.state, v.overdue_ms) for p, v in views.items()} == {
        "pay rent": ("failing", None),
        "stretch": ("scheduled", None),
        "call mum": ("scheduled", None),
    }
