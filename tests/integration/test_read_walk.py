"""The read model's walk of the JSONL and SQLite stores' wake index: a query
cut by ``limit`` or ``due_within`` reads only the sessions its answer needs
and gives the answer a read of every session gives, on random stores whose
sessions are held, failing, waiting, overdue, paused, changed behind the
index or unknown to it."""

from __future__ import annotations

import random
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tickler.adapters import ReadModel, ReminderView, open_read_model
from tickler.adapters.read import _common as _read_common
from tickler.adapters.read import _files as _read_files
from tickler.adapters.read import _walk as _read_walk
from tickler.adapters.read._query import Query
from tickler.adapters.read._walk import plan_of
from tickler.adapters.stores._wake_file import FILE_NAME
from tickler.adapters.stores._wakes import DUE_NOW, WakeRow
from tickler.core import format_instant
from tickler.core._decide import next_target
from tickler.shell._loading import load_session
from tickler.shell._ports import SessionStore

from .conftest import make_store, store_path
from .read_support import HOUR, MIN, T0, Scribe

DAY = 24 * HOUR
NOW = T0 + 2 * HOUR  # after every write of the random stores
LIMITS = (0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, None)
WITHIN = (None, 0, 10 * MIN, HOUR, DAY, 40 * DAY)
FRESH_LIMITS = (1, 5, 21)


@pytest.fixture(params=["jsonl", "sqlite"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def index_path(kind: str, source: Path) -> Path:
    return source / FILE_NAME if kind == "jsonl" else source


@contextmanager
def index(kind: str, source: Path) -> Iterator[sqlite3.Connection]:
    with closing(sqlite3.connect(index_path(kind, source), isolation_level=None)) as conn:
        yield conn


def random_call(scribe: Scribe, rng: random.Random) -> tuple[str, dict[str, object]] | None:
    """A tool call: a one-shot soon or in weeks, an every, an ``at`` (on
    the hour: ties across sessions), a calendar rule; a pause, a resume, a
    delete, a snooze (None: nothing to change)."""
    active = [r.id for r in scribe.state.active]
    paused = [i for i in active if scribe.state.is_paused(i)]
    roll = rng.random()
    if roll < 0.35:
        after = rng.choice([rng.randint(60, 3 * HOUR // 1000), rng.randint(1, 30) * 86_400])
        return "schedule_create", {"prompt": f"after {after}", "after_seconds": after}
    if roll < 0.45:
        every = rng.choice([300, 3600, 86_400])
        return "schedule_create", {"prompt": f"every {every}", "every_seconds": every}
    if roll < 0.5:
        at = format_instant(T0 + rng.randint(1, 48) * HOUR)
        return "schedule_create", {"prompt": f"at {at}", "at": at}
    if roll < 0.6:
        rule = {"cron": rng.choice(["0 9 * * *", "*/30 * * * *"]), "time_zone": "UTC"}
        return "schedule_create", {"prompt": "calendar", "calendar": rule}
    if not active:
        return None
    if roll < 0.75:
        return "schedule_update", {"id": rng.choice(active), "paused": True}
    if roll < 0.82 and paused:
        return "schedule_update", {"id": rng.choice(paused), "paused": False}
    if roll < 0.9:
        return "schedule_delete", {"id": rng.choice(active)}
    return "schedule_update", {"id": rng.choice(active), "snooze_seconds": rng.randint(60, 7200)}


async def random_delivery(scribe: Scribe, rng: random.Random, now: int) -> int:
    """What is due by T0 + 90 min dispatched, on time or late; then
    delivered, failed or left waiting. The instant after it."""
    target = next_target(scribe.state)
    if target is None or target > T0 + 90 * MIN or scribe.outbox:
        return now
    now = max(now, target) + rng.choice([0, rng.randint(1, 30 * MIN)])
    await scribe.dispatch(now)
    fate = rng.random()
    if fate < 0.5:
        await scribe.deliver(now + rng.randint(0, 5000))
    elif fate < 0.8:
        for n in range(rng.randint(1, 4)):
            await scribe.fail(now + (n + 1) * 1000)
    return now + 5000


async def random_session(store: SessionStore, session_id: str, rng: random.Random) -> Scribe:
    """A session of a few tool calls and deliveries before NOW (a reminder
    due and never dispatched is overdue at NOW)."""
    scribe = Scribe(await store.open(session_id, created_at=T0))
    now = T0
    for _ in range(rng.randint(0, 7)):
        now += rng.randint(0, 10 * MIN)
        if now > NOW - 31 * MIN:  # a delivery ends by NOW: nothing is written after it
            break
        if rng.random() < 0.2:
            now = await random_delivery(scribe, rng, now)
        elif (call := random_call(scribe, rng)) is not None:
            await scribe.tool(*call, now)
    return scribe


async def reopened(store: SessionStore, session_id: str) -> Scribe:
    """A writer of a session that exists, with its state loaded."""
    log = await store.open(session_id, created_at=T0)
    loaded = load_session(log, log.load_snapshot())
    return Scribe(log, loaded.state, dict(loaded.outbox))


async def random_store(kind: str, source: Path, seed: int, sessions: int = 40) -> None:
    """``sessions`` random sessions; then, behind the stores' backs, what
    else an index may say: a worker's defer (one more failure, the wake put
    off), rows lost (a store from before the index), a session set aside."""
    rng = random.Random(seed)
    store = make_store(kind, source.parent)
    try:
        for n in range(sessions):
            scribe = await random_session(store, f"s{n:02d}", rng)
            await scribe.log.close()
    finally:
        await store.close()
    with index(kind, source) as conn:
        ids = [str(r[0]) for r in conn.execute("SELECT session_id FROM wakes ORDER BY session_id")]
        for session_id in rng.sample(ids, 3):
            conn.execute(
                "UPDATE wakes SET failures = failures + 1, next_due_at = ? WHERE session_id = ?",
                (NOW + 99 * HOUR, session_id),
            )
        for session_id in rng.sample(ids, 2):
            conn.execute("DELETE FROM wakes WHERE session_id = ?", (session_id,))
        conn.execute(
            "UPDATE wakes SET set_aside = 'bad', next_due_at = NULL WHERE session_id = ?",
            (rng.choice(ids),),
        )


@dataclass(frozen=True)
class Cut:
    sort: str
    failing: bool
    within: int | None
    limit: int | None

    async def of(self, model: ReadModel) -> list[ReminderView]:
        return await model.reminders(
            now_ms=NOW,
            due_within_ms=self.within,
            failing=self.failing,
            sort=self.sort,
            limit=self.limit,
        )

    def of_every(self, whole: list[ReminderView]) -> list[ReminderView]:
        return Query(NOW, self.within, self.failing, self.sort, self.limit).select(whole)


async def assert_every_cut_is_the_full_reads(source: str, schema: str = "tickler") -> None:
    """Each sort, filter and cut equals the same cut of every session's
    reminders (a read of every session: no limit, no horizon): on a read
    model that keeps the summaries it read (a dashboard's), and, for some
    cuts, on a fresh one (``tickler reminders``: nothing kept)."""
    async with open_read_model(source, schema=schema) as model:
        for sort in ("due", "session", "failures"):
            whole = await model.reminders(now_ms=NOW, sort=sort)
            for failing in (False, True):
                for within in WITHIN:
                    for limit in LIMITS:
                        cut = Cut(sort, failing, within, limit)
                        expected = cut.of_every(whole)
                        assert await cut.of(model) == expected, cut
                        if limit in FRESH_LIMITS:
                            async with open_read_model(source, schema=schema) as fresh:
                                assert await cut.of(fresh) == expected, ("fresh", cut)


@pytest.mark.parametrize("seed", range(8))
async def test_every_cut_through_the_index_equals_the_full_reads(
    kind: str, tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Random stores, each walked in pages of 1 to 3 sessions or 500 (a
    stop after each page)."""
    monkeypatch.setattr(_read_walk, "PAGE", (1, 2, 3, 500)[seed % 4])
    source = store_path(kind, tmp_path)
    await random_store(kind, source, seed)
    async with open_read_model(str(source)) as model:
        whole = await model.reminders(now_ms=NOW)
        assert model.problems == []
    states = {v.state for v in whole}
    assert {"scheduled", "paused"} <= states, states  # the mix holds what it should
    await assert_every_cut_is_the_full_reads(str(source))


@pytest.mark.parametrize("seed", range(3))
async def test_held_sessions_are_read_whatever_their_row_says(
    kind: str, tmp_path: Path, seed: int
) -> None:
    """A live process holds sessions and has written reminders due before
    anything else (their rows only hints meanwhile), due before any other: every cut shows
    them."""
    source = store_path(kind, tmp_path)
    await random_store(kind, source, seed)
    store = make_store(kind, tmp_path)
    try:
        held = [await reopened(store, f"s{n:02d}") for n in (3, 17)]
        held.append(Scribe(await store.open("new", created_at=T0)))
        for n, scribe in enumerate(held):
            args = {"prompt": f"held {n}", "after_seconds": 60 + n}
            await scribe.tool("schedule_create", args, T0 - 10 * HOUR)
        # Their rows say what they said before (a holder writes its hints
        # now and then): wakes long after NOW, or none.
        notes = getattr(store, "_notes", None)  # JSONL: hints within a second
        if notes is not None:
            notes.cancel()
        with index(kind, source) as conn:
            conn.execute(
                "UPDATE wakes SET next_due_at = CASE session_id WHEN 'new' THEN NULL ELSE ? END"
                " WHERE holder IS NOT NULL",
                (NOW + 99 * HOUR,),
            )
        await assert_every_cut_is_the_full_reads(str(source))
        async with open_read_model(str(source)) as model:
            first = await model.reminders(now_ms=NOW, limit=3)
        assert [v.prompt for v in first] == ["held 0", "held 1", "held 2"]
        for scribe in held:
            await scribe.log.close()
    finally:
        await store.close()


async def test_a_jsonl_file_changed_behind_the_index_is_read(tmp_path: Path) -> None:
    """A session written by a process that kept no index (here: the index
    put back as it was before): its file's size is not its row's."""
    source = store_path("jsonl", tmp_path)
    store = make_store("jsonl", tmp_path)
    try:
        for n in range(30):
            scribe = Scribe(await store.open(f"s{n:02d}", created_at=T0))
            args = {"prompt": f"in {n + 1} days", "after_seconds": (n + 1) * 86_400}
            await scribe.tool("schedule_create", args, T0)
            await scribe.log.close()
    finally:
        await store.close()
    shutil.copy(source / FILE_NAME, tmp_path / "old.db")  # closed: no WAL beside it
    store = make_store("jsonl", tmp_path)
    try:
        scribe = await reopened(store, "s29")
        await scribe.tool("schedule_create", {"prompt": "soon", "after_seconds": 60}, T0)
        await scribe.log.close()
    finally:
        await store.close()
    for name in (FILE_NAME + "-wal", FILE_NAME + "-shm"):
        (source / name).unlink(missing_ok=True)
    shutil.copy(tmp_path / "old.db", source / FILE_NAME)
    async with open_read_model(str(source)) as model:
        first = await model.reminders(now_ms=T0, limit=2)
    assert [v.prompt for v in first] == ["soon", "in 1 days"]
    await assert_every_cut_is_the_full_reads(str(source))


@pytest.mark.parametrize("damage", ["absent", "garbage", "symlink"])
async def test_a_jsonl_store_without_a_usable_index_is_read_whole(
    tmp_path: Path, damage: str
) -> None:
    source = store_path("jsonl", tmp_path)
    await random_store("jsonl", source, seed=7)
    for name in (FILE_NAME, FILE_NAME + "-wal", FILE_NAME + "-shm"):
        (source / name).unlink(missing_ok=True)
    if damage == "garbage":
        (source / FILE_NAME).write_bytes(b"not a database" * 100)
    elif damage == "symlink":
        (tmp_path / "elsewhere.db").write_bytes(b"")
        (source / FILE_NAME).symlink_to(tmp_path / "elsewhere.db")
    before = sorted(p.name for p in source.iterdir())
    await assert_every_cut_is_the_full_reads(str(source))
    assert sorted(p.name for p in source.iterdir()) == before  # nothing made, nothing moved


class Counted:
    """Counts the sessions whose rows are folded into a summary."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        for module in (_read_files, _read_common):
            real = module.summarize

            def counted(rows: object, real: object = real) -> object:
                self.count += 1
                return real(rows)  # type: ignore[operator]

            monkeypatch.setattr(module, "summarize", counted)


async def test_a_cut_reads_only_the_sessions_it_needs(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """200 sessions, each with a reminder due a minute after the one
    before; one all paused, one held nothing: the 10 soonest read about 10
    sessions, the paused one at the end the paused sessions only."""
    source = store_path(kind, tmp_path)
    store = make_store(kind, tmp_path)
    try:
        for n in range(200):
            scribe = Scribe(await store.open(f"s{n:03d}", created_at=T0))
            args = {"prompt": f"p{n}", "after_seconds": 3600 + 60 * n}
            await scribe.tool("schedule_create", args, T0)
            if n in (50, 150):
                (only,) = [r.id for r in scribe.state.active]
                if n == 50:
                    await scribe.tool("schedule_update", {"id": only, "paused": True}, T0 + 1)
                else:
                    await scribe.tool("schedule_delete", {"id": only}, T0 + 1)
            await scribe.log.close()
    finally:
        await store.close()
    counted = Counted(monkeypatch)
    async with open_read_model(str(source)) as model:
        soonest = await model.reminders(now_ms=T0, limit=10)
    assert [v.prompt for v in soonest] == [f"p{n}" for n in range(10)]
    assert counted.count <= 20
    counted.count = 0
    async with open_read_model(str(source)) as model:
        soon = await model.reminders(now_ms=T0, due_within_ms=HOUR + 5 * MIN)
    assert [v.prompt for v in soon] == [f"p{n}" for n in range(6)]
    assert counted.count == 6
    counted.count = 0
    async with open_read_model(str(source)) as model:
        every = await model.reminders(now_ms=T0, limit=199)
    assert every[-1].prompt == "p50"
    assert every[-1].paused
    assert counted.count == 199  # s150 holds nothing, and paused nothing: never read


async def test_a_reminder_due_at_the_next_wake_waits_for_that_session(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Session "z" (woken first) holds a reminder due at X; "a" wakes at X:
    its reminder sorts before z's (same instant, by session), so the walk
    reads "a" before it stops (pages of one session)."""
    monkeypatch.setattr(_read_walk, "PAGE", 1)
    x = T0 + 5 * HOUR
    source = store_path(kind, tmp_path)
    store = make_store(kind, tmp_path)
    try:
        z = Scribe(await store.open("z", created_at=T0))
        await z.tool("schedule_create", {"prompt": "z first", "at": format_instant(x - HOUR)}, T0)
        await z.tool("schedule_create", {"prompt": "z at x", "at": format_instant(x)}, T0)
        a = Scribe(await store.open("a", created_at=T0))
        await a.tool("schedule_create", {"prompt": "a at x", "at": format_instant(x)}, T0)
        for scribe in (z, a):
            await scribe.log.close()
    finally:
        await store.close()
    async with open_read_model(str(source)) as model:
        first = await model.reminders(now_ms=T0, limit=2)
    assert [v.prompt for v in first] == ["z first", "a at x"]


def test_a_row_whose_wake_is_not_known_is_read() -> None:
    """A holder that let go without a wake, one that died, a log changed
    behind the index: the row says "look again" (DUE_NOW), no bound."""
    rows = {
        "known": WakeRow("known", T0, None, 0, None, None),
        "again": WakeRow("again", DUE_NOW, None, 0, None, None),
        "none": WakeRow("none", None, None, 0, None, None),
    }
    plan = plan_of(["again", "known", "none"], rows, T0 - HOUR, never_sent=set)
    assert (plan.read, plan.timed, plan.quiet) == (["again"], [(T0, "known")], ["none"])
