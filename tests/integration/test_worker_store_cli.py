"""``tickler worker --store`` as a process, run from the folder that holds
the target's module: cold sessions of a JSONL directory or an SQLite file,
every agent process gone, are delivered, also when the worker is killed
with SIGKILL mid-run and started again; usage errors are one line, exit 2."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path

import pytest

from .embedded_support import (
    KINDS,
    Kind,
    delivered,
    events_of,
    followups,
    index_rows,
    seed,
    store_at,
)
from .worker_support import wait_until

TARGET = textwrap.dedent(
    """
    import os
    from pathlib import Path

    def record(message, session):
        # A real target would drop a key it saw before; this one notes each call.
        with Path(os.environ["OUT"]).open("a") as out:
            out.write(f"{session} {message.key}\\n")
            out.flush()
            os.fsync(out.fileno())
    """
)


def start_worker(store: Path, app: Path, out: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("TICKLER_DSN", "PYTHONPATH")}
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "tickler", "worker", "--store", str(store)),
            *("--deliver", "app_target:record", "--poll", "0.2", "--concurrency", "4"),
        ],
        cwd=app,
        env={**env, "OUT": str(out)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def calls(out: Path) -> list[tuple[str, str]]:
    if not out.exists():
        return []
    return [tuple(line.split(" ", 1)) for line in out.read_text().splitlines()]  # type: ignore[misc]


def all_done(kind: Kind, root: Path, sessions: Iterable[str]) -> bool:
    rows = index_rows(kind, root)
    return all(
        sid in rows and rows[sid].holder is None and rows[sid].next_due_at is None
        for sid in sessions
    )


@pytest.mark.parametrize("kind", KINDS)
async def test_cold_sessions_are_delivered_across_a_kill_of_the_worker(
    kind: Kind, tmp_path: Path
) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "app_target.py").write_text(TARGET)
    out = tmp_path / "calls.txt"
    seeder = store_at(kind, tmp_path)
    plan = {f"s{i:02}": [{"prompt": f"p{i}", "after_seconds": 1 + i % 3}] for i in range(24)}
    await seed(seeder, plan)
    await seeder.close()  # every agent process is gone
    store = tmp_path / ("sessions" if kind == "jsonl" else "store.db")
    first = start_worker(store, app, out)
    try:
        await wait_until(lambda: len(calls(out)) >= 4, 60, "the first deliveries")
        first.send_signal(signal.SIGKILL)  # mid-run: some sessions held, some not yet due
        first.wait(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
        first.communicate()
    second = start_worker(store, app, out)
    try:
        # Done when the index says so: nothing pending, nobody holding (a
        # session the killed worker held is found by the sweep).
        await wait_until(lambda: all_done(kind, tmp_path, plan), 120, "every delivery")
        second.send_signal(signal.SIGTERM)
        _, stderr = second.communicate(timeout=60)
    finally:
        if second.poll() is None:
            second.kill()
            second.communicate()
    assert second.returncode == 0, stderr
    assert b"Traceback" not in stderr
    seen = calls(out)
    for session_id in plan:
        events = await events_of(kind, tmp_path, session_id)
        (key,) = followups(events)  # one occurrence, one follow-up in the log
        assert delivered(events) == [key]  # marked delivered once
        mine = [k for s, k in seen if s == session_id]
        assert set(mine) == {key}  # a repeat (the kill cut it after the call) has the same key
    repeats = len(seen) - len(plan)
    assert repeats <= 4, seen  # at most the deliveries in flight at the kill


@pytest.mark.parametrize(
    ("make", "args", "says"),
    [
        ("none", [], "no such directory or SQLite file"),
        ("text", [], "not a JSONL store directory nor an SQLite store file"),
        ("dir", ["--lease", "90"], "--lease is for PostgreSQL"),
        ("dir", ["--dsn", "postgresql://nowhere/x"], "give exactly one of --store"),
    ],
)
def test_store_usage_errors_are_one_line_exit_2(
    make: str, args: list[str], says: str, tmp_path: Path
) -> None:
    path = tmp_path / "store"
    if make == "text":
        path.write_text("hello")
    elif make == "dir":
        path.mkdir()
    done = subprocess.run(
        [
            *(sys.executable, "-m", "tickler", "worker", "--store", str(path)),
            *("--deliver", "no_module:f", *args),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("tickler: error: ")
    assert says in lines[0]


def test_a_store_that_cannot_be_used_is_one_line_exit_1(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / ".journal").write_text("a file where the store keeps its journal folder")
    done = subprocess.run(
        [
            *(sys.executable, "-m", "tickler", "worker", "--store", str(store)),
            *("--deliver", "json:dumps"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("tickler: error: ")
    assert ".journal" in line
