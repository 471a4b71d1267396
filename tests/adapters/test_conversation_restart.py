"""A reminder wakes the agent with its conversation, after a kill -9.

Per framework host (PydanticAI, OpenAI Agents SDK, LangChain), on a JSONL
store: a first process hears the user's name and sets a reminder, and is
killed with SIGKILL once that turn is durable; a new process opens the
session an hour later and delivers the overdue reminder. The model, that
framework's own kind of test model, answers from what it is shown: its
input on the reminder's turn must hold the earlier exchange, and its answer
the name. And a turn whose batch never became durable (kill -9 between its
append and its flush) is not restored at all, not in part.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tickler.core import parse_session_jsonl

CHILD = Path(__file__).with_name("conversation_child.py")
FRAMEWORKS = ("pydantic-ai", "openai-agents", "langchain")
TELL = "My name is Ada. Remind me to stretch in 10 minutes."
MESSAGES = {
    "pydantic-ai": "pydantic-ai/messages",
    "openai-agents": "openai-agents/items",
    "langchain": "langchain/messages",
}


def spawn(framework: str, directory: Path, phase: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(CHILD), framework, str(directory), phase],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def tell_and_kill(framework: str, directory: Path) -> None:
    """The first process: killed with SIGKILL once it says its turn is durable."""
    child = spawn(framework, directory, "tell")
    assert child.stdout is not None
    try:
        line = child.stdout.readline()  # EOF if it died: then the assert says why
        assert line == b"ready\n", child.communicate(timeout=60)[1].decode()
    finally:
        child.send_signal(signal.SIGKILL)
        _, stderr = child.communicate(timeout=60)
    assert child.returncode == -signal.SIGKILL, stderr.decode()


def remind(framework: str, directory: Path) -> dict[str, Any]:
    """The next process: what its model saw, and the replies."""
    child = spawn(framework, directory, "remind")
    stdout, stderr = child.communicate(timeout=120)
    assert child.returncode == 0, stderr.decode()
    assert b"Traceback" not in stderr, stderr.decode()
    result: dict[str, Any] = json.loads(stdout)
    return result


def event_types(directory: Path) -> list[str]:
    parsed = parse_session_jsonl((directory / "conversation.jsonl").read_bytes())
    return [event.type for event in parsed.events]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_reminder_turn_after_kill_9_has_the_conversation(
    framework: str, tmp_path: Path
) -> None:
    tell_and_kill(framework, tmp_path)
    types = event_types(tmp_path)
    # The messages are durable in the batch of the turn's record.
    at = types.index(MESSAGES[framework])
    assert types[at + 1] == "tickler/turn"

    result = remind(framework, tmp_path)
    [reminder_turn] = [
        call for call in result["seen"] if "[SCHEDULE REMINDER]" in call["users"][-1]
    ]
    assert reminder_turn["users"][0] == TELL
    assert len(reminder_turn["users"]) == 2  # the name, then the reminder
    assert reminder_turn["size"] > 2  # the first turn's tool call and answer came too
    assert result["replies"] == [["reminder", "Time to stretch, Ada!"]]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_turn_killed_before_its_flush_is_not_restored_in_part(
    framework: str, tmp_path: Path
) -> None:
    child = spawn(framework, tmp_path, "torn")
    _, stderr = child.communicate(timeout=120)
    assert child.returncode == -signal.SIGKILL, stderr.decode()
    types = event_types(tmp_path)
    # The tool call made the reminder durable; the turn's batch never was.
    assert "schedule/change" in types
    assert MESSAGES[framework] not in types
    assert "tickler/turn" not in types

    result = remind(framework, tmp_path)
    # The input runs again, from no earlier messages, then the reminder comes.
    rerun, *_ = result["seen"]
    assert rerun["users"] == [TELL]
    assert rerun["size"] == 1
    reminder_turn = next(c for c in result["seen"] if "[SCHEDULE REMINDER]" in c["users"][-1])
    assert reminder_turn["users"] == [TELL, reminder_turn["users"][-1]]  # once, not twice
    assert ["reminder", "Time to stretch, Ada!"] in result["replies"]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_worker_runs_the_reminder_turn_with_the_conversation(
    framework: str, tmp_path: Path
) -> None:
    """The first process is killed; nothing holds the session. ``tickler
    worker --store``, run from the folder of the app's module and given its
    host factory, wakes the overdue session and runs the reminder's turn
    with the framework's host, whose model is shown the conversation."""
    tell_and_kill(framework, tmp_path)
    out = tmp_path.parent / f"{tmp_path.name}-turns.jsonl"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TICKLER_DSN")}
    worker = subprocess.Popen(
        [
            *(sys.executable, "-m", "tickler", "worker", "--store", str(tmp_path)),
            *("--deliver", "conversation_worker_app:host", "--poll", "0.2"),
        ],
        cwd=CHILD.parent,
        env={**env, "CONVERSATION_FRAMEWORK": framework, "CONVERSATION_OUT": str(out)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120  # a hang guard: progress ends the wait
        while not (out.exists() and out.read_text().endswith("\n")):
            assert worker.poll() is None, worker.communicate()[1].decode()
            assert time.monotonic() < deadline, "the worker delivered nothing in 120 s"
            time.sleep(0.1)
        worker.send_signal(signal.SIGTERM)
        _, stderr = worker.communicate(timeout=60)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.communicate()
    assert worker.returncode == 0, stderr.decode()
    [turn] = [json.loads(line) for line in out.read_text().splitlines()]
    assert turn["reply"] == "Time to stretch, Ada!"
    [reminder_call] = [c for c in turn["seen"] if "[SCHEDULE REMINDER]" in c["users"][-1]]
    assert reminder_call["users"][0] == TELL  # the earlier exchange, read back from the log
    types = event_types(tmp_path)
    assert types.count(MESSAGES[framework]) == 2  # the reminder turn's messages, logged too
