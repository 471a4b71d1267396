"""``tickler check`` verifies an embedded store's wake index against the
logs: earlier than a log says is fine (safe), later is reported with the
session, both instants and the remedy; a held row is a hint and skipped; a
damaged index is named."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from tickler.shell._clock import VirtualClock

from .embedded_support import KINDS, Kind, index_db, seed, store_at, store_path

T0 = 1_785_931_200_000
STRETCH = {"prompt": "stretch", "after_seconds": 10}
FAR = {"prompt": "far", "after_seconds": 86_400}


def check(path: Path) -> tuple[int, list[dict[str, object]]]:
    done = subprocess.run(
        [sys.executable, "-m", "tickler", "check", "--json", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode, json.loads(done.stdout)["files"]


def index_problems(files: list[dict[str, object]]) -> list[dict[str, object]]:
    """The verdicts on the index (for SQLite, the store file names them all)."""
    return [
        f
        for f in files
        if f["status"] != "valid" and str(f["path"]).endswith((".wake.db", "store.db"))
    ]


async def a_store(kind: Kind, root: Path) -> None:
    store = store_at(kind, root)
    await seed(store, {"due": [STRETCH], "far": [FAR], "none": []}, clock=VirtualClock(T0))
    await store.close()


def execute(kind: Kind, root: Path, sql: str) -> None:
    with closing(sqlite3.connect(index_db(kind, root))) as conn:
        conn.execute(sql)
        conn.commit()


@pytest.mark.parametrize("kind", KINDS)
async def test_an_index_equal_to_the_logs_is_valid(kind: Kind, tmp_path: Path) -> None:
    await a_store(kind, tmp_path)
    code, files = check(store_path(kind, tmp_path))
    assert code == 0, files
    assert all(f["status"] == "valid" for f in files)


@pytest.mark.parametrize("kind", KINDS)
async def test_an_index_later_than_a_log_is_reported(kind: Kind, tmp_path: Path) -> None:
    await a_store(kind, tmp_path)
    execute(
        kind, tmp_path, f"UPDATE wakes SET next_due_at = {T0 + 99_000} WHERE session_id = 'due'"
    )
    execute(kind, tmp_path, "DELETE FROM wakes WHERE session_id = 'far'")
    code, files = check(store_path(kind, tmp_path))
    assert code == 1
    found = {str(f["session"]): str(f["reason"]) for f in index_problems(files)}
    assert found == {
        "due": "the wake index says 2026-08-05T12:01:39.000Z, but its log is due at "
        "2026-08-05T12:00:10.000Z: a worker that starts looks at it again "
        "(tickler worker --store)",
        "far": "the wake index has no row for it, but its log is due at "
        "2026-08-06T12:00:00.000Z: a worker that starts looks at it again "
        "(tickler worker --store)",
    }


@pytest.mark.parametrize("kind", KINDS)
async def test_earlier_or_held_rows_are_not_problems(kind: Kind, tmp_path: Path) -> None:
    await a_store(kind, tmp_path)
    execute(kind, tmp_path, "UPDATE wakes SET next_due_at = 0 WHERE session_id = 'far'")
    execute(
        kind,
        tmp_path,
        "UPDATE wakes SET next_due_at = NULL, holder = 'live:x:1:a' WHERE session_id = 'due'",
    )
    code, files = check(store_path(kind, tmp_path))
    assert code == 0, files
    assert all(f["status"] == "valid" for f in files)


async def test_a_damaged_index_is_named(tmp_path: Path) -> None:
    await a_store("jsonl", tmp_path)
    db = index_db("jsonl", tmp_path)
    for companion in db.parent.glob(".wake.db-*"):
        companion.unlink()
    db.write_bytes(b"not a database at all" * 50)
    code, files = check(store_path("jsonl", tmp_path))
    assert code == 1
    (problem,) = index_problems(files)
    assert str(problem["reason"]).startswith("the wake index cannot be read (")
    assert str(problem["reason"]).endswith("): a worker that starts makes it anew")
