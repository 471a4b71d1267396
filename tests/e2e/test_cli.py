"""The ``tickler`` command end to end, as a user runs it (subprocesses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

TICKLER = [sys.executable, "-m", "tickler.adapters.cli"]
HEADER = b'{"type":"session","version":0,"id":"s1","createdAt":1785931200000}\n'
CREATE = (
    b'{"type":"schedule/change","seq":0,"time":1785931200000,"data":{"version":1,'
    b'"operation":"create","schedule":{"id":"schedule-1","kind":"after","prompt":"stretch",'
    b'"afterSeconds":30,"scheduledAt":"2026-08-05T12:00:30.000Z"}}}\n'
)
BAD_DELETE = (
    b'{"type":"schedule/change","seq":1,"time":1785931201000,"data":{"version":1,'
    b'"operation":"delete","id":"schedule-9"}}\n'
)


def tickler(
    *args: str, stdin: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TICKLER, *args], input=stdin, capture_output=True, text=True, timeout=timeout, check=False
    )


def write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def test_check_valid_corrupt_and_unreadable(tmp_path: Path) -> None:
    good = write(tmp_path / "good.jsonl", HEADER + CREATE)
    bad = write(tmp_path / "bad.jsonl", HEADER + CREATE + BAD_DELETE)
    ok = tickler("check", good)
    assert ok.returncode == 0
    assert ok.stdout.strip() == f"{good}: valid (1 events, 1 active)"
    corrupt = tickler("check", good, bad)
    assert corrupt.returncode == 1
    assert corrupt.stderr.strip() == (
        f'tickler: {bad}:3: schedule delete targets inactive id "schedule-9"'
    )
    missing = tickler("check", str(tmp_path / "nope.jsonl"), good)
    assert missing.returncode == 2
    assert "nope.jsonl: cannot read: No such file or directory" in missing.stderr
    both = tickler("check", str(tmp_path / "nope.jsonl"), bad)
    assert both.returncode == 1  # corruption found outranks an unreadable input
    assert "nope.jsonl: cannot read: No such file or directory" in both.stderr
    assert f"{bad}:3: schedule delete targets inactive id" in both.stderr


def test_check_names_a_corrupt_middle_line_and_reports_json(tmp_path: Path) -> None:
    broken = write(tmp_path / "torn.jsonl", HEADER + b"{not json\n" + CREATE)
    result = tickler("check", "--json", broken)
    assert result.returncode == 1
    (verdict,) = json.loads(result.stdout)["files"]
    assert verdict["status"] == "corrupt"
    assert verdict["line"] == 2


def test_check_reports_a_torn_final_line_outside_a_store(tmp_path: Path) -> None:
    # Nothing outside a store tells a crash's tail from a cut file.
    torn = write(tmp_path / "torn.jsonl", HEADER + CREATE + b'{"type":"sched')
    result = tickler("check", torn)
    assert result.returncode == 1
    assert result.stderr.startswith(f"tickler: {torn}:3: torn final line")


def test_inspect_json_lists_the_active_reminder_in_a_zone(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", HEADER + CREATE)
    result = tickler("inspect", path, "--tz", "Asia/Tokyo", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["session"] == "s1"
    (active,) = report["active"]
    assert active["id"] == "schedule-1"
    assert active["scheduledAt"] == "2026-08-05T12:00:30.000Z"
    assert active["local"] == "2026-08-05 21:00:30 JST"
    assert report["nextWake"] == "2026-08-05T12:00:30.000Z"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bogus"], "tickler: error: No such command 'bogus'."),
        (["inspect"], "tickler: error: Missing argument 'PATH'."),
        (["inspect", "x.jsonl", "--tz", "Mars/Base"], "tickler: error: unknown time zone"),
        (["mcp", "--store", "d", "--session", "s"], "tickler: error: give exactly one"),
    ],
)
def test_errors_are_one_line_with_exit_code_2(args: list[str], message: str) -> None:
    result = tickler(*args)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(message)
    assert "Traceback" not in result.stderr


def test_inspect_of_a_corrupt_log_is_one_line(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.jsonl", HEADER + CREATE + BAD_DELETE)
    result = tickler("inspect", bad)
    assert result.returncode == 1  # exit codes as for check
    assert result.stderr.strip() == (
        f'tickler: {bad}:3: schedule delete targets inactive id "schedule-9"'
    )


def test_demo_tells_the_whole_story() -> None:
    result = tickler("demo", timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    for line in (
        "1) An agent process takes a chat's messages",
        "user: My name is Ada.",
        '"cron": "0 9 * * 1-5", "time_zone": "Europe/Berlin"',
        '"after_seconds": 6',
        "2) kill -9 of the agent process",
        "3) tickler worker --store wakes the cold session",
        "assistant: Reminder for Ada: stretch",
        "reminder turns: 1 for 1 occurrences; nothing repeated, nothing lost.",
        "the reminder turn knew the conversation: it greeted Ada by name.",
    ):
        assert line in out, line
    assert out.count("Reminder for Ada: stretch") == 1


def test_demo_json_prints_one_document_and_tells_the_story_on_stderr() -> None:
    result = tickler("demo", "--json", timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    outcome = json.loads(result.stdout)  # stdout is the JSON document alone
    assert outcome["ok"] is True
    assert outcome["reminderTurns"] == 1
    assert len(outcome["occurrences"]) == 1
    assert outcome["repeated"] == []
    assert outcome["check"]["status"] == "valid"
    active = outcome["session"]["active"]
    assert [reminder["kind"] for reminder in active] == ["calendar"]
    assert "2) kill -9 of the agent process" in result.stderr
    assert result.stderr.count("Reminder for Ada: stretch") == 1


def test_chat_offline_delivers_a_reminder_while_chatting(tmp_path: Path) -> None:
    script = "remind me in 1 seconds to stretch\n"
    env = {**os.environ, "TICKLER_MODEL": ""}
    proc = subprocess.Popen(
        [*TICKLER, "chat", "--store", str(tmp_path), "--session", "c1"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write(script)
    proc.stdin.flush()
    watchdog = threading.Timer(60, proc.kill)  # a missing reminder fails, never hangs
    watchdog.start()
    seen = ""
    for line in proc.stdout:
        seen += line
        if "Reminder: stretch" in line:
            break
    watchdog.cancel()
    proc.stdin.write("exit\n")
    proc.stdin.flush()
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "OK: schedule-1 (after)" in seen
    assert "[reminder arrived as a turn]" in seen
    assert "bye" in out
    check = tickler("check", str(tmp_path / "c1.jsonl"))
    assert check.returncode == 0, check.stderr
