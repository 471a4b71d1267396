"""Retries across kill -9: a process is SIGKILLed after its change is
durable and before the call is answered (a framework would time out and
retry). A restarted session given the same ``request_id`` and arguments
answers exactly what the first call would have, byte for byte, and creates
nothing; a pause or a snooze made durable before the kill survives and
replays exactly."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path

from tickler.adapters.stores._jsonl import JsonlStore
from tickler.core import (
    EMPTY_STATE,
    SCHEDULE_CHANGE,
    check_log,
    fold,
    fold_changes,
    handle,
    parse_session_jsonl,
)
from tickler.shell._clock import VirtualClock
from tickler.shell._session import open_session

from .idempotency_child import CREATE, PAUSE, PLAIN, SNOOZE, T0, Quiet

CHILD = Path(__file__).with_name("idempotency_child.py")


def _killed_child(store: Path, mode: str) -> str:
    done = subprocess.run(
        [sys.executable, str(CHILD), str(store), mode],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, (done.returncode, done.stdout, done.stderr)
    assert "answered" not in done.stdout  # killed before the answer
    return done.stdout


def _changes(store: Path) -> list[bytes]:
    parsed = parse_session_jsonl((store / "s1.jsonl").read_bytes())
    assert check_log(parsed.events).unwrap() is not None  # the invariants hold after the kill
    return [bytes(e.data) for e in parsed.events if e.type == SCHEDULE_CHANGE]


async def _call(store: Path, name: str, args: dict[str, object], now: int) -> tuple[str, str]:
    """One call in a restarted session at ``now``; its answer and the list."""
    jsonl = JsonlStore(store)
    try:
        async with open_session(
            jsonl, "s1", host=lambda _s: Quiet(), clock=VirtualClock(now)
        ) as session:
            answer = await session.tools.call_tool(name, args)
            return answer, await session.tools.call_tool("schedule_list", {})
    finally:
        await jsonl.close()


def test_a_retried_create_after_kill_9_gets_the_first_answer_and_no_second_reminder(
    tmp_path: Path,
) -> None:
    _killed_child(tmp_path, "create")
    [logged] = _changes(tmp_path)
    assert b'"requestId":"req-42"' in logged  # durable before the kill
    # What the killed call would have answered (the child's clock is fixed).
    _, first = handle(EMPTY_STATE, "schedule_create", CREATE, now=T0)
    retried, listed = asyncio.run(_call(tmp_path, "schedule_create", CREATE, T0 + 30_000))
    assert retried == first  # byte for byte, though the retry came 30 s later
    assert len(json.loads(listed)) == 1
    assert len(_changes(tmp_path)) == 1  # the retry appended nothing
    # The same id with other arguments is a closed error that says so.
    other = {**CREATE, "prompt": "something else"}
    refused, listed = asyncio.run(_call(tmp_path, "schedule_create", other, T0 + 60_000))
    assert json.loads(refused)["code"] == "invalid_rule"
    assert "request_id was already used with other arguments" in refused
    assert len(json.loads(listed)) == 1
    assert len(_changes(tmp_path)) == 1


def test_a_pause_made_durable_before_kill_9_survives_and_replays_exactly(tmp_path: Path) -> None:
    created = _killed_child(tmp_path, "pause")
    assert json.loads(created.splitlines()[0])["id"] == "schedule-1"
    changes = _changes(tmp_path)
    assert len(changes) == 2
    assert b'"operation":"update"' in changes[1]
    # Replayed from the log, the state is the one the two calls make.
    _, created_text = handle(EMPTY_STATE, "schedule_create", PLAIN, now=T0)
    state = EMPTY_STATE
    for name, args in (("schedule_create", PLAIN), ("schedule_update", PAUSE)):
        step, _ = handle(state, name, args, now=T0)
        state = fold_changes(step, state)
    parsed = parse_session_jsonl((tmp_path / "s1.jsonl").read_bytes())
    replayed = fold(parsed.events)
    assert replayed.active == state.active
    assert replayed.is_paused("schedule-1")
    assert state.is_paused("schedule-1")
    # A restarted session past three occurrences delivers nothing: still paused.
    _, listed = asyncio.run(_call(tmp_path, "schedule_list", {}, T0 + 3 * 3_600_000 + 1))
    [view] = json.loads(listed)
    assert view["id"] == "schedule-1"
    assert len(_changes(tmp_path)) == 2  # nothing dispatched, nothing new
    assert created_text.startswith('{"id":"schedule-1"')


def test_a_snooze_made_durable_before_kill_9_keeps_the_series_apart(tmp_path: Path) -> None:
    """Hourly from 12:00 (due 13:00), snoozed at 12:00 for ten minutes: 13:00
    moves to 12:10 and the series continues at 14:00. Replayed after the
    kill, the state (with where the series continues) is the one the calls
    make, and a restarted session shows 12:10, 14:00, 15:00."""
    _killed_child(tmp_path, "snooze")
    changes = _changes(tmp_path)
    assert len(changes) == 2
    assert b'"scheduledAt":"2026-08-05T12:10:00.000Z"' in changes[1]
    state = EMPTY_STATE
    for name, args in (("schedule_create", PLAIN), ("schedule_update", SNOOZE)):
        step, _ = handle(state, name, args, now=T0)
        state = fold_changes(step, state)
    replayed = fold(parse_session_jsonl((tmp_path / "s1.jsonl").read_bytes()).events)
    assert replayed == state
    assert replayed.lattice("schedule-1") == T0 + 2 * 3_600_000
    _, listed = asyncio.run(_call(tmp_path, "schedule_list", {}, T0 + 30 * 60_000))
    [view] = json.loads(listed)
    assert [o["utc"] for o in view["nextOccurrences"]] == [
        "2026-08-05T12:10:00.000Z",
        "2026-08-05T14:00:00.000Z",
        "2026-08-05T15:00:00.000Z",
    ]
    assert len(_changes(tmp_path)) == 2  # nothing new
