"""A create with a ``request_id`` and a selector nested deeper than any
selector's value gets the closed error it gets without one (the digest of
its arguments is never attempted on a value no create could have logged),
and a retry of a known request id with such a value is "other arguments"."""

from __future__ import annotations

import json
from typing import Any, Final

import pytest

from tickler.core import EMPTY_STATE, evolve, handle, parse_instant

NOW: Final = parse_instant("2026-12-07T09:00:00.000Z")


def _nested_object(depth: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    node = root
    for _ in range(depth):
        node["x"] = {}
        node = node["x"]
    return root


def _nested_list(depth: int) -> list[Any]:
    root: list[Any] = []
    node = root
    for _ in range(depth):
        node.append([])
        node = node[0]
    return root


@pytest.mark.parametrize("selector", ["calendar", "at"])
@pytest.mark.parametrize(
    "value", [_nested_object(5000), _nested_list(5000)], ids=["object", "list"]
)
def test_a_deep_selector_with_a_request_id_gets_the_same_error_as_without(
    selector: str, value: object
) -> None:
    args = {"prompt": "p", selector: value}
    changes, plain = handle(EMPTY_STATE, "schedule_create", args, NOW)
    assert changes == ()
    changes, keyed = handle(EMPTY_STATE, "schedule_create", {**args, "request_id": "r"}, NOW)
    assert changes == ()
    assert json.loads(keyed) == json.loads(plain)
    assert json.loads(keyed)["code"] != "internal_error"


def test_a_known_request_id_retried_with_a_deep_selector_is_other_arguments() -> None:
    calendar = {"cron": "0 9 * * *", "time_zone": "Europe/Berlin"}
    args = {"prompt": "p", "calendar": calendar, "request_id": "r"}
    changes, _ = handle(EMPTY_STATE, "schedule_create", args, NOW)
    state = evolve(EMPTY_STATE, changes[0])
    deep = {**args, "calendar": _nested_object(5000)}
    changes, answer = handle(state, "schedule_create", deep, NOW)
    assert changes == ()
    refused = json.loads(answer)
    assert refused["code"] == "invalid_rule"
    assert refused["message"].startswith("request_id was already used with other arguments")


def test_a_shallow_nesting_is_still_digested_and_refused_as_before() -> None:
    """A value a little nested (not a selector's) still gets its own error,
    with and without a request id."""
    args = {"prompt": "p", "calendar": _nested_object(3)}
    _, plain = handle(EMPTY_STATE, "schedule_create", args, NOW)
    _, keyed = handle(EMPTY_STATE, "schedule_create", {**args, "request_id": "r"}, NOW)
    assert json.loads(keyed) == json.loads(plain)
