"""The conversation window and the log-kept item list the framework hosts
share: the window holds the newest whole turns within its size, never
starts inside a turn, and is the same live and read back; changes are
events appended (never a rewrite), at once on their own, or staged into a
host's turn and dropped when that turn is not recorded."""

from __future__ import annotations

import json

import pytest

from tickler.adapters.frameworks._conversation import (
    LogList,
    Window,
    check_window,
    json_bytes,
    json_value,
)
from tickler.adapters.stores._memory import MemoryLog
from tickler.core import SessionHeader
from tickler.shell._ports import NewEvent

# A turn starts at an upper-case item: "A", then its tool call "a1" and result "a2"...
TURNS = [["A", "a1", "a2", "a3"], ["B"], ["C", "c1"], ["D", "d1", "d2"]]


def starts(item: object) -> bool:
    return isinstance(item, str) and item.isupper()


def window_of(size: int | None, turns: list[list[str]]) -> list[str]:
    window: Window[str] = Window(size, starts)
    for turn in turns:
        window.extend(turn)
    return window.items


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        (None, ["A", "a1", "a2", "a3", "B", "C", "c1", "D", "d1", "d2"]),
        (10, ["A", "a1", "a2", "a3", "B", "C", "c1", "D", "d1", "d2"]),
        (9, ["B", "C", "c1", "D", "d1", "d2"]),  # never "a1"...: whole turns only
        (6, ["B", "C", "c1", "D", "d1", "d2"]),
        (5, ["C", "c1", "D", "d1", "d2"]),
        (4, ["D", "d1", "d2"]),
        (3, ["D", "d1", "d2"]),
        (2, []),  # the newest turn alone is longer: nothing rather than half of it
    ],
)
def test_the_window_is_the_newest_whole_turns_within_its_size(
    size: int | None, expected: list[str]
) -> None:
    assert window_of(size, TURNS) == expected


def test_a_long_conversation_keeps_its_window_and_bounded_memory() -> None:
    window: Window[str] = Window(5, starts)
    for n in range(1_000):
        window.extend([f"T{n}", f"t{n}"])
        assert len(window._items) <= 10  # at most twice the size, however long
    assert window.items == ["T998", "t998", "T999", "t999"]


def test_check_window_refuses_what_is_no_size() -> None:
    assert check_window(None) is None
    assert check_window(1) == 1
    for bad in (0, -1, 2.5, True, "5"):
        with pytest.raises(ValueError, match="window must be"):
            check_window(bad)  # type: ignore[arg-type]


def test_json_bytes_keeps_a_lone_surrogate_readable() -> None:
    value = {"text": "caf\u00e9 \ud800", "n": [1, 2]}
    data = json_bytes(value)
    assert b"\n" not in data
    assert json_value(data) == value
    assert json_bytes({"text": "caf\u00e9"}) == '{"text":"caf\u00e9"}'.encode()


def new_log() -> MemoryLog:
    return MemoryLog(SessionHeader(id="s1", created_at=1))


def items_list(log: MemoryLog, size: int | None = 4) -> LogList:
    return LogList(
        log,
        added="fw/items",
        popped="fw/pop",
        cleared="fw/clear",
        key="items",
        window=size,
        starts_turn=starts,
    )


def logged(log: MemoryLog) -> list[tuple[str, object]]:
    return [(e.type, json.loads(bytes(e.data))) for e in log.events()]


def test_changes_are_events_appended_and_read_back_the_same() -> None:
    log = new_log()
    items = items_list(log)
    items.add(["A", "a1"])
    items.add(["B", "b1", "b2"])
    assert items.pop() == "b2"
    items.add(["C"])
    before = logged(log)
    assert before == [
        ("fw/items", {"items": ["A", "a1"]}),
        ("fw/items", {"items": ["B", "b1", "b2"]}),
        ("fw/pop", {}),
        ("fw/items", {"items": ["C"]}),
    ]
    assert items.items == ["B", "b1", "C"]
    assert items_list(log).items == items.items  # read back: the same window
    items.clear()
    assert items.items == []
    assert items.pop() is None  # nothing to pop: nothing written
    assert logged(log) == [*before, ("fw/clear", {})]  # appended, never rewritten
    assert items_list(log).items == []
    items.add(["D"])
    assert items_list(log).items == ["D"]


def test_a_host_turn_stages_its_changes_into_one_batch() -> None:
    log = new_log()
    items = items_list(log, None)
    items.add(["A"])
    items.begin()
    items.add(["B"])
    items.add(["b1"])  # the SDK adds a turn's input, then its output
    assert items.items == ["A", "B", "b1"]  # seen at once by the run
    assert logged(log) == [("fw/items", {"items": ["A"]})]  # not written yet
    events, commit = items.take()
    assert events == [("fw/items", b'{"items":["B","b1"]}')]
    commit()
    items.begin()  # nothing to roll back: the last turn was kept
    assert items.items == ["A", "B", "b1"]


def test_an_unrecorded_turn_s_changes_are_dropped() -> None:
    log = new_log()
    items = items_list(log, None)
    items.add(["A"])
    items.begin()
    items.add(["B"])
    items.pop()
    items.pop()
    assert items.items == []
    items.take()  # its batch was never appended: no commit
    items.begin()  # the next turn starts from before it
    assert items.items == ["A"]
    items.add(["C"])
    items.rollback()  # a turn that failed
    assert items.items == ["A"]
    assert logged(log) == [("fw/items", {"items": ["A"]})]


def test_a_malformed_record_names_its_event() -> None:
    log = new_log()
    items_list(log).add(["A"])
    log.append([NewEvent("fw/items", b'{"items":"A"}', 1)])
    with pytest.raises(ValueError, match="session log event 1: malformed fw/items record"):
        items_list(log)
