"""(c) Any JSON as tool arguments gets one closed answer, never an exception.

Whatever a model sends to ``schedule_create``, ``schedule_list`` or
``schedule_delete``, ``handle`` answers JSON text that validates against that
tool's published ``output_schema``; it appends changes only when the call
succeeded, and those changes replay cleanly. ``internal_error`` (a bug, by
the reference's contract) never appears for a valid state.
"""

from __future__ import annotations

import json
from typing import Any, Final

from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from tickler.core import (
    EMPTY_STATE,
    CreateChange,
    DeleteChange,
    State,
    change_json,
    fold_changes,
    handle,
    tool_catalog,
)
from tickler.core.wire._jsnum import holds_lossy_number
from tickler.testing.strategies import (
    INSTANTS,
    MAX_MS,
    MAX_SAFE,
    MIN_MS,
    SCHEDULE_IDS,
    Json,
    create_arguments,
    json_values,
    padded_texts,
    valid_create_arguments,
    valid_logs,
)

CREATE: Final = "schedule_create"
LIST: Final = "schedule_list"
DELETE: Final = "schedule_delete"
VALIDATORS: Final = {
    tool["name"]: Draft202012Validator(tool["output_schema"])
    for tool in tool_catalog(profile="reference")
}


def test_the_catalog_schemas_are_valid_json_schemas() -> None:
    assert set(VALIDATORS) == {CREATE, LIST, DELETE}
    for tool in tool_catalog(profile="reference"):
        Draft202012Validator.check_schema(tool["output_schema"])
        Draft202012Validator.check_schema(tool["input_schema"])


@st.composite
def valid_states(draw: st.DrawFn) -> State:
    steps, _ = draw(valid_logs(max_steps=10))
    return fold_changes(step.change for step in steps)


@st.composite
def calls(draw: st.DrawFn) -> tuple[State, str, Json, int]:
    """A valid state, a tool, any arguments, and an in-range now."""
    state = draw(valid_states())
    now = draw(INSTANTS)
    name = draw(st.sampled_from([CREATE, LIST, DELETE]))
    known = [record.id for record in state.active] + list(state.seen_ids)
    ids = st.one_of(st.sampled_from(known), SCHEDULE_IDS) if known else SCHEDULE_IDS
    args = draw(
        st.one_of(
            json_values,
            st.none(),
            create_arguments(now),
            valid_create_arguments(now),
            st.fixed_dictionaries({"id": st.one_of(ids, padded_texts, json_values)}),
        )
    )
    return state, name, args, now


def _check_answer(state: State, name: str, args: Json, now: int) -> Any:
    changes, text = handle(state, name, args, now, profile="reference")
    out = json.loads(text)
    VALIDATORS[name].validate(out)
    if changes:
        # Whatever was appended must replay on top of the state.
        fold_changes(changes, state)
    succeeded = (name == CREATE and "kind" in out) or (
        name == DELETE and out.get("deleted") is True
    )
    if not succeeded:
        assert changes == (), "a call that did not succeed appended changes"
    return out, changes


@given(calls())
def test_any_arguments_get_a_schema_valid_answer(call: tuple[State, str, Json, int]) -> None:
    state, name, args, now = call
    out, changes = _check_answer(state, name, args, now)
    assert not (isinstance(out, dict) and out.get("code") == "internal_error")
    if name == LIST and (holds_lossy_number(args) or not isinstance(args, dict | None)):
        # refused, as the reference's registry refuses such arguments
        assert (out["code"], changes) == ("invalid_rule", ())
    elif name == LIST:
        assert changes == ()
        assert [view["id"] for view in out] == [record.id for record in state.active]
    elif name == CREATE:
        _check_create(out, changes)
    else:
        _check_delete(state, out, changes)


def _check_create(out: Any, changes: Any) -> None:
    if "code" in out:
        assert changes == ()
        return
    (change,) = changes
    assert isinstance(change, CreateChange)
    stored = json.loads(change_json(change))["schedule"]
    assert out == {**stored, "state": "scheduled", "deliveryMode": "session-local"}


def _check_delete(state: State, out: Any, changes: Any) -> None:
    if out.get("deleted") is True:
        assert changes == (DeleteChange(version=1, id=out["id"]),)
        assert state.get(out["id"]) is not None
    else:
        assert changes == ()
    if out.get("deleted") is False:
        assert state.get(out["id"]) is None


@given(
    valid_states(),
    st.sampled_from([CREATE, LIST, DELETE]),
    st.one_of(json_values, create_arguments(0), st.fixed_dictionaries({"id": SCHEDULE_IDS})),
    st.one_of(
        st.integers(-MAX_SAFE, MAX_SAFE),
        st.sampled_from([MIN_MS - 1, MAX_MS + 1, MAX_SAFE, -MAX_SAFE, MAX_SAFE + 1, 2**63]),
    ),
)
def test_any_clock_reading_gets_a_schema_valid_answer(
    state: State, name: str, args: Json, now: int
) -> None:
    """A clock beyond the representable range is answered, not raised."""
    out, _ = _check_answer(state, name, args, now)
    assert not (isinstance(out, dict) and out.get("code") == "internal_error")


@given(st.sampled_from([CREATE, LIST, DELETE]), json_values)
def test_an_empty_session_answers_too(name: str, args: Json) -> None:
    out, _ = _check_answer(EMPTY_STATE, name, args, 1_785_931_200_000)
    assert not (isinstance(out, dict) and out.get("code") == "internal_error")
    if name == LIST and isinstance(args, dict | None) and not holds_lossy_number(args):
        assert out == []
    elif name == LIST:
        assert out["code"] == "invalid_rule"
