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

from tickler.shell._ports import NewEvent

from .conftest import store_path
from .pgsupport import PgSchema, pg_schema
from .read_support import T0, Written, open_store, write_sessions
from .test_cli_reminders import tickler, uri

__all__ = ["pg_schema"]  # the fixture, imported for pytest


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
