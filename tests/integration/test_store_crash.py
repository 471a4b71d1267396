"""kill -9 at random moments never loses a flushed batch nor leaves a broken
log: a child appends and flushes in a loop, printing each flushed batch; the
parent kills it, reopens, and checks; also two such children on one JSONL
directory at once (each with its own sessions and journal), killed together.
``TICKLER_LONG_TESTS=1`` kills 200 times per store instead of 20 (and 100
pairs instead of 10).

The kill follows observed progress, never wall time: most children are
killed once they have reported a random number of flushed batches (so they
are mid-work, however busy the machine), the others at once (during start-up
and recovery). What is asserted is what the children reported."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tickler.core import parse_session_jsonl
from tickler.shell._ports import SessionLog

from .conftest import CHILD, DURABLE, make_store, store_path

LONG = os.environ.get("TICKLER_LONG_TESTS") == "1"
KILLS = 200 if LONG else 20
PAIRS = 100 if LONG else 10
SESSIONS = ("alpha", "beta", "gamma")
SHARDS = (("a1", "a2", "a3"), ("b1", "b2", "b3"))  # one process each, one directory


def progress_wanted(rng: random.Random, seed: int) -> int:
    """How many flushed batches the child reports before its kill: mostly
    some (it is then mid-work), sometimes none (killed as soon as it says it
    started: during start-up and recovery)."""
    return rng.randint(1, 30) if seed % 4 else 0


def run_and_kill(
    kind: str, path: Path, wanted: int, seed: int, sessions: tuple[str, ...] = SESSIONS
) -> list[str]:
    """Start the child, kill -9 it once it has started and reported
    ``wanted`` flushed batches, return the batches it reported."""
    child = subprocess.Popen(
        [sys.executable, str(CHILD), "crash", kind, str(path), str(seed), ",".join(sessions)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None
    head = b""
    # Raw reads: communicate() reads the raw pipe too, so nothing is left
    # behind in a buffer. EOF (the child died by itself) ends the wait.
    while head.count(b"\n") <= wanted and (chunk := os.read(child.stdout.fileno(), 4096)):
        head += chunk
    child.send_signal(signal.SIGKILL)
    out, err = child.communicate()
    assert child.returncode == -signal.SIGKILL, err.decode()
    lines = (head + out).splitlines(keepends=True)
    assert lines[:1] == [b"started\n"], err.decode()
    reported = [line.decode() for line in lines[1:] if line.endswith(b"\n")]
    assert len(reported) >= wanted, "the child was killed before it reported its work"
    return reported


def check_batches(log: SessionLog, durable: int) -> None:
    events = list(log.events())
    assert len(events) >= durable, f"{log.header.id}: flushed events lost"
    for seq, item in enumerate(events):
        data = json.loads(bytes(item.data))
        assert (item.seq, data["seq"]) == (seq, seq)
        # Every batch is whole: nothing half-appended survives a crash.
        assert data["batch"] <= seq < data["batch"] + data["of"] <= len(events)


def check_file(kind: str, path: Path, sessions: tuple[str, ...] = SESSIONS) -> None:
    if kind == "jsonl":
        for name in sessions:
            file = path / f"{name}.jsonl"
            if file.exists():
                assert parse_session_jsonl(file.read_bytes()).torn_tail is None
    else:
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        conn.close()


async def reopen_and_check(
    kind: str, root: Path, durable: dict[str, int], sessions: tuple[str, ...] = SESSIONS
) -> None:
    store = make_store(kind, root)
    for name in sessions:
        log = await store.open(name, created_at=1)
        check_batches(log, durable.get(name, 0))
    await store.close()
    check_file(kind, store_path(kind, root), sessions)


@pytest.mark.parametrize("kind", DURABLE)
async def test_kill_9_never_loses_a_flushed_batch(kind: str, tmp_path: Path) -> None:
    rng = random.Random(20_26)
    durable: dict[str, int] = {}
    path = store_path(kind, tmp_path)
    for seed in range(KILLS):
        lines = run_and_kill(kind, path, progress_wanted(rng, seed), seed)
        for line in lines:
            name, first, count = line.split()
            durable[name] = max(durable.get(name, 0), int(first) + int(count))
        await reopen_and_check(kind, tmp_path, durable)
    assert all(durable.get(name, 0) > 0 for name in SESSIONS)  # every session did work


async def test_two_processes_on_one_directory_never_lose_a_flushed_batch(
    tmp_path: Path,
) -> None:
    # The way to use more than one core: each process holds its own sessions
    # (and journal) in one shared directory. Both are killed at random
    # moments, concurrently; then every session holds what was flushed.
    rng = random.Random(20_27)
    durable: dict[str, int] = {}
    path = store_path("jsonl", tmp_path)
    with ThreadPoolExecutor(len(SHARDS)) as pool:
        for seed in range(PAIRS):
            runs = [
                pool.submit(run_and_kill, "jsonl", path, progress_wanted(rng, seed), seed, shard)
                for shard in SHARDS
            ]
            for run in runs:
                for line in run.result():
                    name, first, count = line.split()
                    durable[name] = max(durable.get(name, 0), int(first) + int(count))
            await reopen_and_check("jsonl", tmp_path, durable, SHARDS[0] + SHARDS[1])
    assert all(durable.get(name, 0) > 0 for shard in SHARDS for name in shard)
