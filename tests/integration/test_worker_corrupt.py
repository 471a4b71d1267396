# ruff: noqa: F811 - pytest fixtures imported by name are parameters too
"""A session that cannot be read stays that session's problem: a worker
that claims it in a batch with good ones reports it once (its id and the
reason), takes it out of the wake index and lets its lease go, delivers the
others, and keeps running; ``PostgresStore.open`` names it in a
:class:`StoreError`. Every kind of bad row, on the real PostgreSQL."""

from __future__ import annotations

import asyncio
import collections
import logging
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tickler.adapters.stores._postgres import PostgresLog, PostgresStore
from tickler.adapters.worker._worker import Worker
from tickler.shell._ports import SessionLocked, StoreError
from tickler.shell._runtime import ScheduleRuntime

from .pgsupport import PgSchema, pg_schema  # noqa: F401 - the fixture
from .test_worker_cli import worker_env
from .worker_support import (
    NeverIdle,
    Recorder,
    delivered_keys,
    followup_keys,
    log_types,
    now_ms,
    running,
    seed,
    session_row,
    wait_until,
)

BAD = "rotten"  # a word no reason text contains
GOOD = [f"good{index}" for index in range(6)]

_HEADER = "UPDATE {s}.sessions SET header = convert_to(%s, 'UTF8') WHERE id = 'rotten'"
_COPY_EVENT_0 = (
    "INSERT INTO {s}.events (session_id, seq, type, time, data)"
    " SELECT session_id, 1, type, time, data FROM {s}.events"
    " WHERE session_id = 'rotten' AND seq = 0"
)
_APPEND = (
    "INSERT INTO {s}.events (session_id, seq, type, time, data)"
    " VALUES ('rotten', 1, %s, 1, convert_to(%s, 'UTF8'))"
)
_LENGTH_2 = "UPDATE {s}.sessions SET length = 2 WHERE id = 'rotten'"
Damage = list[tuple[str, tuple[object, ...]]]

# What the store finds when it loads a claimed session (the header, the
# events after the snapshot, the snapshot's extent).
STORE_DAMAGE: dict[str, Damage] = {
    "header-not-json": [(_HEADER, ('{"type":"session","id":',))],
    "header-names-another-session": [
        (_HEADER, ('{"type":"session","version":0,"id":"elsewhere","createdAt":1}',))
    ],
    "header-field-of-wrong-type": [
        (_HEADER, ('{"type":"session","version":0,"id":"rotten","createdAt":"yesterday"}',))
    ],
    "event-data-not-json": [
        (
            "UPDATE {s}.events SET data = convert_to(%s, 'UTF8') WHERE session_id = 'rotten'",
            ('{"version":1,',),
        )
    ],
    "event-time-not-a-safe-integer": [
        ("UPDATE {s}.events SET time = 9007199254740992 WHERE session_id = 'rotten'", ())
    ],
    "event-missing": [("DELETE FROM {s}.events WHERE session_id = 'rotten'", ())],
    "event-beyond-the-length": [(_COPY_EVENT_0, ())],
    "snapshot-beyond-the-log": [
        ("INSERT INTO {s}.snapshots VALUES ('rotten', 5, convert_to(%s, 'UTF8'))", ("{}",))
    ],
}
# What only reading the log finds: the fold, a runtime record, and a gap
# before a snapshot that does not decode (so the whole log is read).
LOG_DAMAGE: dict[str, Damage] = {
    "schedule-log-corrupt": [(_COPY_EVENT_0, ()), (_LENGTH_2, ())],  # created twice
    "followup-record-malformed": [(_APPEND, ("tickler/followup", "{}")), (_LENGTH_2, ())],
    "gap-under-an-unreadable-snapshot": [
        ("INSERT INTO {s}.snapshots VALUES ('rotten', 1, convert_to('garbage', 'UTF8'))", ()),
        ("DELETE FROM {s}.events WHERE session_id = 'rotten' AND seq = 0", ()),
    ],
}
ALL_DAMAGE = {**STORE_DAMAGE, **LOG_DAMAGE}


async def seed_batch(pg: PgSchema, damage: Damage) -> None:
    """Good sessions and the bad one, each with a reminder due in a second;
    then the bad one is damaged, and everything is due when this returns."""
    seeder = pg.store()
    await seed(seeder, {sid: [{"prompt": sid, "after_seconds": 1}] for sid in [*GOOD, BAD]})
    await seeder.close()
    for sql, params in damage:
        pg.query(sql, params)
    due = max(int(str(row[0])) for row in pg.query("SELECT next_due_at FROM {s}.sessions"))
    await wait_until(lambda: now_ms() >= due, 30, "the reminders to fall due")


def naming_bad(records: list[logging.LogRecord], level: int) -> list[str]:
    """The log lines at ``level`` that name the bad session."""
    return [r.getMessage() for r in records if r.levelno == level and BAD in r.getMessage()]


def delivered_once(pg: PgSchema, recorder: Recorder, sessions: list[str]) -> None:
    """Each of ``sessions`` had its follow-up taken once and marked; nothing else."""
    counts = collections.Counter(recorder.keys())
    assert all(n == 1 for n in counts.values()), counts
    assert sorted(counts) == sorted(followup_keys(pg, sid)[0] for sid in sessions)
    for sid in sessions:
        assert delivered_keys(pg, sid) == followup_keys(pg, sid)


class BatchSpy(PostgresStore):
    """A real store that keeps the ids of each batch it claimed."""

    def __init__(self, pg: PgSchema) -> None:
        super().__init__(pg.dsn, schema=pg.schema)
        self.batches: list[list[str]] = []

    async def claim_due(self, limit: int, now_ms: int) -> list[PostgresLog]:
        logs = await super().claim_due(limit, now_ms)
        self.batches.append([log.header.id for log in logs])
        return logs


@pytest.mark.parametrize("kind", list(ALL_DAMAGE))
async def test_a_bad_session_is_reported_unindexed_and_released_the_rest_delivered(
    pg_schema: PgSchema, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    pg = pg_schema
    await seed_batch(pg, ALL_DAMAGE[kind])
    before = log_types(pg, BAD)
    caplog.set_level(logging.INFO)
    recorder = Recorder()
    store = BatchSpy(pg)
    worker = Worker(store, recorder.target("w"), concurrency=16, poll_s=0.05)
    stop = asyncio.Event()
    task = asyncio.get_running_loop().create_task(worker.run(stop))
    try:
        await wait_until(
            lambda: (
                task.done()
                or (
                    len(delivered_keys(pg)) >= len(GOOD)
                    and session_row(pg, BAD)[0] is None
                    and session_row(pg, BAD)[2] is None
                )
            ),
            30,
            "the good sessions delivered and the bad one let go",
        )
        rounds = len(store.batches)
        # it goes on looking (empty rounds) and never comes back to the bad one
        await wait_until(
            lambda: task.done() or len(store.batches) >= rounds + 3, 30, "three more claims"
        )
        assert not task.done(), "the worker stopped"
    finally:
        stop.set()
        await task  # raises if the worker died
        await store.close()

    delivered_once(pg, recorder, GOOD)
    assert session_row(pg, BAD) == (None, 0, None)  # out of the wake index, lease released
    assert log_types(pg, BAD) == before  # nothing written to it
    assert set(GOOD) <= set(store.batches[0])  # one batch with the bad one
    assert sum(BAD in batch for batch in store.batches) <= 1
    assert len(naming_bad(caplog.records, logging.ERROR)) == 1, caplog.text  # once, with its id
    # (a snapshot passed over is a warning of its own; nothing else names it)
    assert all("snapshot" in line for line in naming_bad(caplog.records, logging.WARNING))
    assert "Traceback" not in caplog.text


@pytest.mark.parametrize("kind", list(STORE_DAMAGE))
async def test_open_names_the_bad_session_and_lets_it_go(pg_schema: PgSchema, kind: str) -> None:
    pg = pg_schema
    await seed_batch(pg, STORE_DAMAGE[kind])
    due_before = session_row(pg, BAD)[0]
    store = pg.store()
    try:
        for _ in range(2):  # the second open finds the lease free again
            with pytest.raises(StoreError, match=f"session '{BAD}'") as raised:
                await store.open(BAD, created_at=now_ms())
            assert not isinstance(raised.value, SessionLocked)
            assert getattr(raised.value, "session_id", None) == BAD
        good = await store.open(GOOD[0], created_at=now_ms())  # the store still works
        assert good.length == 1
        await good.close()
    finally:
        await store.close()
    assert session_row(pg, BAD) == (due_before, 0, None)  # a live open changes no index


@pytest.mark.parametrize("kind", ["header-not-json", "header-names-another-session"])
async def test_worker_process_serves_the_rest_and_exits_0(
    pg_schema: PgSchema, tmp_path: Path, kind: str
) -> None:
    pg = pg_schema
    await seed_batch(pg, STORE_DAMAGE[kind])
    out = tmp_path / "target.txt"
    out.touch()
    with subprocess.Popen(  # noqa: ASYNC220 - polled without blocking below
        [
            *(sys.executable, "-m", "tickler.adapters.cli", "worker", "--dsn", pg.dsn),
            *("--schema", pg.schema, "--deliver", "worker_targets:record", "--poll", "0.1"),
        ],
        env=worker_env(WORKER_TARGET_OUT=str(out)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    ) as proc:
        try:
            await wait_until(
                lambda: (
                    proc.poll() is not None
                    or (
                        len(delivered_keys(pg)) >= len(GOOD)
                        and session_row(pg, BAD)[0] is None
                        and session_row(pg, BAD)[2] is None
                    )
                ),
                60,
                "the good sessions delivered and the bad one let go",
            )
            still_running = proc.poll() is None
            proc.send_signal(signal.SIGTERM)
            _, stderr_bytes = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    stderr = stderr_bytes.decode()
    assert still_running, f"the worker exited: {stderr}"
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr
    delivered = [line.split() for line in out.read_text().splitlines()]
    assert sorted((sid, key) for _, sid, key in delivered) == sorted(
        followup_keys(pg, sid)[0] for sid in GOOD
    )
    assert session_row(pg, BAD) == (None, 0, None)
    (line,) = [line for line in stderr.splitlines() if BAD in line]  # once, with its id
    assert f"session '{BAD}' cannot be read: its stored header" in line


@pytest.mark.parametrize("data", ["garbage", '{"version":1}'], ids=["not-json", "not-an-image"])
async def test_a_snapshot_that_does_not_decode_is_reported_and_the_log_read(
    pg_schema: PgSchema, data: str, caplog: pytest.LogCaptureFixture
) -> None:
    # A snapshot is derived data: the session is served from its log, which
    # is intact, and the snapshot is reported (not silently passed over).
    pg = pg_schema
    damage: Damage = [
        ("INSERT INTO {s}.snapshots VALUES ('rotten', 1, convert_to(%s, 'UTF8'))", (data,))
    ]
    await seed_batch(pg, damage)
    caplog.set_level(logging.INFO)
    recorder = Recorder()
    store = BatchSpy(pg)
    worker = Worker(store, recorder.target("w"), concurrency=16, poll_s=0.05)
    stop = asyncio.Event()
    task = asyncio.get_running_loop().create_task(worker.run(stop))
    try:
        await wait_until(
            lambda: task.done() or len(delivered_keys(pg)) >= len(GOOD) + 1,
            30,
            "every session delivered",
        )
        assert not task.done(), "the worker stopped"
    finally:
        stop.set()
        await task
        await store.close()

    delivered_once(pg, recorder, [*GOOD, BAD])
    assert session_row(pg, BAD) == (None, 0, None)  # nothing more due
    (line,) = naming_bad(caplog.records, logging.WARNING)
    assert "snapshot through 1 does not decode" in line
    assert naming_bad(caplog.records, logging.ERROR) == []
    assert "Traceback" not in caplog.text


async def test_a_mended_session_started_once_is_delivered_again(pg_schema: PgSchema) -> None:
    pg = pg_schema
    await seed_batch(pg, [])
    (kept,) = pg.query("SELECT header FROM {s}.sessions WHERE id = 'rotten'")[0]
    pg.query(_HEADER, ('{"type":"session","id":',))
    recorder = Recorder()
    worker = Worker(pg.store(), recorder.target("w"), concurrency=16, poll_s=0.05)
    async with running(worker):
        await wait_until(
            lambda: (
                len(recorder.calls) == len(GOOD)
                and session_row(pg, BAD)[0] is None
                and session_row(pg, BAD)[2] is None
            ),
            30,
            "the good sessions delivered and the bad one set aside",
        )
        pg.query("UPDATE {s}.sessions SET header = %s WHERE id = 'rotten'", (kept,))  # mended
        store = pg.store()
        log = await store.open(BAD, created_at=now_ms())
        runtime = ScheduleRuntime(log, NeverIdle())
        await runtime.start()  # indexes it again
        await runtime.dispose()
        await log.close()
        await store.close()
        await recorder.wait_for(len(GOOD) + 1, bound_s=30)
        await wait_until(lambda: len(delivered_keys(pg, BAD)) == 1, 30, "its mark")
    delivered_once(pg, recorder, [*GOOD, BAD])
