"""A cron field value of any size, in any of the five fields, gets a closed
answer that names the field (issue 25, item 3): through ``handle`` and
through a session's tools, never an exception and never ``internal_error``.

Python's ``int()`` refuses a string of more than 4,300 digits; the values
drawn here run to 10,000 digits, in every form a field takes (a number, a
range, a step, a list, ``nW``, ``wL``, ``w#k``) and as arbitrary text.
"""

from __future__ import annotations

import asyncio
import json
from typing import Final

from hypothesis import given
from hypothesis import strategies as st

from tickler.adapters.stores._memory import MemoryStore
from tickler.core import fold_changes, handle, parse_instant
from tickler.core._errors import shown
from tickler.shell._clock import VirtualClock
from tickler.shell._session import open_session
from tickler.shell._timers import TimerHeap

NOW: Final = parse_instant("2026-10-24T12:00:00.000Z")
FIELDS: Final = ("minute", "hour", "day-of-month", "month", "day-of-week")
VALID: Final = ("0", "9", "*", "*", "*")
MAX_MESSAGE: Final = 400  # a long value is shown cut short

long_numbers = st.builds(
    lambda zeros, digit, size, tail: zeros + digit * size + tail,
    st.sampled_from(["", "0", "000"]),
    st.sampled_from("0123456789"),
    st.integers(min_value=0, max_value=10_000),
    st.text("0123456789", max_size=4),
)
numbers = st.one_of(st.integers(min_value=0, max_value=100).map(str), long_numbers)
values = st.one_of(
    numbers,
    numbers.map(lambda n: f"*/{n}"),
    st.tuples(numbers, numbers).map("-".join),
    st.tuples(numbers, numbers, numbers).map(lambda t: f"{t[0]}-{t[1]}/{t[2]}"),
    st.lists(numbers, min_size=2, max_size=3).map(",".join),
    # L, W and # (day fields) in every field, with numbers of any size
    st.sampled_from(["L", "LW", "lw", "W", "L-", "#", "L#1"]),
    numbers.map(lambda n: f"{n}W"),
    numbers.map(lambda n: f"W{n}"),
    numbers.map(lambda n: f"L-{n}"),
    numbers.map(lambda n: f"{n}L"),
    numbers.map(lambda n: f"L{n}"),
    st.tuples(numbers, numbers).map("#".join),
    st.text(max_size=40).filter(lambda t: " " not in t and "\t" not in t),
)


def cron_with(index: int, value: str) -> str:
    fields = list(VALID)
    fields[index] = value
    return " ".join(fields)


def arguments(cron: str) -> dict[str, object]:
    return {"prompt": "p", "calendar": {"cron": cron, "time_zone": "UTC"}}


def assert_closed(text: str, index: int, value: str) -> None:
    """A created calendar reminder, or ``invalid_rule`` naming the field
    (and the value, when it is one item), in one short ASCII line."""
    answer = json.loads(text)
    if "code" not in answer:
        assert answer["kind"] == "calendar", answer
        return
    assert answer["code"] == "invalid_rule", answer
    message = answer["message"]
    assert message.isascii(), message
    assert "\n" not in message
    assert len(message) < MAX_MESSAGE, message
    if value == "":  # an empty field: the text is not five fields
        assert message.startswith('calendar cron "'), message
        return
    assert message.startswith(f"calendar cron {FIELDS[index]} "), message
    if "," not in value:
        assert f" {shown(value)} " in message, message


@given(st.integers(min_value=0, max_value=4), values)
def test_handle_answers_any_field_value_with_a_closed_code(index: int, value: str) -> None:
    _, text = handle(fold_changes(()), "schedule_create", arguments(cron_with(index, value)), NOW)
    assert_closed(text, index, value)


class _Quiet:
    """A host that never takes a turn (nothing here falls due)."""

    def claim_idle(self) -> None:
        return None

    async def when_idle(self) -> None:
        await asyncio.Event().wait()

    async def followup(self, message: object) -> None:
        raise AssertionError("no reminder falls due here")


async def _call(calls: list[str]) -> list[str]:
    """Each cron text through a real session's tools (memory store)."""
    clock = VirtualClock(NOW)
    store = MemoryStore()
    timers = TimerHeap(clock)
    try:
        async with open_session(
            store, "s1", host=lambda _session: _Quiet(), clock=clock, timers=timers
        ) as session:
            return [await session.tools.call_tool("schedule_create", arguments(c)) for c in calls]
    finally:
        await timers.close()
        await store.close()


@given(st.lists(st.tuples(st.integers(min_value=0, max_value=4), values), min_size=1, max_size=5))
def test_session_tools_answer_any_field_value_with_a_closed_code(
    drawn: list[tuple[int, str]],
) -> None:
    texts = asyncio.run(_call([cron_with(index, value) for index, value in drawn]))
    for (index, value), text in zip(drawn, texts, strict=True):
        assert_closed(text, index, value)
