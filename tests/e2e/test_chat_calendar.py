"""``tickler chat`` (the offline model) understands "every weekday at 9":
a calendar rule in the machine's zone, read back as its next three
occurrences in UTC and in that zone, kept in the session log."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from datetime import date
from pathlib import Path

SCRIPT = Path(sys.executable).parent / "tickler"
NEXT = re.compile(
    r"  (\d{4}-\d\d-\d\d)T\d\d:00:00\.000Z \((\d{4}-\d\d-\d\d) 09:00:00 CES?T, Europe/Berlin\)"
)


class Chat:
    """``tickler chat`` in a child process, one message at a time."""

    def __init__(self, store: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k not in {"TICKLER_MODEL", "PYTHONPATH"}}
        env["TZ"] = "Europe/Berlin"
        self.proc = subprocess.Popen(
            [str(SCRIPT), "chat", "--store", str(store), "--session", "c1"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.watchdog = threading.Timer(120, self.proc.kill)  # never hang the suite
        self.watchdog.start()

    def say(self, text: str, lines: int) -> list[str]:
        """Send ``text``; the answer's first ``lines`` lines."""
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()
        for line in self.proc.stdout:
            if "assistant> " in line:
                answer = [line.split("assistant> ", 1)[1].rstrip("\n")]
                break
        else:
            raise AssertionError("chat ended before it answered")
        while len(answer) < lines:
            answer.append(self.proc.stdout.readline().rstrip("\n"))
        return answer

    def close(self) -> tuple[int, str]:
        assert self.proc.stdin is not None
        self.proc.stdin.write("exit\n")
        self.proc.stdin.flush()
        _, stderr = self.proc.communicate(timeout=60)
        self.watchdog.cancel()
        return self.proc.returncode, stderr


def test_chat_sets_a_weekday_reminder_in_the_local_zone(tmp_path: Path) -> None:
    chat = Chat(tmp_path)
    try:
        answer = chat.say("every weekday at 9 to write stand-up notes", 5)
        listed = chat.say("list", 2)
    finally:
        code, stderr = chat.close()
    assert code == 0, stderr
    assert answer[:2] == [
        "OK: schedule-1 (calendar 0 9 * * 1-5 in Europe/Berlin): write stand-up notes",
        "Next 3:",
    ]
    previews = [NEXT.fullmatch(line) for line in answer[2:]]
    assert all(previews), answer
    days = [date.fromisoformat(match[2]) for match in previews if match]
    assert all(day.isoweekday() <= 5 for day in days)  # Monday to Friday
    assert days == sorted(set(days))
    assert listed[0] == "Your reminders:"
    assert listed[1].startswith("- schedule-1 (calendar 0 9 * * 1-5, scheduled) at ")
    assert listed[1].endswith(" CET, Europe/Berlin): write stand-up notes") or listed[1].endswith(
        " CEST, Europe/Berlin): write stand-up notes"
    )
    # The log keeps the rule: a version-2 create.
    log = (tmp_path / "c1.jsonl").read_text()
    assert '"cron":"0 9 * * 1-5","timeZone":"Europe/Berlin"' in log
