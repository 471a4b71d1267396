"""Times for people: UTC as the log keeps it, plus the viewer's zone and a
reminder's own zone; the machine's zone found from TZ, /etc/localtime or
/etc/timezone, with the pinned zone data."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from rich.console import Console

from tickler.adapters._offline_model import OfflineModel
from tickler.adapters._times import local_zone, when_text, zone_named
from tickler.adapters.cli._inspect import Report, _row
from tickler.adapters.cli._output import print_report
from tickler.core import (
    EMPTY_STATE,
    AtSchedule,
    fold_changes,
    handle,
    parse_instant,
    standing_rule,
)
from tickler.core.timing._zones import resolve_zone
from tickler.shell._reference_host import TurnInput

NOWHERE = Path("/nonexistent/localtime")
BERLIN = resolve_zone("Europe/Berlin")
TOKYO = resolve_zone("Asia/Tokyo")
UTC = resolve_zone("UTC")
NINE_IN_BERLIN = parse_instant("2026-12-24T08:00:00.000Z")


def test_the_viewers_zone_and_the_reminders_own_are_shown_beside_utc() -> None:
    assert BERLIN is not None
    assert TOKYO is not None
    assert UTC is not None
    assert when_text(NINE_IN_BERLIN, TOKYO, BERLIN) == (
        "2026-12-24T08:00:00.000Z (2026-12-24 09:00:00 CET, Europe/Berlin; "
        "2026-12-24 17:00:00 JST, Asia/Tokyo)"
    )
    assert when_text(NINE_IN_BERLIN, BERLIN) == (
        "2026-12-24T08:00:00.000Z (2026-12-24 09:00:00 CET, Europe/Berlin)"
    )
    # One zone is shown once; plain UTC adds nothing to the UTC text.
    assert when_text(NINE_IN_BERLIN, BERLIN, BERLIN) == when_text(NINE_IN_BERLIN, BERLIN)
    assert when_text(NINE_IN_BERLIN, UTC) == "2026-12-24T08:00:00.000Z"
    assert when_text(NINE_IN_BERLIN, UTC, BERLIN) == when_text(NINE_IN_BERLIN, BERLIN)
    # Summer time reads as such.
    summer = parse_instant("2026-07-01T07:00:00.000Z")
    assert when_text(summer, BERLIN).endswith("(2026-07-01 09:00:00 CEST, Europe/Berlin)")


def test_an_instant_at_the_edge_of_the_range_is_shown_in_utc_alone() -> None:
    assert TOKYO is not None
    last = parse_instant("9999-12-31T23:59:59.999Z")  # Tokyo is already in year 10000
    assert when_text(last, TOKYO) == "9999-12-31T23:59:59.999Z"


@pytest.mark.parametrize(
    ("tz", "key"),
    [
        ("Asia/Tokyo", "Asia/Tokyo"),
        (":Europe/Berlin", "Europe/Berlin"),
        ("europe/berlin", "Europe/Berlin"),
        ("/usr/share/zoneinfo/America/New_York", "America/New_York"),
        ("/usr/share/zoneinfo/posix/Europe/Paris", "Europe/Paris"),
        ("CET", "CET"),
        ("Etc/UTC", "Etc/UTC"),
        ("", "UTC"),  # an empty TZ is UTC, as for the C library
        ("UTC0", "UTC"),  # a POSIX rule names no zone: UTC, never a guess
        ("Mars/Base", "UTC"),
    ],
)
def test_tz_wins_when_set(tz: str, key: str, tmp_path: Path) -> None:
    link = tmp_path / "localtime"
    link.symlink_to("/usr/share/zoneinfo/Asia/Kolkata")
    assert local_zone({"TZ": tz}, link, NOWHERE).key == key


def test_without_tz_the_localtime_link_names_the_zone(tmp_path: Path) -> None:
    # The link need not resolve: the zone data comes from tzdata, not the host.
    folder = tmp_path / "usr" / "share" / "zoneinfo" / "Europe"
    folder.mkdir(parents=True)
    (folder / "Lisbon").write_bytes(b"not read")
    link = tmp_path / "localtime"
    link.symlink_to(folder / "Lisbon")
    assert local_zone({}, link, NOWHERE).key == "Europe/Lisbon"
    relative = tmp_path / "relative"
    relative.symlink_to(Path("usr/share/zoneinfo/Europe/Lisbon"))
    assert local_zone({}, relative, NOWHERE).key == "Europe/Lisbon"


def test_a_copied_localtime_falls_back_to_etc_timezone_then_utc(tmp_path: Path) -> None:
    copy = tmp_path / "localtime"
    copy.write_bytes(b"TZif2 a copy, not a link")
    named = tmp_path / "timezone"
    named.write_text("Australia/Sydney\n")
    assert local_zone({}, copy, named).key == "Australia/Sydney"
    assert local_zone({}, copy, NOWHERE).key == "UTC"
    named.write_text("garbage here\n")
    assert local_zone({}, copy, named).key == "UTC"
    assert local_zone({}, NOWHERE, NOWHERE).key == "UTC"


def test_zone_named_refuses_what_names_no_zone() -> None:
    assert zone_named("") is None
    assert zone_named("/usr/share/zoneinfo/") is None
    assert zone_named("not a zone") is None


def test_the_offline_model_reads_an_at_back_in_its_zone_and_the_viewers() -> None:
    """ "at 09:00 Europe/Berlin" reads back as 09:00 in Berlin, and in the
    viewer's zone, beside the UTC the tool answered (the real tools, pure)."""
    now = NINE_IN_BERLIN - 3_600_000
    state = [EMPTY_STATE]

    async def call_tool(name: str, args: dict[str, object]) -> str:
        changes, text = handle(state[0], name, args, now=now)
        state[0] = fold_changes(changes, state[0])
        return text

    model = OfflineModel(call_tool, lambda: now, zone=TOKYO)

    async def ask(text: str) -> str:
        return await model(TurnInput(n=0, source="user", text=text))

    created = asyncio.run(ask("remind me at 09:00 Europe/Berlin on 2026-12-24 to call Anna"))
    assert created == (
        "OK: schedule-1 (at) fires at 2026-12-24T08:00:00.000Z (2026-12-24 09:00:00 CET, "
        "Europe/Berlin; 2026-12-24 17:00:00 JST, Asia/Tokyo): call Anna"
    )
    # A v1 record keeps no zone: the list shows UTC and the viewer's zone.
    assert asyncio.run(ask("list")) == (
        "Your reminders:\n- schedule-1 (at, scheduled) at 2026-12-24T08:00:00.000Z "
        "(2026-12-24 17:00:00 JST, Asia/Tokyo): call Anna"
    )
    after = asyncio.run(ask("remind me in 10 minutes to stretch"))
    assert after == (
        "OK: schedule-2 (after) fires at 2026-12-24T07:10:00.000Z "
        "(2026-12-24 16:10:00 JST, Asia/Tokyo): stretch"
    )


def _printed(report: Report) -> str:
    out = Console(record=True, width=200, markup=False, highlight=False)
    print_report(report, out)
    return out.export_text()


def test_inspect_shows_a_reminders_own_zone_when_it_has_one() -> None:
    """v1 records keep only the UTC instant; a reminder that carries a zone
    (``own``) gets it in its row and a column of its own."""
    assert BERLIN is not None
    assert TOKYO is not None
    record = AtSchedule(
        id="schedule-1", prompt="call Anna", scheduled_at="2026-12-24T08:00:00.000Z"
    )
    now = NINE_IN_BERLIN - 60_000
    standing = standing_rule(parse_instant(record.scheduled_at), now)
    plain = _row(record, standing, TOKYO)
    assert plain["local"] == "2026-12-24 17:00:00 JST"
    assert "zone" not in plain
    assert "zoneLocal" not in plain
    own = _row(record, standing, TOKYO, BERLIN)
    assert (own["zone"], own["zoneLocal"]) == ("Europe/Berlin", "2026-12-24 09:00:00 CET")

    report = Report("s1", 1, 0, "2026-12-24T07:59:00.000Z", "Asia/Tokyo", active=[plain])
    assert "its zone" not in _printed(report)
    report.active = [own, {**plain, "id": "schedule-2"}]
    text = _printed(report)
    assert "target (its zone)" in text
    assert "2026-12-24 09:00:00 CET (Europe/Berlin)" in text
