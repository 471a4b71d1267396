"""``tickler check`` vets tickler's own records too: a malformed outbox,
acknowledgement or turn record faults the runtime, so ``check`` must not
call such a log valid (before, only ``inspect`` said so)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tickler.core import Occurrence
from tickler.shell._host import FollowUp
from tickler.shell._records import encode_delivered, encode_followup

TICKLER = [sys.executable, "-m", "tickler.adapters.cli"]
T0 = 1_785_931_200_000
KEY = "schedule-1@2026-08-05T12:00:10.000Z"
MESSAGE = FollowUp(KEY, "text", (Occurrence("schedule-1", "2026-08-05T12:00:10.000Z", "p"),))


def session(path: Path, *records: tuple[str, bytes]) -> str:
    header = {"type": "session", "version": 0, "id": path.stem, "createdAt": T0}
    lines = [json.dumps(header).encode()]
    for seq, (kind, data) in enumerate(records):
        prefix = json.dumps({"type": kind, "seq": seq, "time": T0 + seq})[:-1]
        lines.append(prefix.encode() + b', "data": ' + data + b"}")
    path.write_bytes(b"\n".join(lines) + b"\n")
    return str(path)


def check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TICKLER, "check", *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_a_well_formed_outbox_and_acknowledgement_pass(tmp_path: Path) -> None:
    path = session(
        tmp_path / "ok.jsonl",
        ("tickler/followup", encode_followup(MESSAGE)),
        ("tickler/delivered", encode_delivered(KEY)),
    )
    result = check(path)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    "record",
    [
        ("tickler/followup", b'{"key":"k"}'),
        ("tickler/delivered", b'{"key":1}'),
        ("tickler/followup-failed", b'{"key":"k","attempt":"x","error":"e"}'),
        ("tickler/turn-input", b'{"n":"zero","source":"user","text":"t"}'),
        ("tickler/turn-cut", b'{"input":0,"attempt":1,"reason":"bored"}'),
    ],
)
def test_a_malformed_tickler_record_is_corrupt_with_its_line(
    tmp_path: Path, record: tuple[str, bytes]
) -> None:
    path = session(tmp_path / "bad.jsonl", ("tickler/followup", encode_followup(MESSAGE)), record)
    result = check(path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{path}:3:" in result.stdout + result.stderr
    assert f"malformed {record[0]} record" in result.stdout + result.stderr
