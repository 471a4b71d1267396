"""``tickler check`` on a tickler JSONL store directory: a torn tail a
journal covers is a crash's (a note, exit 0); one no journal covers is
damage (exit 1, file:line); the store's other files are verified too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

TICKLER = [sys.executable, "-m", "tickler.adapters.cli"]
WRITER = """
import asyncio, os, sys
from tickler.adapters.stores._jsonl import JsonlStore
from tickler.shell._ports import NewEvent, Snapshot

async def main(directory, ending):
    store = JsonlStore(directory)
    log = await store.open("s1", created_at=1785931200000)
    for n in range(1, 4):
        schedule = {"id": f"schedule-{n}", "kind": "after", "prompt": "p", "afterSeconds": 30,
                    "scheduledAt": "2099-08-05T12:00:30.000Z"}
        data = {"version": 1, "operation": "create", "schedule": schedule}
        log.append([NewEvent("schedule/change", json.dumps(data).encode(), 1785931200000)])
        await log.flush()
    if ending == "snapshot":
        await log.save_snapshot(Snapshot(3, b"three"))
    if ending == "kill":
        os.kill(os.getpid(), 9)
    await store.close()

import json
asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def tickler(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TICKLER, *args], capture_output=True, text=True, timeout=120, check=False
    )


def store_with_one_session(directory: Path, ending: str) -> Path:
    """A store written by a child process that closes it, or is killed
    (kill -9) after its third flushed append."""
    done = subprocess.run(
        [sys.executable, "-c", WRITER, str(directory), ending],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == (-9 if ending == "kill" else 0), done.stderr
    return directory / "s1.jsonl"


def cut(path: Path, count: int) -> None:
    path.write_bytes(path.read_bytes()[:-count])


def test_a_crash_tail_the_journal_covers_is_a_note(tmp_path: Path) -> None:
    path = store_with_one_session(tmp_path / "store", "kill")
    cut(path, 9)
    for target in (tmp_path / "store", path):
        result = tickler("check", str(target))
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == (
            f"{path}: valid (2 events, 2 active); a torn final line (crash mid-write) was "
            "ignored; the store trims it when it opens"
        )
    verdict = json.loads(tickler("check", "--json", str(path)).stdout)["files"][0]
    assert verdict["tornTail"] is True


def test_a_cut_tail_of_a_closed_store_file_is_reported_once(tmp_path: Path) -> None:
    path = store_with_one_session(tmp_path / "store", "close")
    cut(path, 9)
    result = tickler("check", str(tmp_path / "store"))
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"tickler: {path}:4: torn final line")
    single = tickler("check", str(path))
    assert single.returncode == 1
    assert single.stderr.splitlines() == [line]


def test_store_wide_problems_are_reported(tmp_path: Path) -> None:
    path = store_with_one_session(tmp_path / "store", "snapshot")
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:3]))
    result = tickler("check", str(tmp_path / "store"))
    assert result.returncode == 1
    assert f"{path}: valid (2 events, 2 active)" in result.stdout
    snapshot = tmp_path / "store" / "s1.snapshot"
    assert f"tickler: {snapshot}: the snapshot covers 3 events" in result.stderr


def test_a_store_inside_a_walked_root_is_checked_as_a_store(tmp_path: Path) -> None:
    path = store_with_one_session(tmp_path / "root" / "nested" / "store", "kill")
    cut(path, 9)
    result = tickler("check", str(tmp_path / "root"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{path}: valid (2 events, 2 active); a torn final line")
