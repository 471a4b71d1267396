# ruff: noqa: F811 - pytest fixtures imported by name are parameters too
"""``tickler worker --profile``: the profile reaches the tools of the turns
the worker resumes. In the reference profile a v1 reminder is delivered once
and the log keeps to v1 events, and a calendar create made in the delivered
turn is refused with ``invalid_selector`` and appends nothing. The extended
profile (the default) takes the same create as a version-2 event. A bogus
profile is one line on stderr, exit 2. A real worker process against the
real PostgreSQL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Literal

import msgspec
import pytest

from tickler.core import decode_change
from tickler.shell._records import DELIVERED, FOLLOWUP
from tickler.shell._runtime import ScheduleRuntime

from .pgsupport import DSN, PgSchema, pg_schema  # noqa: F401 - the fixture
from .worker_support import (
    NeverIdle,
    as_bytes,
    delivered_keys,
    followup_keys,
    now_ms,
    session_row,
    wait_until,
)

SESSION = "profiled"
REMINDER = {"prompt": "stretch", "after_seconds": 1}
CALENDAR = {"prompt": "x", "calendar": {"cron": "0 9 * * 1-5", "time_zone": "Europe/Berlin"}}

# The delivery target, imported by the worker from --app-dir: the resumed
# turn asks for a calendar reminder through the session's tools (the worker's
# tool surface) and notes the answer, one JSON line per turn.
APP = f"""
import json
import os
from pathlib import Path

CALENDAR = {CALENDAR!r}


async def deliver(message, session, tools):
    prompts = [o.prompt for o in message.occurrences]
    answer = None
    if prompts == ["stretch"]:
        answer = json.loads(await tools.call_tool("schedule_create", CALENDAR))
    line = json.dumps({{"session": session, "key": message.key, "answer": answer}})
    with Path(os.environ["PROFILE_TARGET_OUT"]).open("a", encoding="utf-8") as out:
        out.write(line + "\\n")
        out.flush()
        os.fsync(out.fileno())
"""


def worker_env(**extra: str) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if k != "TICKLER_DSN"}, **extra}


def turns(out: Path) -> list[dict[str, object]]:
    """The turns the target noted (only whole lines: it may be writing)."""
    if not out.exists():
        return []
    text = out.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n")[:-1]]


def log_events(pg: PgSchema, session_id: str) -> list[tuple[str, bytes]]:
    """(type, data) of every event in the session's log, in order."""
    rows = pg.query(
        "SELECT type, data FROM {s}.events WHERE session_id = %s ORDER BY seq", (session_id,)
    )
    return [(str(kind), as_bytes(data)) for kind, data in rows]


def schedule_changes(pg: PgSchema, session_id: str) -> list[dict[str, object]]:
    """Each ``schedule/change`` payload as stored, checked by the core's codec."""
    changes = []
    for kind, data in log_events(pg, session_id):
        if kind == "schedule/change":
            decode_change(data)  # a payload tickler itself can read back
            payload = msgspec.json.decode(data)
            assert isinstance(payload, dict), payload
            changes.append(payload)
    return changes


async def seed_v1_reminder(pg: PgSchema) -> None:
    """The v1 reminder, created through the reference profile's tools by a
    live runtime (which writes the wake index, as in production)."""
    store = pg.store()
    try:
        log = await store.open(SESSION, created_at=now_ms())
        runtime = ScheduleRuntime(log, NeverIdle(), profile="reference")
        try:
            await runtime.start()
            answer = json.loads(await runtime.call_tool("schedule_create", dict(REMINDER)))
        finally:
            await runtime.dispose()
            await log.close()
    finally:
        await store.close()
    assert answer["id"] == "schedule-1", answer
    assert answer["state"] == "scheduled", answer
    assert "nextOccurrences" not in answer  # the v1 view


async def run_worker_until_delivered(
    pg: PgSchema, tmp_path: Path, profile_args: list[str]
) -> tuple[list[dict[str, object]], int, str]:
    """Run ``tickler worker`` until the v1 reminder is delivered and marked,
    then SIGTERM it: the turns its target noted, its exit status, its stderr."""
    app = tmp_path / "app"
    app.mkdir()
    (app / "profile_app.py").write_text(APP, encoding="utf-8")
    out = tmp_path / "turns.jsonl"
    command = [
        *(sys.executable, "-m", "tickler.adapters.cli", "worker", "--dsn", pg.dsn),
        *("--schema", pg.schema, "--deliver", "profile_app:deliver", "--app-dir", str(app)),
        *("--poll", "0.1", *profile_args),
    ]
    proc = subprocess.Popen(  # noqa: ASYNC220 - polled without blocking below
        command,
        env=worker_env(PROFILE_TARGET_OUT=str(out)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:

        def delivered_or_exited() -> bool:
            return proc.poll() is not None or (
                len(delivered_keys(pg, SESSION)) >= 1 and session_row(pg, SESSION)[2] is None
            )

        # the delivered mark written and the lease let go: the session is settled
        await wait_until(delivered_or_exited, 90, "the reminder's delivery and release")
        assert proc.poll() is None, "the worker exited before delivering"
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return turns(out), proc.returncode, stderr.decode()


async def test_reference_worker_delivers_once_refuses_a_calendar_and_keeps_to_v1(
    pg_schema: PgSchema, tmp_path: Path
) -> None:
    pg = pg_schema
    await seed_v1_reminder(pg)
    noted, status, stderr = await run_worker_until_delivered(
        pg, tmp_path, ["--profile", "reference"]
    )
    assert status == 0, stderr
    assert "Traceback" not in stderr, stderr

    # Delivered exactly once: one turn, one follow-up, one delivered mark, same key.
    ((_, key),) = followup_keys(pg, SESSION)
    assert key.startswith("schedule-1@"), key
    assert delivered_keys(pg, SESSION) == [(SESSION, key)]
    assert len(noted) == 1, noted
    (turn,) = noted
    assert (turn["session"], turn["key"]) == (SESSION, key)

    # The calendar create in that turn met the v1 contract: refused by code.
    answer = turn["answer"]
    assert isinstance(answer, dict), answer
    assert answer.get("code") == "invalid_selector", answer
    assert sorted(answer) == ["code", "message"], answer  # an error, no reminder

    # Nothing was appended for it: the log is the create, the delivery's
    # outbox batch (dispatch + follow-up) and the delivered mark, no more.
    kinds = [kind for kind, _ in log_events(pg, SESSION)]
    assert kinds == ["schedule/change", "schedule/change", FOLLOWUP, DELIVERED], kinds
    changes = schedule_changes(pg, SESSION)
    assert [c["operation"] for c in changes] == ["create", "dispatch"], changes
    assert all(c["version"] == 1 for c in changes), changes
    assert all(b"calendar" not in data for _, data in log_events(pg, SESSION))
    assert session_row(pg, SESSION) == (None, 0, None)  # nothing pending


@pytest.mark.parametrize(
    "profile_args", [[], ["--profile", "extended"]], ids=["default", "extended"]
)
async def test_extended_worker_takes_the_same_calendar_create_as_a_v2_event(
    profile_args: list[str], pg_schema: PgSchema, tmp_path: Path
) -> None:
    pg = pg_schema
    await seed_v1_reminder(pg)
    noted, status, stderr = await run_worker_until_delivered(pg, tmp_path, profile_args)
    assert status == 0, stderr

    ((_, key),) = followup_keys(pg, SESSION)[:1]
    assert delivered_keys(pg, SESSION)[0] == (SESSION, key)
    # The turn of the v1 reminder asked for the calendar reminder: accepted.
    first = noted[0]
    assert first["key"] == key, noted
    answer = first["answer"]
    assert isinstance(answer, dict), answer
    assert answer.get("code") is None, answer
    assert answer["id"] == "schedule-2", answer
    assert answer["kind"] == "calendar", answer
    assert answer["state"] == "scheduled", answer
    assert answer["calendar"] == {
        "cron": "0 9 * * 1-5",
        "time_zone": "Europe/Berlin",
        "dst_gap": "shift",
        "dst_overlap": "first",
    }

    # ... and logged as a version-2 create (a later 09:00 may add its dispatch).
    changes = schedule_changes(pg, SESSION)
    create_v1, dispatch_v1, create_v2 = changes[:3]
    assert (create_v1["version"], create_v1["operation"]) == (1, "create")
    assert (dispatch_v1["version"], dispatch_v1["operation"]) == (1, "dispatch")
    assert (create_v2["version"], create_v2["operation"]) == (2, "create")
    schedule = create_v2["schedule"]
    assert isinstance(schedule, dict), create_v2
    assert (schedule["id"], schedule["kind"], schedule["prompt"]) == ("schedule-2", "calendar", "x")


@pytest.mark.parametrize("where", ["first", "last"])
def test_a_bogus_profile_is_one_line_exit_2(where: Literal["first", "last"]) -> None:
    rest = ["--dsn", DSN, "--schema", "nowhere", "--deliver", "true"]
    bogus = ["--profile", "bogus"]
    args = [*bogus, *rest] if where == "first" else [*rest, *bogus]
    done = subprocess.run(
        [sys.executable, "-m", "tickler.adapters.cli", "worker", *args],
        check=False,
        env=worker_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("tickler: error: "), lines
    assert "--profile" in lines[0], lines
    assert "'bogus'" in lines[0], lines
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
