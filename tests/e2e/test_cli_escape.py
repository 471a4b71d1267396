"""Log-derived text reaches the terminal as text: no Rich markup, no control
sequences (issue 9: `[/oops]` crashed inspect, ESC/OSC reached the terminal)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tickler.adapters.cli._visible import json_text, visible

TICKLER = [sys.executable, "-m", "tickler.adapters.cli"]
HOSTILE = (
    "[/oops]",
    "[link=http://x]hi[/link]",
    "\x1b]8;;http://evil\x07click me\x1b]8;;\x07",
    "\x1b[2J wiped",
    "bell\x07 csi\x9b31m",
    "first line\nsecond line",
)


def tickler(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TICKLER, *args], capture_output=True, text=True, timeout=60, check=False
    )


def hostile_session(path: Path, session_id: str = "s1") -> Path:
    header = {"type": "session", "version": 0, "id": session_id, "createdAt": 1785931200000}
    lines = [json.dumps(header)]
    for seq, prompt in enumerate(HOSTILE):
        schedule = {
            "id": f"schedule-{seq + 1}",
            "kind": "after",
            "prompt": prompt,
            "afterSeconds": 30,
            "scheduledAt": "2099-08-05T12:00:30.000Z",
        }
        data = {"version": 1, "operation": "create", "schedule": schedule}
        event = {"type": "schedule/change", "seq": seq, "time": 1785931200000, "data": data}
        lines.append(json.dumps(event))
    path.write_text("\n".join(lines) + "\n")
    return path


def assert_no_control(text: str) -> None:
    bad = [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F]
    assert bad == [], bad


def test_inspect_shows_markup_literally_and_no_control_sequences(tmp_path: Path) -> None:
    path = hostile_session(tmp_path / "evil.jsonl")
    result = tickler("inspect", str(path))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert_no_control(out)
    assert "[/oops]" in out
    assert "[link=http://x]hi[/link]" in out
    assert "\\x1b]8;;http://evil\\x07click me" in out
    assert "\\x1b[2J wiped" in out
    assert "\\x9b31m" in out
    # a multi-line prompt keeps its lines
    assert "first line" in out
    assert "second line" in out


def test_inspect_json_escapes_c1_controls(tmp_path: Path) -> None:
    path = hostile_session(tmp_path / "evil.jsonl")
    result = tickler("inspect", "--json", str(path))
    assert result.returncode == 0, result.stderr
    assert_no_control(result.stdout.replace("\n", ""))
    prompts = [row["prompt"] for row in json.loads(result.stdout)["active"]]
    assert prompts == list(HOSTILE)  # JSON keeps the exact text, escaped


def test_check_names_a_hostile_file_without_control_sequences(tmp_path: Path) -> None:
    path = hostile_session(tmp_path / "\x1b[2Jevil[x].jsonl", session_id="\x1b]0;title\x07")
    with path.open("a") as out:
        out.write('{"type":"schedule/change","seq":99}\n')
    result = tickler("check", str(path))
    assert result.returncode == 1
    assert_no_control(result.stderr)
    assert "\\x1b[2Jevil[x].jsonl:8:" in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("plain [b]text[/b]", "plain [b]text[/b]"),
        ("a\x1bb", "a\\x1bb"),
        ("a\rb\x00", "a\\rb\\x00"),
        ("tab\there", "tab\there"),
        ("nl\nhere", "nl\\nhere"),
        ("c1\x85\x9b", "c1\\x85\\x9b"),
        ("bidi\u202eevil", "bidi\\u202eevil"),
        ("lone\udcff", "lone\\xff"),
        ("lone\ud800", "lone\\ud800"),
        ("emoji 😀 and é", "emoji 😀 and é"),
    ],
)
def test_visible_makes_controls_readable(raw: str, shown: str) -> None:
    assert visible(raw) == shown


def test_visible_keeps_newlines_when_asked() -> None:
    assert visible("a\nb\x1b", newlines=True) == "a\nb\\x1b"


def test_json_text_is_json_with_every_control_escaped() -> None:
    value = {"p": "\x1b[2J \x9b \u2028 \ud800 é"}
    text = json_text(value)
    assert_no_control(text.replace("\n", ""))
    assert "\ud800" not in text
    assert json.loads(text) == value
    assert "é" in text


def test_an_unreadable_hostile_path_is_one_inert_line(tmp_path: Path) -> None:
    missing = tmp_path / "\x1b[2J\x1b]0;pwned\x07.jsonl"
    for command in ("check", "inspect"):
        result = tickler(command, str(missing))
        assert result.returncode == 2
        assert result.stderr.count("\n") == 1, result.stderr
        assert_no_control(result.stderr)
        assert "\\x1b[2J\\x1b]0;pwned\\x07.jsonl: cannot read" in result.stderr
