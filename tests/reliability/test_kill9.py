"""kill -9 at random moments and at chosen steps of a delivery; after every
restart each reminder is still delivered exactly once and nothing is lost.

The default run makes at least 50 kills; TICKLER_LONG_TESTS=1 makes 300.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from returns.pipeline import is_successful

from tickler.core import check_log, parse_instant, parse_session_jsonl
from tickler.shell._records import FOLLOWUP
from tickler.shell._reference_host import TURN_INPUT

AGENT = Path(__file__).with_name("crash_agent.py")
ONE_SHOTS = 24
EVERIES = 3
POINTS = ("", "", "", "append", "flushing", "flushed", "handover")
HOUR_MS = 3_600_000


def _spawn(store: Path, point: str, offset_ms: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "TICKLER_CRASH_POINT": point,
        "TICKLER_CLOCK_OFFSET_MS": str(offset_ms),
        "PYTHONPATH": str(AGENT.parent),
    }
    args = [sys.executable, str(AGENT), str(store), str(ONE_SHOTS), str(EVERIES)]
    return subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _run_once(store: Path, point: str, offset_ms: int, rng: random.Random) -> bool:
    """One agent life; True when it ended by SIGKILL (ours or its own)."""
    child = _spawn(store, point, offset_ms)
    try:
        if point:
            child.wait(timeout=8)  # it kills itself at its crash point
        else:
            child.wait(timeout=rng.uniform(0.05, 2.0))
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert child.stderr is not None
    with child.stderr:
        stderr = child.stderr.read().decode()
    assert "Traceback" not in stderr, stderr
    return child.returncode == -signal.SIGKILL


def _taken(store: Path) -> tuple[Counter[str], Counter[str]]:
    """How often each follow-up key became a turn input, and how often each
    reminder id was delivered (a fixed-rate batch delivers several ids)."""
    parsed = parse_session_jsonl((store / "crash.jsonl").read_bytes())
    ids_of: dict[str, list[str]] = {}
    keys: Counter[str] = Counter()
    for e in parsed.events:
        record = json.loads(bytes(e.data))
        if e.type == FOLLOWUP:
            ids_of[record["key"]] = [o["id"] for o in record["occurrences"]]
        elif e.type == TURN_INPUT and "key" in record:
            keys[record["key"]] += 1
    delivered = Counter(i for key, n in keys.items() for i in ids_of[key] for _ in range(n))
    return keys, delivered


def test_kill_9_never_loses_or_repeats_a_reminder(
    tmp_path: Path, reliability_figures: dict[str, int]
) -> None:
    long_run = os.environ.get("TICKLER_LONG_TESTS") == "1"
    wanted_kills = 300 if long_run else 50
    rng = random.Random(20261202)
    store = tmp_path / "store"
    store.mkdir()
    kills, offset = 0, 0
    while kills < wanted_kills:
        if rng.random() < 0.15:  # the wall clock jumps between lives, both ways
            offset += rng.choice((HOUR_MS, 6 * HOUR_MS, -HOUR_MS // 2, -5 * 60_000))
        kills += _run_once(store, rng.choice(POINTS), offset, rng)
    # A last life with no crash point, far enough ahead that all are due.
    offset += 24 * HOUR_MS
    final = _spawn(store, "", offset)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        _, delivered = _taken(store)
        if len(delivered) >= ONE_SHOTS + EVERIES:
            break
        time.sleep(0.25)
    final.send_signal(signal.SIGKILL)
    final.wait()
    assert final.stderr is not None
    with final.stderr:
        assert "Traceback" not in final.stderr.read().decode()
    reliability_figures["kill -9 kills"] = kills

    data = (store / "crash.jsonl").read_bytes()
    parsed = parse_session_jsonl(data)
    assert is_successful(check_log(parsed.events, parsed.header.owned_from))
    keys, delivered_ids = _taken(store)
    repeated = {k: n for k, n in keys.items() if n > 1}
    assert not repeated, f"delivered more than once: {repeated}"
    created = {
        json.loads(bytes(e.data))["schedule"]["id"]: json.loads(bytes(e.data))["schedule"]["kind"]
        for e in parsed.events
        if e.type == "schedule/change" and b'"create"' in bytes(e.data)
    }
    assert len(created) == ONE_SHOTS + EVERIES
    for schedule_id, kind in created.items():
        if kind == "every":
            assert delivered_ids[schedule_id] >= 1, f"{schedule_id} never delivered"
        else:
            assert delivered_ids[schedule_id] == 1, f"{schedule_id}: {delivered_ids[schedule_id]}"
    # Never early: a reminder turn is taken at or after its occurrence.
    for e in parsed.events:
        if e.type == FOLLOWUP:
            for occurrence in json.loads(bytes(e.data))["occurrences"]:
                assert e.time >= parse_instant(occurrence["occurrenceAt"])
