"""A local ``at`` without seconds (issue 25, item 8): people and models
write ``09:00``; the extended profile takes it as 09:00:00 and logs the same
change as for ``09:00:00``, while the reference profile keeps the
reference's rule and text. The extended profile's shape errors name the
field, the value and an example."""

from __future__ import annotations

import json
import re
from typing import Final

import pytest

from tickler.core import (
    decode_change,
    encode_change,
    fold_changes,
    handle,
    parse_instant,
    tool_catalog,
)
from tickler.core._errors import Msg
from tickler.core._profile import Profile

NOW: Final = parse_instant("2026-12-01T12:00:00.000Z")
EXAMPLE: Final = '{"date": "2026-12-08", "time": "09:00", "time_zone": "Europe/Berlin"}'


def create(
    time: str, profile: Profile = "extended", date: str = "2026-12-08"
) -> tuple[list[bytes], dict[str, object]]:
    at = {"date": date, "time": time, "time_zone": "Europe/Berlin"}
    changes, text = handle(
        fold_changes(()), "schedule_create", {"prompt": "stand-up", "at": at}, NOW, profile=profile
    )
    return [encode_change(c) for c in changes], json.loads(text)


def test_the_extended_profile_reads_hh_mm_as_hh_mm_00_and_logs_the_same_change() -> None:
    short_changes, short = create("09:00")
    full_changes, full = create("09:00:00")
    assert short == full
    assert short["scheduledAt"] == "2026-12-08T08:00:00.000Z"  # 09:00 in Berlin (UTC+1)
    assert short_changes == full_changes  # the log keeps the UTC instant, nothing local
    [logged] = short_changes
    replayed = fold_changes((decode_change(logged),))
    assert [r.scheduled_at for r in replayed.active] == ["2026-12-08T08:00:00.000Z"]


def test_the_reference_profile_keeps_refusing_hh_mm_with_the_references_text() -> None:
    changes, answer = create("09:00", profile="reference")
    assert changes == []
    assert answer == {"code": "invalid_rule", "message": Msg.LOCAL_SHAPE}
    assert Msg.LOCAL_SHAPE == (
        "Local at requires date YYYY-MM-DD and time HH:mm:ss with optional "
        "one-to-three digit milliseconds."
    )


@pytest.mark.parametrize(
    ("date", "time", "message"),
    [
        ("2026-12-08", "9:00", 'Local at time "9:00" must be HH:mm or HH:mm:ss'),
        ("2026-12-08", "09:00:5", 'Local at time "09:00:5" must be HH:mm or HH:mm:ss'),
        ("2026-12-08", "09:00Z", 'Local at time "09:00Z" must be HH:mm or HH:mm:ss'),
        ("2026/12/08", "09:00", 'Local at date "2026/12/08" must be YYYY-MM-DD'),
        ("2026-12-0\u0668", "09:00", 'Local at date "2026-12-0\\u0668" must be YYYY-MM-DD'),
        (
            "2026-12-08",
            "9" * 5000,
            'Local at time "99999999999999999999"... (5,000 characters) must be HH:mm',
        ),
    ],
)
def test_an_extended_shape_error_names_the_field_the_value_and_an_example(
    date: str, time: str, message: str
) -> None:
    changes, answer = create(time, date=date)
    assert changes == []
    assert answer["code"] == "invalid_rule"
    text = answer["message"]
    assert isinstance(text, str)
    assert text.startswith(message), text
    assert text.endswith(f"e.g. {EXAMPLE}.")
    assert text.isascii()


def test_the_extended_schema_allows_hh_mm_and_says_so() -> None:
    [create_tool] = [t for t in tool_catalog(profile="extended") if t["name"] == "schedule_create"]
    [_, at_variant, _, _] = create_tool["input_schema"]["properties"]["when"]["anyOf"]
    [_, local] = at_variant["properties"]["at"]["anyOf"]
    time = local["properties"]["time"]
    assert re.search(time["pattern"], "09:00")
    assert re.search(time["pattern"], "09:00:00.250")
    assert not re.search(time["pattern"], "9:00")
    assert "HH:MM or HH:MM:SS" in time["description"]
