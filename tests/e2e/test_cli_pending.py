"""``tickler inspect`` shows what a session still owes (issue 9: a stuck
follow-up must be visible as pending delivery), for a file and for a
directory, as text and as JSON; a malformed runtime record is corruption."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from tickler.adapters.stores._jsonl import JsonlStore
from tickler.core import Occurrence
from tickler.shell._clock import VirtualClock
from tickler.shell._host import FollowUp
from tickler.shell._records import encode_followup, encode_followup_failed
from tickler.shell._reference_host import ReferenceHost, TurnInput

TICKLER = [sys.executable, "-m", "tickler.adapters.cli"]
T0 = 1_785_931_200_000  # 2026-08-05T12:00:00.000Z
KEY = "schedule-1@2026-08-05T12:00:10.000Z"
MESSAGE = FollowUp(KEY, "text", (Occurrence("schedule-1", "2026-08-05T12:00:10.000Z", "p"),))
HOSTILE_ERROR = "ConnectError: \x1b[2J wiped [/oops] \x9b31m"


def tickler(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TICKLER, *args], capture_output=True, text=True, timeout=120, check=False
    )


def session(path: Path, *records: tuple[str, bytes | dict[str, object]]) -> str:
    """A session file holding ``records`` (type, data) as events 0, 1, ..."""
    header = {"type": "session", "version": 0, "id": path.stem, "createdAt": T0}
    lines = [json.dumps(header).encode()]
    for seq, (kind, data) in enumerate(records):
        raw = data if isinstance(data, bytes) else json.dumps(data).encode()
        prefix = json.dumps({"type": kind, "seq": seq, "time": T0 + 10_000 + seq})[:-1]
        lines.append(prefix.encode() + b', "data": ' + raw + b"}")
    path.write_bytes(b"\n".join(lines) + b"\n")
    return str(path)


def failed(attempt: int, error: str) -> tuple[str, bytes]:
    return ("tickler/followup-failed", encode_followup_failed(KEY, attempt, error))


FOLLOWUP = ("tickler/followup", encode_followup(MESSAGE))
STUCK = (FOLLOWUP, failed(1, "OSError: down"), failed(2, "OSError: down"), failed(4, HOSTILE_ERROR))


def assert_no_control(text: str) -> None:
    bad = [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F]
    assert bad == [], bad


def pending_lines(out: str) -> str:
    """The text from the pending delivery section on."""
    assert "Pending delivery" in out, out
    return out[out.index("Pending delivery") :]


def test_a_stuck_followup_is_shown_with_its_failures_and_escaped_error(tmp_path: Path) -> None:
    path = session(tmp_path / "s1.jsonl", *STUCK)
    result = tickler("inspect", path)
    assert result.returncode == 0, result.stderr
    assert_no_control(result.stdout)
    section = pending_lines(result.stdout)
    assert KEY in section
    assert "schedule-1" in section
    assert "2026-08-05T12:00:10.000Z" in section  # queued at (the followup's time)
    row = next(line for line in section.splitlines() if KEY in line)
    assert " 4 " in row  # failures: the 1st, 2nd and 4th were recorded
    assert "\\x1b[2J wiped [/oops] \\x9b31m" in section  # escaped, markup literal
    assert "stuck" in section


def test_json_carries_the_pending_delivery(tmp_path: Path) -> None:
    path = session(tmp_path / "s1.jsonl", *STUCK)
    result = tickler("inspect", "--json", path)
    assert result.returncode == 0, result.stderr
    assert_no_control(result.stdout.replace("\n", ""))
    pending = json.loads(result.stdout)["pending"]
    assert pending == {
        "stuck": True,
        "deliveries": [
            {
                "key": KEY,
                "ids": ["schedule-1"],
                "queuedAt": "2026-08-05T12:00:10.000Z",
                "failures": 4,
                "lastError": HOSTILE_ERROR,  # the exact text, JSON-escaped
            }
        ],
        "turns": [],
        "abandoned": [],
    }


def test_a_delivered_followup_is_not_pending(tmp_path: Path) -> None:
    path = session(tmp_path / "s1.jsonl", *STUCK, ("tickler/delivered", {"key": KEY}))
    result = tickler("inspect", path)
    assert result.returncode == 0, result.stderr
    assert "Nothing pending delivery." in result.stdout
    assert "wiped" not in result.stdout  # the old failure is not shown as owed
    as_json = tickler("inspect", "--json", path)
    assert json.loads(as_json.stdout)["pending"] == {
        "stuck": False,
        "deliveries": [],
        "turns": [],
        "abandoned": [],
    }


def test_an_abandoned_and_a_waiting_turn_are_shown(tmp_path: Path) -> None:
    path = session(
        tmp_path / "s1.jsonl",
        ("tickler/turn-input", {"n": 0, "source": "user", "text": "poison"}),
        ("tickler/turn-input", {"n": 1, "source": "reminder", "text": "t", "key": KEY}),
        ("tickler/turn-start", {"input": 0}),
        ("tickler/turn-failed", {"input": 0, "attempt": 1, "error": "ValueError: \x1b]0;t\x07"}),
        ("tickler/turn-abandoned", {"input": 0, "attempts": 1}),
    )
    result = tickler("inspect", path)
    assert result.returncode == 0, result.stderr
    assert_no_control(result.stdout)
    section = pending_lines(result.stdout)
    assert "Abandoned turns" in section
    abandoned = section[section.index("Abandoned turns") :]
    assert "ValueError: \\x1b]0;t\\x07" in abandoned
    waiting = section[section.index("Pending turns") : section.index("Abandoned turns")]
    assert KEY in waiting
    assert "reminder" in waiting
    pending = json.loads(tickler("inspect", "--json", path).stdout)["pending"]
    assert pending["stuck"] is True
    assert pending["turns"] == [
        {
            "input": 1,
            "source": "reminder",
            "key": KEY,
            "starts": 0,
            "failures": 0,
            "cuts": 0,
            "lastError": None,
        }
    ]
    assert pending["abandoned"] == [
        {
            "input": 0,
            "source": "user",
            "key": None,
            "starts": 1,
            "failures": 1,
            "cuts": 0,
            "lastError": "ValueError: \x1b]0;t\x07",
        }
    ]


def test_a_turn_cut_by_a_closing_session_is_owed_not_stuck(tmp_path: Path) -> None:
    path = session(
        tmp_path / "s1.jsonl",
        ("tickler/turn-input", {"n": 0, "source": "user", "text": "stretch"}),
        ("tickler/turn-start", {"input": 0}),
        ("tickler/turn-cut", {"input": 0, "attempt": 1, "reason": "timeout"}),
    )
    pending = json.loads(tickler("inspect", "--json", path).stdout)["pending"]
    assert pending["stuck"] is False  # it runs again when the session is next opened
    assert pending["turns"] == [
        {
            "input": 0,
            "source": "user",
            "key": None,
            "starts": 1,
            "failures": 0,
            "cuts": 1,
            "lastError": None,
        }
    ]
    text = tickler("inspect", path)
    assert text.returncode == 0, text.stderr
    waiting = pending_lines(text.stdout)
    assert "cuts" in waiting
    assert "stuck" not in waiting


def test_a_malformed_runtime_record_is_reported_as_corruption(tmp_path: Path) -> None:
    path = session(tmp_path / "s1.jsonl", FOLLOWUP, ("tickler/followup-failed", {"key": KEY}))
    result = tickler("inspect", path)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f"tickler: {path}:3: malformed tickler/followup-failed record")
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_directory_reports_pending_work_per_session(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    session(store / "stuck.jsonl", *STUCK)
    session(store / "fine.jsonl", FOLLOWUP, ("tickler/delivered", {"key": KEY}))
    result = tickler("inspect", "--json", str(store))
    assert result.returncode == 0, result.stderr
    reports = {e["report"]["session"]: e["report"] for e in json.loads(result.stdout)["sessions"]}
    assert reports["stuck"]["pending"]["deliveries"][0]["failures"] == 4
    assert reports["stuck"]["pending"]["stuck"] is True
    assert reports["fine"]["pending"]["deliveries"] == []
    text = tickler("inspect", str(store))
    assert text.returncode == 0, text.stderr
    out = text.stdout
    fine, stuck = out.index("fine.jsonl"), out.index("stuck.jsonl")
    assert fine < stuck  # per session, in order
    assert "Nothing pending delivery." in out[fine:stuck]
    assert KEY in pending_lines(out[stuck:])


class PoisonModel:
    """Raises on every turn: the real host records and then abandons it."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, item: TurnInput) -> str:
        self.calls += 1
        raise ValueError(f"model refused \x1b[31m{item.text}")


async def abandon_through_the_real_host(directory: Path) -> None:
    store = JsonlStore(directory)
    try:
        log = await store.open("s1", created_at=T0)
        clock = VirtualClock(T0)
        model = PoisonModel()
        host = ReferenceHost(log, model, clock)
        host.start()
        try:
            await host.send("poison")
            for _ in range(600):  # virtual seconds; a bound on progress, never a timing
                if any(e.type == "tickler/turn-abandoned" for e in log.events()):
                    break
                await clock.advance(1_000)
            assert any(e.type == "tickler/turn-abandoned" for e in log.events()), "no progress"
        finally:
            await asyncio.wait_for(host.close(), 30)
    finally:
        await store.close()


def test_a_turn_the_real_host_gave_up_is_shown(tmp_path: Path) -> None:
    store = tmp_path / "store"
    asyncio.run(abandon_through_the_real_host(store))
    result = tickler("inspect", "--json", str(store))
    assert result.returncode == 0, result.stderr
    [entry] = json.loads(result.stdout)["sessions"]
    pending = entry["report"]["pending"]
    assert pending["stuck"] is True
    [abandoned] = pending["abandoned"]
    assert (abandoned["input"], abandoned["source"], abandoned["starts"]) == (0, "user", 5)
    assert abandoned["failures"] == 5
    # the error text is made inert (control characters escaped) when recorded
    assert (
        abandoned["lastError"] == "ValueError: model refused \\x1b[31mpoison"
    )  # made inert when recorded
    text = tickler("inspect", str(store))
    assert text.returncode == 0, text.stderr
    assert_no_control(text.stdout)
    assert "model refused \\x1b[31mpoison" in pending_lines(text.stdout)
