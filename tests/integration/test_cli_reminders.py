"""``tickler reminders SOURCE`` over a JSONL directory, an SQLite file and a
PostgreSQL URI, as a user runs it (a child process): the table, JSON,
filters; errors one line (exit 2 for usage, 1 for a database that cannot be
reached or a session that cannot be read)."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from psycopg.conninfo import conninfo_to_dict

from tickler.core import format_instant, parse_instant

from .conftest import store_path
from .pgsupport import PgSchema, pg_schema
from .read_support import (
    LATE_PROMPT,
    MIN,
    PAST,
    PAUSED_PROMPT,
    T0,
    Written,
    write_paused_and_overdue,
    write_sessions,
)

__all__ = ["pg_schema"]  # the fixture, imported for pytest

TICKLER = [sys.executable, "-m", "tickler.adapters.cli"]


def tickler(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TICKLER, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"TZ": "Europe/Berlin", "PATH": "/usr/bin:/bin", "PYTHONTZPATH": ""},
    )


def uri(pg: PgSchema) -> str:
    """The test DSN as a postgresql:// URI, as a user would type it."""
    params = conninfo_to_dict(pg.dsn)
    return (
        f"postgresql://{params.get('user', 'postgres')}@{params.get('host', '127.0.0.1')}:"
        f"{params.get('port', 5432)}/{params.get('dbname', 'test')}"
    )


@pytest.fixture(params=["jsonl", "sqlite", "postgres"])
def written(request: pytest.FixtureRequest, tmp_path: Path) -> Written:
    kind = str(request.param)
    if kind == "postgres":
        pg: PgSchema = request.getfixturevalue("pg_schema")
        found = asyncio.run(write_sessions(kind, pg.dsn, pg.schema))
        found.source = uri(pg)
        return found
    return asyncio.run(write_sessions(kind, str(store_path(kind, tmp_path)), "tickler"))


@pytest.fixture(params=["jsonl", "sqlite", "postgres"])
def paused_and_overdue(request: pytest.FixtureRequest, tmp_path: Path) -> Written:
    kind = str(request.param)
    if kind == "postgres":
        pg: PgSchema = request.getfixturevalue("pg_schema")
        found = asyncio.run(write_paused_and_overdue(kind, pg.dsn, pg.schema))
        found.source = uri(pg)
        return found
    source = str(store_path(kind, tmp_path))
    return asyncio.run(write_paused_and_overdue(kind, source, "tickler"))


def test_json_lists_every_sessions_reminders(written: Written) -> None:
    done = tickler("reminders", written.source, "--schema", written.schema, "--json")
    assert (done.returncode, done.stderr) == (0, "")
    rows = json.loads(done.stdout)["reminders"]
    assert [(r["sessionId"], r["prompt"]) for r in rows] == [
        ("beta", "pay rent"),
        ("alpha", "stretch"),
        ("alpha", "call mum"),
    ]
    stretch = rows[1]
    assert stretch["lastDelivery"] == format_instant(T0 + 5 * MIN + 5000)
    assert stretch["lastLatenessMs"] == 5000
    assert stretch["zone"] == "Europe/Berlin"  # none of its own: the viewer's
    assert stretch["nextDueLocal"] == "2096-10-02 09:16:40 CEST"
    assert rows[0]["outbox"] == "failing"


def test_the_table_and_its_filters(written: Written) -> None:
    base = ("reminders", written.source, "--schema", written.schema)
    table = tickler(*base)
    failing = tickler(*base, "--failing", "--json")
    alpha = tickler(*base, "--session", "alpha", "--sort", "session", "--json")
    none_soon = tickler(*base, "--due-within", "1m", "--json")
    by_2100 = tickler(*base, "--due-within", "4000w", "--json")
    assert table.returncode == 0, table.stderr
    for column in (
        "session",
        "prompt",
        "next due (UTC)",
        "next due (Europe/Berlin)",
        "state",
        "late",
    ):
        assert column in table.stdout
    assert "2096-10-02 09:16:40 CEST" in table.stdout
    assert "5.0 s" in table.stdout
    assert [r["prompt"] for r in json.loads(failing.stdout)["reminders"]] == ["pay rent"]
    assert [r["prompt"] for r in json.loads(alpha.stdout)["reminders"]] == [
        "stretch",
        "call mum",
    ]
    # T0 lies in 2096: nothing is due within a minute, everything by 2100.
    assert json.loads(none_soon.stdout)["reminders"] == []
    assert len(json.loads(by_2100.stdout)["reminders"]) == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--due-within", "soon"], "invalid duration 'soon'"),
        (["--sort", "prompt"], "Invalid value for '--sort'"),
    ],
)
def test_usage_errors_are_one_line_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "store").mkdir()
    done = tickler("reminders", str(tmp_path / "store"), *args)
    assert done.returncode == 2
    assert message in done.stderr


def test_a_source_that_is_nothing_is_one_line_exit_2(tmp_path: Path) -> None:
    done = tickler("reminders", str(tmp_path / "missing"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1
    assert "no such file or directory" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_unreachable_database_is_one_line_exit_1() -> None:
    done = tickler("reminders", "postgresql://postgres@127.0.0.1:1/test")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.count("\n") == 1
    assert "cannot connect to PostgreSQL at 127.0.0.1:1" in done.stderr


def test_a_paused_reminder_is_listed_paused_and_overdue_ones_marked(
    paused_and_overdue: Written,
) -> None:
    """The session whose only reminder is paused is listed (it was "No
    reminders." on PostgreSQL): paused, no next due. The reminders due since
    2023 are due and overdue, by how much (in JSON, in milliseconds)."""
    found = paused_and_overdue
    done = tickler("reminders", found.source, "--schema", found.schema, "--json")
    assert (done.returncode, done.stderr) == (0, "")
    document = json.loads(done.stdout)
    now = document["now"]
    rows = {r["prompt"]: r for r in document["reminders"]}
    assert list(rows) == [LATE_PROMPT, "stretch", PAUSED_PROMPT]
    paused = rows[PAUSED_PROMPT]
    assert (paused["state"], paused["paused"], paused["nextDue"]) == ("paused", True, None)
    assert (paused["overdue"], paused["overdueMs"]) == (False, None)
    for prompt, due in ((LATE_PROMPT, PAST + MIN), ("stretch", PAST + 5 * MIN)):
        row = rows[prompt]
        assert (row["state"], row["overdue"], row["nextDueMs"]) == ("due", True, due)
        assert row["overdueMs"] >= 0
        assert row["overdueMs"] == parse_instant(now) - due
    only_paused = tickler("reminders", found.source, "--schema", found.schema, "--session", "paws")
    assert only_paused.returncode == 0, only_paused.stderr
    assert "No reminders." not in only_paused.stdout
    assert PAUSED_PROMPT in only_paused.stdout
    assert "paused" in only_paused.stdout


def test_the_table_shows_the_prompt_escaped_and_cut_and_marks_overdue_ones(
    paused_and_overdue: Written,
) -> None:
    found = paused_and_overdue
    done = tickler("reminders", found.source, "--schema", found.schema)
    assert (done.returncode, done.stderr) == (0, "")
    text = done.stdout
    assert "\x1b" in LATE_PROMPT
    assert "\x1b" not in text  # the escape is shown, never sent to the terminal
    assert "pay the\\x1b[2J rent\\nbefore" in text  # the newline shown as \n
    assert "show whole" not in text  # cut ...
    assert "…" in text  # ... and says so
    for column in ("prompt", "state", "overdue"):
        assert column in text
    cells = [[c.strip() for c in re.split("[│┃]", line)[1:-1]] for line in text.splitlines()]
    header = next(row for row in cells if row[:4] == ["session", "id", "kind", "prompt"])
    rows = {row[3]: dict(zip(header, row, strict=True)) for row in cells if len(row) == len(header)}
    paused = rows["water the ferns"]
    assert (paused["state"], paused["overdue"]) == ("paused", "-")
    assert paused["next due (UTC)"] == "-"
    late = next(row for prompt, row in rows.items() if prompt.startswith("pay the"))
    assert late["state"] == "due"
    assert late["overdue"].endswith(" d") or " d " in late["overdue"]  # since 2023: days
