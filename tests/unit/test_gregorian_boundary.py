"""Local dates before the Gregorian reform: tickler's calendar and what
docs/compatibility.md says of the reference's (which switches to the Julian
calendar before 1582-10-15)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tickler.core import EMPTY_STATE, handle

NOW = 1785931200000  # 2026-08-05T12:00:00Z
PAGE = Path(__file__).resolve().parents[2] / "docs" / "compatibility.md"


def _create_local(date: str) -> dict[str, str]:
    args = {"prompt": "x", "at": {"date": date, "time": "12:00:00", "time_zone": "UTC"}}
    changes, text = handle(EMPTY_STATE, "schedule_create", args, NOW, profile="reference")
    assert changes == ()
    value: dict[str, str] = json.loads(text)
    return value


@pytest.mark.parametrize(
    "date", ["1582-10-14", "1582-10-05", "1582-01-01", "1581-12-31", "0001-01-01", "1582-10-15"]
)
def test_a_local_date_around_the_reform_is_a_past_gregorian_date(date: str) -> None:
    """1582-10-05..14 do not exist in the Julian-to-Gregorian switch, but they
    do in the proleptic Gregorian calendar tickler uses: a past date."""
    assert _create_local(date)["code"] == "not_future"


def test_the_compatibility_page_names_the_exact_boundary() -> None:
    """The compatibility page's note must name the day the difference
    starts (1582-10-15), not the year: 1582-01-01..1582-10-14 differ too."""
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    note = re.search(r"Local dates before ([0-9-]+)", text)
    assert note is not None, "the page no longer says where local dates differ"
    assert note.group(1) == "1582-10-15"
    assert "1582-01-01 to 1582-10-14" in text
