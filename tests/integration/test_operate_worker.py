"""An operator acts on a session a worker is serving (``tickler worker``
over a JSONL directory, an SQLite file or a PostgreSQL schema, each a real
process): a reminder paused and one cancelled from the CLI are not
delivered when they would be due, while another one still is."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tickler.core import SCHEDULE_CHANGE, SessionEvent, parse_instant
from tickler.shell._ports import SessionStore

from .embedded_support import delivered, followups, seed, store_at
from .pgsupport import PgSchema, pg_schema
from .worker_support import wait_until

__all__ = ["pg_schema"]  # the fixture, imported for pytest

TICKLER = [sys.executable, "-m", "tickler.adapters.cli"]
TARGET = textwrap.dedent(
    """
    import os
    from pathlib import Path

    def record(message, session):
        with Path(os.environ["OUT"]).open("a") as out:
            out.write(f"{session} {message.key}\\n")
            out.flush()
            os.fsync(out.fileno())
    """
)
HOUR_S = 3600


@dataclass
class Served:
    """A store, the operator's way to name it, the worker's arguments."""

    kind: str
    source: list[str]  # STORE and, for PostgreSQL, --schema
    worker: list[str]
    root: Path
    pg: PgSchema | None = None

    def store(self) -> SessionStore:
        if self.pg is not None:
            return self.pg.store()
        return store_at(self.kind, self.root)  # type: ignore[arg-type]


@pytest.fixture(params=["jsonl", "sqlite", "postgres"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Served:
    kind = str(request.param)
    if kind == "postgres":
        pg: PgSchema = request.getfixturevalue("pg_schema")
        schema = ["--schema", pg.schema]
        return Served(kind, [pg.dsn, *schema], ["--dsn", pg.dsn, *schema], tmp_path, pg)
    path = str(tmp_path / ("sessions" if kind == "jsonl" else "store.db"))
    return Served(kind, [path], ["--store", path], tmp_path)


def operator(action: str, served: Served, *args: str) -> dict[str, object]:
    store, *schema = served.source
    done = subprocess.run(
        [*TICKLER, action, store, "s1", *args, "--by", "ana", "--json", "--wait", "30", *schema],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, ""), action
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


@pytest.fixture
def worker(served: Served, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    app = tmp_path / "app"
    app.mkdir()
    (app / "app_target.py").write_text(TARGET)
    out = tmp_path / "calls.txt"
    env = {k: v for k, v in os.environ.items() if k not in ("TICKLER_DSN", "PYTHONPATH")}
    process = subprocess.Popen(
        [*TICKLER, "worker", *served.worker, "--deliver", "app_target:record", "--poll", "0.2"],
        cwd=app,
        env={**env, "OUT": str(out)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        yield process, out
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


def calls(out: Path) -> list[str]:
    return out.read_text().splitlines() if out.exists() else []


async def _events(served: Served) -> list[SessionEvent]:
    store = served.store()
    try:
        log = await store.open("s1", created_at=0)
        try:
            return list(log.events(0))
        finally:
            await log.close()
    finally:
        await store.close()


async def test_a_paused_and_a_cancelled_reminder_are_not_delivered_by_the_worker(
    served: Served, worker: tuple[subprocess.Popen[bytes], Path]
) -> None:
    process, out = worker
    seeder = served.store()
    await seed(seeder, {"s1": [{"prompt": f"p{n}", "after_seconds": HOUR_S} for n in (1, 2, 3)]})  # type: ignore[arg-type]
    await seeder.close()
    # While the worker serves the store: schedule-1 paused, then (still
    # paused) made due in a second; schedule-2 cancelled.
    assert operator("pause", served, "schedule-1")["state"] == "paused"
    snoozed = operator("snooze", served, "schedule-1", "1s")
    assert snoozed["state"] == "paused"
    assert isinstance(snoozed["nextDue"], str)
    assert operator("cancel", served, "schedule-2")["changed"] is True
    # Once schedule-1 has fallen due (paused), schedule-3 is made due now.
    due = parse_instant(snoozed["nextDue"])
    await wait_until(lambda: time.time_ns() // 1_000_000 > due, 30, "schedule-1 to fall due")
    operator("deliver-now", served, "schedule-3")
    await wait_until(lambda: len(calls(out)) >= 1, 60, "the worker's delivery")
    (call,) = calls(out)
    assert call.startswith("s1 schedule-3@")
    assert process.poll() is None  # the worker goes on serving
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert b"Traceback" not in stderr
    assert calls(out) == [call]
    # The log: the operator's changes naming them, and one follow-up only,
    # schedule-3's, marked delivered.
    events = await _events(served)
    keys = followups(events)
    assert [k.split("@")[0] for k in keys] == ["schedule-3"]
    assert delivered(events) == keys
    by = [json.loads(bytes(e.data)).get("by") for e in events if e.type == SCHEDULE_CHANGE]
    assert by.count("ana") == 4  # pause, snooze, cancel, deliver now
