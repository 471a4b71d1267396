"""The offline model of ``tickler chat`` turns recurring phrases into tool
calls: a clock time makes a calendar rule in the viewer's zone, a bare
period stays fixed-rate (the real tools, pure, behind it)."""

from __future__ import annotations

import asyncio
from zoneinfo import ZoneInfo

from tickler.adapters.offline._model import OfflineModel
from tickler.core import EMPTY_STATE, fold_changes, handle, parse_instant
from tickler.shell._reference_host import TurnInput

TOKYO = ZoneInfo("Asia/Tokyo")
# Friday 2026-12-04 12:00 in Tokyo.
NOW = parse_instant("2026-12-04T03:00:00.000Z")


class Recorder:
    """The real pure tools, with every call kept."""

    def __init__(self) -> None:
        self.state = EMPTY_STATE
        self.calls: list[tuple[str, dict[str, object]]] = []

    async def __call__(self, name: str, args: dict[str, object]) -> str:
        self.calls.append((name, args))
        changes, text = handle(self.state, name, args, now=NOW)
        self.state = fold_changes(changes, self.state)
        return text


def _ask(model: OfflineModel, text: str) -> str:
    return asyncio.run(model(TurnInput(n=0, source="user", text=text)))


def test_every_weekday_at_9_asks_for_a_calendar_rule_in_the_viewers_zone() -> None:
    tools = Recorder()
    model = OfflineModel(tools, lambda: NOW, zone=TOKYO)
    answer = _ask(model, "every weekday at 9 to write stand-up notes")
    # Friday noon: the next three are Monday, Tuesday, Wednesday at 9:00.
    assert answer == (
        "OK: schedule-1 (calendar 0 9 * * 1-5 in Asia/Tokyo): write stand-up notes\n"
        "Next 3:\n"
        "  2026-12-07T00:00:00.000Z (2026-12-07 09:00:00 JST, Asia/Tokyo)\n"
        "  2026-12-08T00:00:00.000Z (2026-12-08 09:00:00 JST, Asia/Tokyo)\n"
        "  2026-12-09T00:00:00.000Z (2026-12-09 09:00:00 JST, Asia/Tokyo)"
    )
    assert tools.calls == [
        (
            "schedule_create",
            {
                "prompt": "write stand-up notes",
                "calendar": {"cron": "0 9 * * 1-5", "time_zone": "Asia/Tokyo"},
            },
        )
    ]


def test_every_hour_stays_fixed_rate() -> None:
    tools = Recorder()
    model = OfflineModel(tools, lambda: NOW, zone=TOKYO)
    answer = _ask(model, "every hour to stretch")
    assert tools.calls == [("schedule_create", {"prompt": "stretch", "every_seconds": 3600})]
    assert answer == (
        "OK: schedule-1 (every) fires at 2026-12-04T04:00:00.000Z "
        "(2026-12-04 13:00:00 JST, Asia/Tokyo): stretch"
    )
    bare = _ask(model, "every 2 hours")
    assert tools.calls[-1] == (
        "schedule_create",
        {"prompt": "every 2 hours", "every_seconds": 7200},
    )
    assert bare.startswith("OK: schedule-2 (every) fires at 2026-12-04T05:00:00.000Z")


def test_a_rule_in_another_zone_reads_back_in_both_zones() -> None:
    tools = Recorder()
    model = OfflineModel(tools, lambda: NOW, zone=TOKYO)
    answer = _ask(model, "every Monday at 8am Europe/Berlin plan the week")
    assert answer.splitlines()[:2] == [
        "OK: schedule-1 (calendar 0 8 * * 1 in Europe/Berlin): plan the week",
        "Next 3:",
    ]
    assert answer.splitlines()[2] == (
        "  2026-12-07T07:00:00.000Z (2026-12-07 08:00:00 CET, Europe/Berlin; "
        "2026-12-07 16:00:00 JST, Asia/Tokyo)"
    )
    assert _ask(model, "list") == (
        "Your reminders:\n- schedule-1 (calendar 0 8 * * 1, scheduled) at "
        "2026-12-07T07:00:00.000Z (2026-12-07 08:00:00 CET, Europe/Berlin; "
        "2026-12-07 16:00:00 JST, Asia/Tokyo): plan the week"
    )


def test_a_refused_rule_says_why() -> None:
    tools = Recorder()
    model = OfflineModel(tools, lambda: NOW, zone=TOKYO)
    answer = _ask(model, "every day at 9 Mars/Olympus_Mons water")
    assert answer.startswith("Sorry, that did not work: ")
    assert tools.state.active == ()


def test_an_amount_of_thousands_of_digits_gets_the_tools_answer() -> None:
    """Python's int() refuses more than 4,300 digits: the chat's model
    raised; now the tools refuse the amount as they refuse any unsafe one."""
    tools = Recorder()
    model = OfflineModel(tools, lambda: NOW, zone=TOKYO)
    for text in (
        "remind me in " + "1" * 5000 + " seconds to stretch",
        "every " + "1" * 5000 + " minutes drink water",
    ):
        answer = _ask(model, text)
        assert answer.startswith("Sorry, that did not work:"), answer
    assert [name for name, _ in tools.calls] == ["schedule_create", "schedule_create"]
    assert tools.state.active == ()
