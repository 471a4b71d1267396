"""``tickler check`` and ``tickler inspect`` over an SQLite store file and a
PostgreSQL DSN (every session, or ``--session ID``), as a user runs them:
verdicts per session, a corrupt session named with its event, reports as
for files; an unreachable database is one line and exit 1, a missing
schema one line and exit 2."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tickler.core import format_instant
from tickler.shell._ports import NewEvent

from .conftest import store_path
from .pgsupport import PgSchema, pg_schema
from .read_support import (
    LATE_PROMPT,
    MIN,
    PAST,
    PAUSED_PROMPT,
    T0,
    Written,
    open_store,
    write_sessions,
)
from .test_cli_reminders import paused_and_overdue, tickler, uri

__all__ = ["paused_and_overdue", "pg_schema"]  # the fixtures, imported for pytest


@pytest.fixture(params=["sqlite", "postgres"])
def written(request: pytest.FixtureRequest, tmp_path: Path) -> Written:
    kind = str(request.param)
    if kind == "postgres":
        pg: PgSchema = request.getfixturevalue("pg_schema")
        found = asyncio.run(write_sessions(kind, pg.dsn, pg.schema))
        found.source = uri(pg)
        return found
    return asyncio.run(write_sessions(kind, str(store_path(kind, tmp_path)), "tickler"))


def add_corrupt_session(written: Written, dsn: str) -> None:
    """A session whose first event deletes a reminder never created."""

    async def write() -> None:
        store = open_store(written.kind, dsn, written.schema)
        try:
            log = await store.open("delta", created_at=T0)
            bad = b'{"version":1,"operation":"delete","id":"x"}'
            log.append([NewEvent("schedule/change", bad, T0)])
            await log.close()
        finally:
            await store.close()

    asyncio.run(write())


def test_check_gives_every_stored_session_a_verdict(
    written: Written, request: pytest.FixtureRequest
) -> None:
    done = tickler("check", written.source, "--schema", written.schema, "--json")
    assert (done.returncode, done.stderr) == (0, "")
    files = json.loads(done.stdout)["files"]
    assert [(f["session"], f["status"], f["events"], f["active"]) for f in files] == [
        ("alpha", "valid", 5, 2),
        ("beta", "valid", 5, 0),
        ("gamma", "valid", 2, 0),
    ]
    dsn = request.getfixturevalue("pg_schema").dsn if written.kind == "postgres" else written.source
    add_corrupt_session(written, dsn)
    corrupt = tickler("check", written.source, "--schema", written.schema)
    assert corrupt.returncode == 1
    assert corrupt.stderr.count("\n") == 1
    assert '[session "delta"]: event 0:' in corrupt.stderr
    one = tickler("check", written.source, "--schema", written.schema, "--session", "beta")
    assert (one.returncode, one.stdout.count("\n")) == (0, 1)
    assert '[session "beta"]: valid (5 events, 0 active)' in one.stdout


def test_inspect_reports_a_stored_session(written: Written) -> None:
    done = tickler(
        "inspect", written.source, "--schema", written.schema, "--session", "alpha", "--json"
    )
    assert (done.returncode, done.stderr) == (0, "")
    report = json.loads(done.stdout)
    assert report["session"] == "alpha"
    assert sorted(row["prompt"] for row in report["active"]) == ["call mum", "stretch"]
    assert [d["delivered"] for d in report["deliveries"]] == [True]
    every = tickler("inspect", written.source, "--schema", written.schema, "--json")
    sessions = json.loads(every.stdout)["sessions"]
    assert [s["session"] for s in sessions] == ["alpha", "beta", "gamma"]
    assert sessions[1]["report"]["pending"]["deliveries"][0]["failures"] >= 2


@pytest.mark.parametrize("command", ["check", "inspect"])
def test_an_unreachable_database_is_one_line_exit_1(command: str) -> None:
    done = tickler(command, "postgresql://postgres@127.0.0.1:1/test")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.count("\n") == 1
    assert "cannot connect to PostgreSQL at 127.0.0.1:1" in done.stderr


def test_a_schema_that_is_not_there_is_one_line_exit_2(pg_schema: PgSchema) -> None:
    done = tickler("check", uri(pg_schema), "--schema", "nope")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1
    assert "no tickler schema 'nope'" in done.stderr


def test_inspect_why_tells_a_stored_reminders_story(written: Written) -> None:
    # "stretch" (every 5 min) was dispatched and delivered once in alpha.
    done = tickler(
        "inspect", written.source, "--schema", written.schema, "--why", "schedule-2", "--json"
    )
    assert (done.returncode, done.stderr) == (0, "")
    stories = json.loads(done.stdout)["stories"]
    alpha = [story for story in stories if story["session"] == "alpha"]
    assert len(alpha) == 1
    kinds = [step["event"] for step in alpha[0]["steps"]]
    assert kinds[0] == "created"
    assert "delivered" in kinds
    missing = tickler("inspect", written.source, "--schema", written.schema, "--why", "nope-9")
    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1
    assert "ever created a reminder 'nope-9'" in missing.stderr


def test_inspect_why_never_prints_a_dsns_password(pg_schema: PgSchema) -> None:
    asyncio.run(write_sessions("postgres", pg_schema.dsn, pg_schema.schema))
    source = "postgresql://postgres:s3cret-pw@127.0.0.1:5432/test"
    missing = tickler("inspect", source, "--schema", pg_schema.schema, "--why", "nope-9")
    assert missing.returncode == 2, missing.stderr
    assert "ever created a reminder 'nope-9'" in missing.stderr
    assert "s3cret-pw" not in missing.stderr + missing.stdout


def test_inspect_shows_a_paused_reminder_paused_with_no_next_wake(
    paused_and_overdue: Written,
) -> None:
    """On every store: the paused reminder is paused (it was "scheduled"),
    the session has no next wake (it had the paused target), and --why
    says the same state; the reminder no runtime dispatched is due."""
    found = paused_and_overdue
    base = ("inspect", found.source, "--schema", found.schema)

    def one(session_id: str) -> tuple[str, ...]:
        if found.kind == "jsonl":  # a session file of the directory
            return ("inspect", str(Path(found.source) / f"{session_id}.jsonl"))
        return (*base, "--session", session_id)

    paws = tickler(*one("paws"), "--json")
    assert (paws.returncode, paws.stderr) == (0, "")
    report = json.loads(paws.stdout)
    (row,) = report["active"]
    assert (row["prompt"], row["state"]) == (PAUSED_PROMPT, "paused")
    assert report["nextWake"] is None
    assert row["nextDue"] is None
    text = tickler(*one("paws"))
    assert "next wake: none" in text.stdout
    assert "scheduled" not in text.stdout
    why = tickler(*base, "--why", row["id"], "--json")
    (story,) = [s for s in json.loads(why.stdout)["stories"] if s["session"] == "paws"]
    assert (story["state"], story["nextDue"]) == ("paused", None)
    assert story["status"].startswith("paused: ")
    late = json.loads(tickler(*one("late"), "--json").stdout)
    states = {r["prompt"]: (r["state"], r["nextDue"]) for r in late["active"]}
    assert states == {
        LATE_PROMPT: ("due", format_instant(PAST + MIN)),
        "stretch": ("due", format_instant(PAST + 5 * MIN)),
    }
    assert late["nextWake"] == format_instant(PAST + MIN)
    assert [r["overdueMs"] > 0 for r in late["active"]] == [True, True]


def test_inspect_why_says_the_state_every_view_shows(written: Written) -> None:
    """schedule-1 of beta: dispatched, its hand-over failed (failing); of
    alpha: an after still ahead (scheduled); of gamma: deleted (ended)."""
    base = ("inspect", written.source, "--schema", written.schema, "--json")
    done = tickler(*base, "--why", "schedule-1")
    assert (done.returncode, done.stderr) == (0, "")
    stories = {s["session"]: s for s in json.loads(done.stdout)["stories"]}
    assert {sid: s["state"] for sid, s in stories.items()} == {
        "alpha": "scheduled",
        "beta": "failing",
        "gamma": "ended",
    }
    assert stories["beta"]["status"].startswith(f"failing: {format_instant(T0 + MIN)} not taken (")
    assert stories["gamma"]["status"].startswith("ended: deleted at ")
    assert stories["alpha"]["nextDue"] == format_instant(T0 + 3_600_000)
    reminders = tickler("reminders", written.source, "--schema", written.schema, "--json")
    listed = {
        (r["sessionId"], r["id"]): r["state"] for r in json.loads(reminders.stdout)["reminders"]
    }
    assert listed[("alpha", "schedule-1")] == "scheduled"
    assert listed[("beta", "schedule-1")] == "failing"
    assert ("gamma", "schedule-1") not in listed  # ended: not listed
