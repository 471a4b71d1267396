"""The calendar page's examples (docs/calendar.md) print what their comments
say they print (test_readme runs every block; this one also checks the output)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import tickler

PAGE = Path(tickler.__file__).resolve().parent / "docs" / "calendar.md"


def _calendar_block() -> str:
    text = PAGE.read_text()
    start = text.index("```python\n", text.index("# Calendar reminders")) + len("```python\n")
    return text[start : text.index("```\n", start)]


def test_the_calendar_example_prints_its_comments(tmp_path: Path) -> None:
    code = _calendar_block()
    assert '"cron": "30 2 * * *"' in code
    script = tmp_path / "calendar_example.py"
    script.write_text(code)
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=True, timeout=60
    ).stdout.splitlines()
    assert out == [
        "schedule-1 calendar {'cron': '30 2 * * *', 'time_zone': 'Europe/Berlin', "
        "'dst_gap': 'shift', 'dst_overlap': 'first'}",
        "2026-03-28T01:30:00.000Z 2026-03-28T02:30:00+01:00",
        "2026-03-29T01:00:00.000Z 2026-03-29T03:00:00+02:00",
        "2026-03-30T00:30:00.000Z 2026-03-30T02:30:00+02:00",
        "invalid_selector",
    ]
    for line in out[1:]:  # each printed occurrence is in the page's comments
        assert f"# {line}" in code


def test_the_update_and_retry_example_prints_its_comments(tmp_path: Path) -> None:
    text = PAGE.read_text()
    start = text.index("```python\n", text.index("## Changing a reminder in place")) + 10
    code = text[start : text.index("```\n", start)]
    script = tmp_path / "update_example.py"
    script.write_text(code)
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=True, timeout=60
    ).stdout.splitlines()
    assert out[:6] == [
        "schedule-1 2026-12-04T08:00:00.000Z",
        "True",
        "invalid_rule",
        "paused",
        "2026-12-09T08:00:00.000Z",
        "2026-12-08T12:10:00.000Z",
    ]
    for line in out[:6]:  # each is what the line's comment says
        assert f"# {line}" in code
    assert out[6].startswith("write stand-up notes ['2026-12-08T13:10:00+01:00', ")
    # moved in place: 9:30 from the next day on, then every two hours from now
    assert out[7:] == ["schedule-1 2026-12-09T08:30:00.000Z", "every 2026-12-08T14:00:00.000Z"]
    for line in out[7:]:
        assert f"# {line}" in code


def test_the_series_end_example_prints_its_comments(tmp_path: Path) -> None:
    text = PAGE.read_text()
    start = text.index("```python\n", text.index("## Series that end")) + len("```python\n")
    code = text[start : text.index("```\n", start)]
    script = tmp_path / "end_example.py"
    script.write_text(code)
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=True, timeout=60
    ).stdout.splitlines()
    assert out == [
        "2026-03-29T05:00:00.000Z ['2026-03-28T07:30:00+01:00']",
        "5 3",
        "1",
        "None",
    ]
    for line in out:
        assert f"# {line}" in code


def test_the_cron_dialect_example_prints_its_comments(tmp_path: Path) -> None:
    text = PAGE.read_text()
    start = text.index("```python\n", text.index("## The cron dialect")) + len("```python\n")
    code = text[start : text.index("```\n", start)]
    script = tmp_path / "dialect_example.py"
    script.write_text(code)
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=True, timeout=60
    ).stdout.splitlines()
    assert out == [
        "0 9 * * mon#1 2026-01-05 2026-02-02 2026-03-02",
        "0 9 L * *     2026-01-31 2026-02-28 2026-03-31",
        "0 9 15W * *   2026-01-15 2026-02-16 2026-03-16",
        "0 9 * * 5L    2026-01-30 2026-02-27 2026-03-27",
        "0 9 1 * 1#1   2026-01-01 2026-01-05 2026-02-01",
        'calendar cron day-of-month "L-3" counts back from the last day, which is not supported',
    ]
    for line in out:  # each is in the page's comments
        assert f"# {line}" in code
