"""The state image a snapshot holds reads back as the state it was made of,
for any valid log: prompts with lone surrogates (a JavaScript string may
hold one), non-ASCII text and every record kind included."""

from __future__ import annotations

from hypothesis import given

from tickler.core import EMPTY_STATE, CreateChange, fold_changes
from tickler.core._model import AfterSchedule
from tickler.core._snapshot import decode_state, encode_state
from tickler.testing.strategies import Book, Step, valid_logs


@given(valid_logs())
def test_a_state_image_reads_back_as_its_state(log: tuple[list[Step], Book]) -> None:
    steps, _ = log
    state = fold_changes([step.change for step in steps], EMPTY_STATE)
    assert decode_state(encode_state(state)) == state


def test_a_lone_surrogate_is_written_as_an_ascii_escape() -> None:
    record = AfterSchedule("schedule-1", "a\udc00b", 60, "2026-08-05T12:01:00.000Z")
    state = fold_changes([CreateChange(version=1, schedule=record)], EMPTY_STATE)
    image = encode_state(state)
    assert b"a\\udc00b" in image
    assert decode_state(image) == state
