"""``tickler pause|resume|snooze|cancel|deliver-now STORE SESSION ID`` over
a JSONL directory, an SQLite file and a PostgreSQL URI, as an operator
runs them (a child process): each logs the change ``decide`` makes, naming
the operator, through the session's lock or lease; errors are one line,
exit 2."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tickler.core import SCHEDULE_CHANGE, ScheduleChange, decode_change, encode_change
from tickler.core._model import DeleteChange, DeleteChangeV2, UpdateChange
from tickler.shell._ports import SessionStore

from .conftest import make_store, store_path
from .pgsupport import PgSchema, pg_schema
from .read_support import T0, Scribe
from .test_cli_reminders import uri

__all__ = ["pg_schema"]  # the fixture, imported for pytest

TICKLER = [sys.executable, "-m", "tickler.adapters.cli"]
HOLDER = Path(__file__).with_name("operate_holder.py")
HOUR = 3_600_000


def tickler(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TICKLER, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PATH": "/usr/bin:/bin", "USER": "opsuser", "LOGNAME": "opsuser"},
    )


@dataclass
class Source:
    kind: str
    source: str  # what the operator types
    location: str  # what the holder child and the test's own store take
    pg: PgSchema | None = None

    def store(self) -> SessionStore:
        if self.pg is not None:
            return self.pg.store()
        return make_store(self.kind, Path(self.location).parent)


async def _write(store: SessionStore) -> None:
    """Session s1: three one-shots an hour and more ahead."""
    log = await store.open("s1", created_at=T0)
    scribe = Scribe(log)
    for n in range(3):
        await scribe.tool(
            "schedule_create", {"prompt": f"p{n}", "after_seconds": 3600 * (n + 1)}, T0
        )
    await log.close()
    await store.close()


async def _changes(store: SessionStore) -> list[ScheduleChange]:
    log = await store.open("s1", created_at=T0)
    try:
        return [decode_change(e.data) for e in log.events() if e.type == SCHEDULE_CHANGE]
    finally:
        await log.close()
        await store.close()


@pytest.fixture(params=["jsonl", "sqlite", "postgres"])
def source(request: pytest.FixtureRequest, tmp_path: Path) -> Source:
    kind = str(request.param)
    if kind == "postgres":
        pg: PgSchema = request.getfixturevalue("pg_schema")
        found = Source(kind, uri(pg), f"{pg.schema}:{pg.dsn}", pg)
        asyncio.run(_write(pg.store()))
        return found
    path = store_path(kind, tmp_path)
    asyncio.run(_write(make_store(kind, tmp_path)))
    return Source(kind, str(path), str(path))


def _schema(source: Source) -> list[str]:
    return [] if source.pg is None else ["--schema", source.pg.schema]


def test_each_action_is_logged_naming_the_operator(source: Source) -> None:
    extra = _schema(source)
    runs = [
        tickler("pause", source.source, "s1", "schedule-1", "--by", "ana", "--json", *extra),
        tickler("resume", source.source, "s1", "schedule-1", "--by", "ana", "--json", *extra),
        tickler("snooze", source.source, "s1", "schedule-2", "2h", "--json", *extra),
        tickler("deliver-now", source.source, "s1", "schedule-3", "--json", *extra),
        tickler("cancel", source.source, "s1", "schedule-1", "--by", "bo", "--json", *extra),
    ]
    for run in runs:
        assert (run.returncode, run.stderr) == (0, "")
    answers = [json.loads(run.stdout) for run in runs]
    assert [a["action"] for a in answers] == ["pause", "resume", "snooze", "deliver-now", "cancel"]
    assert [a["by"] for a in answers] == ["ana", "ana", "opsuser", "opsuser", "bo"]
    assert all(a["changed"] and a["recordedBy"] for a in answers)
    assert answers[0]["state"] == "paused"
    assert answers[4]["state"] is None
    changes = asyncio.run(_changes(source.store()))[3:]
    assert [type(c) for c in changes] == [UpdateChange] * 4 + [DeleteChangeV2]
    assert [getattr(c, "by", None) for c in changes] == ["ana", "ana", "opsuser", "opsuser", "bo"]
    assert [encode_change(c).decode() for c in changes] == [e for a in answers for e in a["events"]]
    paused = changes[0]
    assert isinstance(paused, UpdateChange)
    assert paused.paused is True


def test_an_action_that_changes_nothing_logs_nothing(source: Source) -> None:
    extra = _schema(source)
    assert tickler("pause", source.source, "s1", "schedule-1", *extra).returncode == 0
    again = tickler("pause", source.source, "s1", "schedule-1", *extra)
    assert (again.returncode, again.stderr) == (0, "")
    assert "nothing to change" in again.stdout
    assert len(asyncio.run(_changes(source.store()))) == 4


def test_errors_are_one_line_exit_2(source: Source) -> None:
    extra = _schema(source)
    assert tickler("cancel", source.source, "s1", "schedule-2", *extra).returncode == 0
    for args, said in [
        (("pause", source.source, "nope", "schedule-1"), "no session 'nope'"),
        (("pause", source.source, "s1", "schedule-9"), "has no reminder 'schedule-9'"),
        (("resume", source.source, "s1", "schedule-2"), "is done"),
        (("snooze", source.source, "s1", "schedule-1", "soon"), "invalid duration"),
        (("pause", source.source, "../x", "schedule-1"), "invalid session id"),
        (("pause", source.source, "s1", "schedule-1", "--by", " "), "by must name the operator"),
    ]:
        run = tickler(*args, *extra)
        assert run.returncode == 2, (args, run.stderr)
        assert run.stdout == ""
        assert said in run.stderr
        assert run.stderr.startswith("tickler: error: ")
        assert run.stderr.count("\n") == 1
    deliver_paused = tickler("pause", source.source, "s1", "schedule-1", *extra)
    assert deliver_paused.returncode == 0
    run = tickler("deliver-now", source.source, "s1", "schedule-1", *extra)
    assert (run.returncode, "resume it first" in run.stderr) == (2, True)


def test_the_reference_profile_refuses_what_v1_cannot_say(source: Source) -> None:
    extra = [*_schema(source), "--profile", "reference"]
    run = tickler("pause", source.source, "s1", "schedule-1", *extra)
    assert run.returncode == 2
    assert "needs the extended profile" in run.stderr
    cancelled = tickler("cancel", source.source, "s1", "schedule-1", "--json", *extra)
    assert cancelled.returncode == 0
    answer = json.loads(cancelled.stdout)
    assert (answer["changed"], answer["recordedBy"]) == (True, False)
    text = tickler("cancel", source.source, "s1", "schedule-2", *extra)
    assert "cannot name the operator: not recorded" in text.stdout
    assert asyncio.run(_changes(source.store()))[3:] == [
        DeleteChange(version=1, id="schedule-1"),
        DeleteChange(version=1, id="schedule-2"),
    ]


def test_a_bad_store_or_dsn_is_one_line_exit_2_without_a_password(tmp_path: Path) -> None:
    for source, said in [
        (str(tmp_path / "missing"), "no such directory or SQLite file"),
        ("postgresql://ops:hunter2@127.0.0.1:1/x?connect_timeout=2", "tickler: error:"),
        ("postgresql://ops:hunter2@127.0.0.1:notaport/x", "tickler: error:"),
    ]:
        run = tickler("pause", source, "s1", "schedule-1")
        assert run.returncode == 2, run.stderr
        assert said in run.stderr
        assert "hunter2" not in run.stderr
        assert run.stderr.count("\n") == 1


Holding = tuple[Source, Callable[[str], subprocess.Popen[str]]]


@pytest.fixture
def holder(source: Source) -> Iterator[tuple[Source, Callable[[str], subprocess.Popen[str]]]]:
    started: list[subprocess.Popen[str]] = []

    def start(role: str) -> subprocess.Popen[str]:
        child = subprocess.Popen(
            [sys.executable, str(HOLDER), source.kind, source.location, "s1", role],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        started.append(child)
        assert child.stdout is not None
        assert child.stdout.readline() == "held\n"
        return child

    yield source, start
    for child in started:
        if child.poll() is None:
            child.kill()
        child.wait(30)
        for pipe in (child.stdin, child.stdout):
            if pipe is not None:
                pipe.close()


def _release(child: subprocess.Popen[str]) -> None:
    assert child.stdin is not None
    assert child.stdout is not None
    child.stdin.write("\n")
    child.stdin.flush()
    assert child.stdout.readline() == "released\n"


def test_a_session_held_too_long_is_reported_with_its_holder(holder: Holding) -> None:
    source, start = holder
    role = "live" if source.kind != "postgres" else "lease"
    child = start(role)
    run = tickler("pause", source.source, "s1", "schedule-1", "--wait", "0.5", *_schema(source))
    assert run.returncode == 2
    assert "held by" in run.stderr
    assert ("a live process" in run.stderr) == (source.kind != "postgres")
    _release(child)
    assert tickler("pause", source.source, "s1", "schedule-1", *_schema(source)).returncode == 0


def test_a_session_a_worker_holds_is_waited_for(holder: Holding) -> None:
    source, start = holder
    child = start("worker")
    waiting = subprocess.Popen(
        [*TICKLER, "pause", source.source, "s1", "schedule-1", "--wait", "60", *_schema(source)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PATH": "/usr/bin:/bin", "USER": "opsuser"},
    )
    _release(child)  # whether the action is waiting already or not yet: it gets its turn
    out, err = waiting.communicate(timeout=90)
    assert (waiting.returncode, err) == (0, "")
    assert "paused schedule-1 of session s1 by opsuser" in out


def test_inspect_why_names_the_operator(source: Source) -> None:
    extra = _schema(source)
    assert (
        tickler("pause", source.source, "s1", "schedule-1", "--by", "ana", *extra).returncode == 0
    )
    assert tickler("deliver-now", source.source, "s1", "schedule-2", *extra).returncode == 0
    assert (
        tickler("cancel", source.source, "s1", "schedule-3", "--by", "bo", *extra).returncode == 0
    )
    where = [f"{source.source}/s1.jsonl"] if source.kind == "jsonl" else [source.source]
    where += [] if source.kind == "jsonl" else ["--session", "s1", *extra]
    steps = {}
    for reminder_id in ("schedule-1", "schedule-2", "schedule-3"):
        run = tickler("inspect", *where, "--why", reminder_id, "--json")
        assert run.returncode == 0, run.stderr
        (story,) = json.loads(run.stdout)["stories"]
        steps[reminder_id] = story["steps"][-1]
    assert (steps["schedule-1"]["event"], steps["schedule-1"]["by"]) == ("paused", "ana")
    assert (steps["schedule-2"]["event"], steps["schedule-2"]["by"]) == ("due_now", "opsuser")
    assert (steps["schedule-3"]["event"], steps["schedule-3"]["by"]) == ("deleted", "bo")
    assert "cancelled by operator bo" in steps["schedule-3"]["text"]
