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
import signal
import subprocess
import sys
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
