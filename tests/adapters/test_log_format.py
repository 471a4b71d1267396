"""``tickler mcp --log-format json``: every line on stderr is one JSON
object with ``time``, ``level``, ``logger`` and ``message``; a line written
while a delivery runs also names the session and the occurrence
(``tickler.session.id``, ``tickler.occurrence.key``, as the spans do).

The server starts on a session whose reminder is overdue and a delivery
command that fails (``false``), so the hand-over fails at once and the
runtime says so; then the client closes stdin.
"""

from __future__ import annotations

import asyncio
import json
import queue
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tickler.adapters.stores._jsonl import JsonlStore
from tickler.core import EMPTY_STATE, SCHEDULE_CHANGE, encode_change, handle
from tickler.shell._ports import NewEvent

BOUND_S = 120  # a hung server fails the test instead of blocking it
KEYS = {"time", "level", "logger", "message"}


async def overdue_session(store_dir: Path, session_id: str) -> str:
    """A session whose one reminder fell due a minute ago; its key."""
    created = time.time_ns() // 1_000_000 - 120_000
    store = JsonlStore(store_dir)
    log = await store.open(session_id, created_at=created)
    changes, _ = handle(
        EMPTY_STATE, "schedule_create", {"prompt": "p", "after_seconds": 60}, created
    )
    log.append([NewEvent(SCHEDULE_CHANGE, encode_change(c), created) for c in changes])
    await log.flush()
    await store.close()
    due = datetime.fromtimestamp((created + 60_000) / 1000, UTC)
    return f"schedule-1@{due.isoformat(timespec='milliseconds').replace('+00:00', 'Z')}"


def read_lines(stream: Any, into: queue.Queue[str | None]) -> None:
    for line in stream:
        into.put(line)
    into.put(None)


def test_mcp_log_format_json_is_one_object_per_line(tmp_path: Path) -> None:
    store = tmp_path / "store"
    key = asyncio.run(overdue_session(store, "desk"))
    serve = ("mcp", "--store", str(store), "--session", "desk", "--deliver-cmd", "false")
    seen: list[str] = []
    with subprocess.Popen(
        [sys.executable, "-m", "tickler", *serve, "--log-format", "json"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        lines: queue.Queue[str | None] = queue.Queue()
        reader = threading.Thread(target=read_lines, args=(proc.stderr, lines), daemon=True)
        reader.start()
        try:
            deadline = time.monotonic() + BOUND_S
            while not any("not taken" in line for line in seen):  # the failed hand-over
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
                assert line is not None, "".join(seen)
                seen.append(line)
            assert proc.stdin is not None
            proc.stdin.close()  # the client leaves
            assert proc.wait(timeout=BOUND_S) == 0, "".join(seen)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        reader.join(timeout=BOUND_S)
    while (line := lines.get_nowait()) is not None:
        seen.append(line)

    records = [json.loads(line) for line in seen]  # each line is one JSON object
    assert all(isinstance(r, dict) and r.keys() >= KEYS for r in records), seen
    assert all(r["time"].endswith("Z") for r in records)
    serving = next(r for r in records if r["message"] == "serving session desk")
    assert (serving["level"], serving["logger"]) == ("INFO", "tickler.mcp")
    (failed,) = [r for r in records if "not taken" in r["message"]]
    assert failed["level"] == "WARNING"
    assert failed["logger"] == "tickler.runtime"
    assert failed["tickler.session.id"] == "desk"
    assert failed["tickler.occurrence.key"] == key
    assert "session desk closed" in [r["message"] for r in records]


def test_text_stays_the_default(tmp_path: Path) -> None:
    serve = ("mcp", "--store", str(tmp_path / "store"), "--session", "s", "--deliver-cmd", "true")
    done = subprocess.run(
        [sys.executable, "-m", "tickler", *serve],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=BOUND_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (first, *_) = done.stderr.splitlines()
    assert first.split(" ", 3)[2:] == ["INFO", "tickler.mcp: serving session s"]
