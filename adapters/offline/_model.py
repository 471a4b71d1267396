"""A small rule-based model, so the demo and ``tickler chat`` work offline.

It understands a few phrasings and calls the real tools through the
runtime, exactly as an LLM would:

* "remind me in 10 seconds to stretch" (seconds/minutes/hours)
* "remind me at 09:00 Europe/Berlin to call Anna" (optionally "on 2026-12-24",
  optionally with seconds "09:00:30"; no zone means UTC)
* "every 5 minutes drink water", "every hour to stretch" (fixed-rate; at
  least 5 minutes: the floor is 300 s)
* "every weekday at 9 to write notes", "every Monday at 8am", "on weekdays
  at 17:00": a calendar rule in the viewer's zone
  (:mod:`tickler.adapters.offline._calendar_phrases`), its next occurrences shown
* "list", "delete schedule-2"
* "my name is Ada": remembered, and used when a reminder turn is presented

A reminder turn is answered by presenting its prompt(s) to the user. The
conversation is the session log's own turns (each input and reply, as the
reference host records them): :func:`earlier_turns` reads them back, so a
model built after a restart, or by a worker, knows what was said. Times
are shown as the tools give them (UTC), and in the viewer's zone (``zone``)
and, for an ``at`` given in a zone, in that zone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import msgspec

from tickler.adapters._times import UTC_ZONE, when_text
from tickler.adapters.offline._calendar_phrases import calendar_request
from tickler.core import parse_instant, resolve_zone
from tickler.shell import TURN, TURN_INPUT, SessionLog, TurnInput, TurnRecord

CallTool = Callable[[str, dict[str, Any]], Awaitable[str]]
Now = Callable[[], int]

_UNITS: Final = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60}
_UNITS.update({"h": 3600, "hour": 3600, "hr": 3600, "d": 86400, "day": 86400})
_AFTER: Final = re.compile(
    r"remind me in (\d+)\s*([a-z]+?)s?\b\s*(?:to |about |that )?(.+)", re.IGNORECASE
)
_AT: Final = re.compile(
    r"remind me at (\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s+([A-Za-z_]+(?:/[A-Za-z_+\-0-9]+)+|UTC))?"
    r"(?:\s+on (\d{4}-\d{2}-\d{2}))?\s*(?:to |about |that )?(.+)",
    re.IGNORECASE,
)
_EVERY: Final = re.compile(
    r"(?:remind me )?every (?:(\d+)\s*)?([a-z]+?)s?\b(?:\s*(?:to |about |that )?(.+))?",
    re.IGNORECASE,
)
_DELETE: Final = re.compile(r"(?:delete|cancel|remove)\s+(\S+)", re.IGNORECASE)
_NAME: Final = re.compile(r"(?:hi[,!.]?\s+)?my name is ([^\W\d_][\w'-]{0,40})\W*", re.IGNORECASE)
_TURN_INPUT: Final = msgspec.json.Decoder(TurnInput)
_TURN_RECORD: Final = msgspec.json.Decoder(TurnRecord)
_HELP: Final = (
    'I can set reminders: "remind me in 10 seconds to stretch", '
    '"remind me at 09:00 Europe/Berlin to call Anna", "every 5 minutes drink water", '
    '"every weekday at 9 to write notes", "list", "delete schedule-1".'
)


class OfflineModel:
    """``Model`` for the reference host: rules instead of an LLM."""

    def __init__(
        self,
        call_tool: CallTool,
        now_ms: Now,
        *,
        on_tool: Callable[[str, dict[str, Any], str], None] | None = None,
        zone: ZoneInfo | None = None,
        history: Sequence[tuple[TurnInput, str]] = (),
    ) -> None:
        self._call_tool = call_tool
        self._now_ms = now_ms
        self._on_tool = on_tool
        self._zone = zone
        self._name: str | None = None
        for turn, _ in history:  # the conversation so far: what it told us
            self._remember(turn)

    @property
    def name(self) -> str | None:
        """The user's name, once they said it."""
        return self._name

    async def __call__(self, turn: TurnInput) -> str:
        if turn.source == "reminder":
            told = present_reminder(turn.text)
            return told if self._name is None else told.replace(":", f" for {self._name}:", 1)
        if self._remember(turn):
            return f"Nice to meet you, {self._name}."
        return await self._respond(turn.text.strip())

    def _remember(self, turn: TurnInput) -> bool:
        if turn.source == "user" and (m := _NAME.fullmatch(turn.text.strip())):
            self._name = m.group(1)
            return True
        return False

    async def _tool(self, name: str, args: dict[str, Any]) -> dict[str, Any] | list[Any]:
        output = await self._call_tool(name, args)
        if self._on_tool is not None:
            self._on_tool(name, args, output)
        parsed: dict[str, Any] | list[Any] = json.loads(output)
        return parsed

    async def _respond(self, text: str) -> str:
        if m := _AT.fullmatch(text):
            return await self._create_at(m)
        if m := _AFTER.fullmatch(text):
            seconds = _seconds(m.group(1), m.group(2))
            if seconds is None:
                return _HELP
            return self._created(
                await self._tool(
                    "schedule_create", {"prompt": m.group(3), "after_seconds": seconds}
                )
            )
        if args := calendar_request(text, (self._zone or UTC_ZONE).key):
            return self._created_calendar(await self._tool("schedule_create", args))
        if m := _EVERY.fullmatch(text):
            seconds = _seconds(m.group(1) or "1", m.group(2))
            if seconds is None:
                return _HELP
            prompt = m.group(3) or text
            return self._created(
                await self._tool("schedule_create", {"prompt": prompt, "every_seconds": seconds})
            )
        if text.lower() in {"list", "list reminders", "what are my reminders?", "reminders"}:
            return self._listed(await self._tool("schedule_list", {}))
        if m := _DELETE.fullmatch(text):
            return _deleted(await self._tool("schedule_delete", {"id": m.group(1)}))
        return _HELP

    async def _create_at(self, m: re.Match[str]) -> str:
        zone_name = m.group(4) or "UTC"
        hour, minute, second = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
        date = m.group(5) or _next_date(self._now_ms(), zone_name, hour, minute, second)
        at = {"date": date, "time": f"{hour:02d}:{minute:02d}:{second:02d}", "time_zone": zone_name}
        created = await self._tool("schedule_create", {"prompt": m.group(6), "at": at})
        return self._created(created, resolve_zone(zone_name))

    def _when(self, scheduled_at: str, own: ZoneInfo | None = None) -> str:
        return when_text(parse_instant(scheduled_at), self._zone or UTC_ZONE, own)

    def _created(self, value: dict[str, Any] | list[Any], own: ZoneInfo | None = None) -> str:
        if isinstance(value, dict) and "id" in value:
            what = f"{value['id']} ({value['kind']})"
            when = self._when(value["scheduledAt"], own)
            return f"OK: {what} fires at {when}: {value['prompt']}"
        return f"Sorry, that did not work: {_message(value)}"

    def _created_calendar(self, value: dict[str, Any] | list[Any]) -> str:
        """The created answer, then its ``nextOccurrences``, each in UTC, in
        the rule's zone and in the viewer's."""
        if not isinstance(value, dict) or "nextOccurrences" not in value:
            return self._created(value)
        rule = value["calendar"]
        own = resolve_zone(rule["time_zone"])
        lines = [f"  {self._when(item['utc'], own)}" for item in value["nextOccurrences"]]
        return (
            f"OK: {value['id']} (calendar {rule['cron']} in {rule['time_zone']}): "
            f"{value['prompt']}\nNext {len(lines)}:\n" + "\n".join(lines)
        )

    def _listed(self, value: dict[str, Any] | list[Any]) -> str:
        if not isinstance(value, list):
            return f"Sorry, I could not list reminders: {_message(value)}"
        if not value:
            return "You have no active reminders."
        lines = [
            f"- {v['id']} ({_kind(v)}, {v['state']}) at {self._when(v['scheduledAt'], _own(v))}: "
            f"{v['prompt']}"
            for v in value
        ]
        return "Your reminders:\n" + "\n".join(lines)


def _kind(view: dict[str, Any]) -> str:
    """``calendar 0 9 * * 1-5`` for a calendar reminder, else its kind."""
    rule = view.get("calendar")
    return f"calendar {rule['cron']}" if isinstance(rule, dict) else str(view["kind"])


def _own(view: dict[str, Any]) -> ZoneInfo | None:
    """A calendar reminder's own zone (v1 records keep none)."""
    rule = view.get("calendar")
    return resolve_zone(rule["time_zone"]) if isinstance(rule, dict) else None


# More digits than any safe integer: such an amount is sent as 10**16, which
# the tools refuse as they refuse any amount past the safe range (Python's
# int() would refuse a string of thousands of digits outright).
_MAX_DIGITS: Final = 16


def _seconds(amount: str, unit: str) -> int | None:
    factor = _UNITS.get(unit.lower())
    if factor is None:
        return None
    digits = amount.lstrip("0")
    return (int(digits or "0") if len(digits) <= _MAX_DIGITS else 10**_MAX_DIGITS) * factor


def _next_date(now_ms: int, zone_name: str, hour: int, minute: int, second: int) -> str:
    """Today in the zone, or tomorrow when that time has passed."""
    try:
        zone = ZoneInfo(zone_name)
    except (ZoneInfoNotFoundError, ValueError):
        zone = ZoneInfo("UTC")  # the tool will reject the name itself
    local = datetime.fromtimestamp(now_ms / 1000, UTC).astimezone(zone)
    wanted = local.replace(hour=hour % 24, minute=minute % 60, second=second % 60, microsecond=0)
    if wanted <= local:
        wanted += timedelta(days=1)
    return wanted.date().isoformat()


def _deleted(value: dict[str, Any] | list[Any]) -> str:
    if isinstance(value, dict) and value.get("deleted") is True:
        return f"Deleted {value['id']}."
    if isinstance(value, dict) and value.get("deleted") is False:
        return f"There is no active reminder {value['id']}."
    return f"Sorry, that did not work: {_message(value)}"


def _message(value: dict[str, Any] | list[Any]) -> str:
    return str(value.get("message", value)) if isinstance(value, dict) else str(value)


def present_reminder(text: str) -> str:
    """The prompt(s) of a reminder turn's framing, for the user."""
    for line in text.splitlines():
        if line.startswith("reminder_prompt_json: "):
            return f"Reminder: {json.loads(line.split(': ', 1)[1])}"
        if line.startswith("reminders_json: "):
            items = json.loads(line.split(": ", 1)[1])
            return "Reminders: " + "; ".join(str(i["reminder_prompt"]) for i in items)
    return "Reminder."


def earlier_turns(log: SessionLog) -> list[tuple[TurnInput, str]]:
    """Every answered turn of the session so far, in order: its input and
    the reply (the reference host's ``tickler/turn-input`` and
    ``tickler/turn`` records)."""
    inputs: dict[int, TurnInput] = {}
    turns: list[tuple[TurnInput, str]] = []
    for event in log.events(log.header.owned_from):
        if event.type == TURN_INPUT:
            item = _TURN_INPUT.decode(event.data)
            inputs[item.n] = item
        elif event.type == TURN:
            record = _TURN_RECORD.decode(event.data)
            if record.input in inputs:
                turns.append((inputs[record.input], record.reply))
    return turns
