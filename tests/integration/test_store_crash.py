"""kill -9 at random moments never loses a flushed batch nor leaves a broken
log: a child appends and flushes in a loop, printing each flushed batch; the
parent kills it, reopens, and checks. ``TICKLER_LONG_TESTS=1`` kills 200
times per store instead of 20."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tickler.core import parse_session_jsonl
from tickler.shell.ports import SessionLog

from .conftest import CHILD, DURABLE, make_store, store_path

KILLS = 200 if os.environ.get("TICKLER_LONG_TESTS") == "1" else 20
SESSIONS = ("alpha", "beta", "gamma")


def run_and_kill(kind: str, path: Path, rng: random.Random, seed: int) -> list[str]:
    """Start the child, kill -9 it at a random moment, return its complete
    stdout lines."""
    child = subprocess.Popen(
        [sys.executable, str(CHILD), "crash", kind, str(path), str(seed)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None
    head = b""
    if seed % 4:  # mostly kill while it appends; sometimes during start-up and recovery
        # Raw reads: communicate() reads the raw pipe too, so nothing is
        # left behind in a buffer.
        while b"\n" not in head and (chunk := os.read(child.stdout.fileno(), 4096)):
            head += chunk
    time.sleep(rng.uniform(0, 0.25))
    child.send_signal(signal.SIGKILL)
    out, err = child.communicate()
    assert child.returncode == -signal.SIGKILL, err.decode()
    lines = (head + out).splitlines(keepends=True)
    return [line.decode() for line in lines if line.endswith(b"\n")]


def check_batches(log: SessionLog, durable: int) -> None:
    events = list(log.events())
    assert len(events) >= durable, f"{log.header.id}: flushed events lost"
    for seq, item in enumerate(events):
        data = json.loads(bytes(item.data))
        assert (item.seq, data["seq"]) == (seq, seq)
        # Every batch is whole: nothing half-appended survives a crash.
        assert data["batch"] <= seq < data["batch"] + data["of"] <= len(events)


def check_file(kind: str, path: Path) -> None:
    if kind == "jsonl":
        for name in SESSIONS:
            file = path / f"{name}.jsonl"
            if file.exists():
                assert parse_session_jsonl(file.read_bytes()).torn_tail is None
    else:
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        conn.close()


async def reopen_and_check(kind: str, root: Path, durable: dict[str, int]) -> None:
    store = make_store(kind, root)
    for name in SESSIONS:
        log = await store.open(name, created_at=1)
        check_batches(log, durable.get(name, 0))
    await store.close()
    check_file(kind, store_path(kind, root))


@pytest.mark.parametrize("kind", DURABLE)
async def test_kill_9_never_loses_a_flushed_batch(kind: str, tmp_path: Path) -> None:
    rng = random.Random(20_26)
    durable: dict[str, int] = {}
    path = store_path(kind, tmp_path)
    productive = 0
    for seed in range(KILLS):
        lines = run_and_kill(kind, path, rng, seed)
        for line in lines:
            name, first, count = line.split()
            durable[name] = max(durable.get(name, 0), int(first) + int(count))
        productive += bool(lines)
        await reopen_and_check(kind, tmp_path, durable)
    assert productive >= KILLS * 3 // 4  # most children were killed mid-work
