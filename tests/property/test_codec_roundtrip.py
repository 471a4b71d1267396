"""(b) Every valid change survives encoding: bytes -> change -> bytes is exact.

The encoding is also checked against an independent reading of the v1
format: ``json.loads`` of the bytes is the expected object, keys in the
reference's order, non-ASCII kept as UTF-8 and lone surrogates escaped as
``JSON.stringify`` does.
"""

from __future__ import annotations

import json
import random
import re

from hypothesis import given
from hypothesis import strategies as st

from tickler.core import (
    AfterSchedule,
    CreateChange,
    CreateChangeV2,
    DeleteChange,
    DispatchChange,
    EverySchedule,
    ScheduleChange,
    change_json,
    decode_change,
    decode_change_value,
    encode_change,
)
from tickler.testing.strategies import CHANGES, LONE_SURROGATES, js_stringify

from .oracles import expected_json


@given(CHANGES)
def test_decode_inverts_encode(change: ScheduleChange) -> None:
    encoded = encode_change(change)
    assert decode_change(encoded) == change
    assert decode_change(encoded.decode("utf-8")) == change


@given(CHANGES)
def test_encoding_is_the_v1_json_object(change: ScheduleChange) -> None:
    encoded = encode_change(change)
    assert encoded == change_json(change).encode("utf-8")
    value = json.loads(encoded)
    expected = expected_json(change)
    assert value == expected
    assert list(value) == list(expected)
    if isinstance(change, CreateChange):
        assert list(value["schedule"]) == list(expected["schedule"])
    assert decode_change_value(value) == change


@given(CHANGES)
def test_strings_are_written_as_json_stringify_writes_them(change: ScheduleChange) -> None:
    text = encode_change(change).decode("utf-8")
    strings = (
        [change.schedule.id, change.schedule.prompt]
        if isinstance(change, CreateChange | CreateChangeV2)
        else [change.id]
    )
    for string in strings:
        assert js_stringify(string) in text
    # Compact: no whitespace between tokens (strings aside).
    assert not re.search(r"[{,:\[]\s|\s[}\],:]", _without_strings(text))


def _without_strings(text: str) -> str:
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)


@given(CHANGES, st.randoms(use_true_random=False), st.sampled_from([None, 0, 2, "\t"]))
def test_any_key_order_and_layout_decodes_to_the_same_change(
    change: ScheduleChange, rng: random.Random, indent: int | str | None
) -> None:
    value = json.loads(encode_change(change))
    shuffled = _shuffle_keys(value, rng)
    assert decode_change(json.dumps(shuffled, indent=indent).encode()) == change


@given(CHANGES)
def test_decode_reads_text_with_every_character_written_raw(change: ScheduleChange) -> None:
    """``decode_change`` takes ``str`` too: JSON text where non-ASCII and lone
    surrogates are written as themselves, which JavaScript's JSON.parse reads."""
    text = json.dumps(json.loads(encode_change(change)), ensure_ascii=False)
    assert decode_change(text) == change


def _shuffle_keys(value: object, rng: random.Random) -> object:
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _shuffle_keys(v, rng) for k, v in items}
    return value


@given(CHANGES, st.sampled_from(["{}.0", "{}e0", "{}.000", "{}0e-1"]))
def test_json_number_spellings_of_an_integer_are_that_integer(
    change: ScheduleChange, spelling: str
) -> None:
    """JSON numbers are JavaScript numbers: ``30.0`` is 30, ``1e0`` is 1."""
    text = encode_change(change).decode("utf-8")
    respelled = text.replace('"version":1', '"version":' + spelling.format(1), 1)
    if isinstance(change, CreateChange):
        record = change.schedule
        # Below 2**53 every such spelling is exactly the integer as a double.
        if isinstance(record, AfterSchedule):
            old = f'"afterSeconds":{record.after_seconds}'
            new = '"afterSeconds":' + spelling.format(record.after_seconds)
            respelled = respelled.replace(old, new, 1)
        if isinstance(record, EverySchedule):
            old = f'"everySeconds":{record.every_seconds}'
            new = '"everySeconds":' + spelling.format(record.every_seconds)
            respelled = respelled.replace(old, new, 1)
    assert decode_change(respelled.encode("utf-8")) == change


@given(
    st.sampled_from(["\U0001f600", "\U00010000", "\U0010ffff", "\U0001d11e"]), st.text(max_size=3)
)
def test_a_surrogate_pair_encodes_as_the_character_it_spells(astral: str, around: str) -> None:
    """A JavaScript string is UTF-16: a high+low surrogate sequence in a
    Python str and the astral character it spells are one JavaScript string,
    so they encode to the same bytes."""
    code = ord(astral) - 0x10000
    high, low = chr(0xD800 + (code >> 10)), chr(0xDC00 + (code & 0x3FF))
    split = DeleteChange(version=1, id=f"a{around}{high}{low}z")
    joined = DeleteChange(version=1, id=f"a{around}{astral}z")
    assert encode_change(split) == encode_change(joined)


def test_lone_surrogates_are_escaped_in_lower_case() -> None:
    for surrogate in LONE_SURROGATES:
        text = encode_change(DispatchChange(version=1, id=f"a{surrogate}b")).decode("ascii")
        assert f"\\u{ord(surrogate):04x}" in text
