"""Arguments holding a number JSON cannot carry are refused, with no change.

``-0.0`` (JSON ``-0.0``/``-0e0``), an infinity (``1e400`` overflows to one)
and NaN are not lossless JSON: the reference's registry refuses such
arguments before the tool runs, wherever they sit. tickler answers one of the
ten closed codes (never ``internal_error``) and appends nothing, for any
tool, any state, and the value at any place in the arguments.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

from hypothesis import given
from hypothesis import strategies as st

from tickler.core import ERROR_CODES, handle
from tickler.core.wire._jsnum import holds_lossy_number
from tickler.testing.strategies import INSTANTS, Json, create_arguments, json_values

from .test_tool_outputs import valid_states

LOSSY: Final = st.sampled_from([-0.0, math.inf, -math.inf, math.nan, float("1e400")])
TOOLS: Final = st.sampled_from(["schedule_create", "schedule_list", "schedule_delete"])


def _plant(value: Json, lossy: float, path: list[int]) -> Json:
    """``value`` with ``lossy`` put somewhere inside it (chosen by ``path``)."""
    if not path:
        return lossy
    step, rest = path[0], path[1:]
    if isinstance(value, dict) and value and step % 3:
        key = sorted(value)[step % len(value)]
        return {**value, key: _plant(value[key], lossy, rest)}
    if isinstance(value, list) and value and step % 3:
        index = step % len(value)
        return [*value[:index], _plant(value[index], lossy, rest), *value[index + 1 :]]
    if isinstance(value, dict):
        return {**value, f"k{step}": lossy}
    if isinstance(value, list):
        return [*value, lossy]
    return [value, lossy]


@st.composite
def lossy_arguments(draw: st.DrawFn) -> Json:
    base = draw(
        st.one_of(
            json_values,
            create_arguments(0),
            st.fixed_dictionaries({"id": st.just("schedule-1")}),
            st.fixed_dictionaries({"date": st.just("2026-08-06"), "time": st.just("09:00:00")}).map(
                lambda at: {"prompt": "x", "at": at}
            ),
        )
    )
    lossy = draw(LOSSY)
    path = draw(st.lists(st.integers(0, 11), max_size=4))
    return _plant(base, lossy, path)


@given(valid_states(), TOOLS, lossy_arguments(), INSTANTS)
def test_lossy_numbers_anywhere_are_refused_without_change(
    state: Any, name: str, args: Json, now: int
) -> None:
    assert holds_lossy_number(args)
    changes, output = handle(state, name, args, now)
    assert changes == ()
    answer = json.loads(output)
    assert isinstance(answer, dict)
    assert answer["code"] in ERROR_CODES
    assert answer["code"] not in ("internal_error", "persistence_uncertain")


@given(json_values)
def test_only_lossy_numbers_are_lossy(value: Json) -> None:
    """The check sees exactly the values JSON cannot carry (``json_values``
    holds no NaN or infinity, so only -0.0 may be one)."""
    assert holds_lossy_number(value) == _has_negative_zero(value)
    if not _has_negative_zero(value):
        assert json.loads(json.dumps(value, allow_nan=False)) == value


def _has_negative_zero(value: Json) -> bool:
    if isinstance(value, float):
        return value == 0 and math.copysign(1.0, value) < 0
    if isinstance(value, dict):
        return any(_has_negative_zero(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_negative_zero(item) for item in value)
    return False
