"""ECMAScript text rules: ``String.prototype.trim`` and ``JSON.stringify``.

The reference trims with ECMAScript's WhiteSpace + LineTerminator set, which
differs from Python's ``str.strip``; and it writes JSON with
``JSON.stringify``, which differs from ``json.dumps`` (lone surrogates,
non-ASCII). Each rule is checked through the public API.
"""

from __future__ import annotations

import json

import pytest
from returns.result import Failure

from tickler.core import (
    EMPTY_STATE,
    CorruptScheduleLog,
    Occurrence,
    ScheduleError,
    change_json,
    decode_change,
    every_batch_framing,
    handle,
    one_shot_framing,
    render,
)

NOW = 1_785_931_200_000  # 2026-08-05T12:00:00.000Z

# ECMA-262 WhiteSpace and LineTerminator code points: what trim() removes.
ES_WHITESPACE = [
    "\t", "\n", "\v", "\f", "\r", " ", "\u00a0", "\u1680",
    *(chr(c) for c in range(0x2000, 0x200B)),
    "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff",
]  # fmt: skip
# Python's str.strip() removes these too, ECMAScript's trim() does not.
PYTHON_ONLY_WHITESPACE = ["\x1c", "\x1d", "\x1e", "\x1f", "\x85"]
# Neither strips these (they are not whitespace for either since Unicode 6.3).
NOT_WHITESPACE = ["\u180e", "\u200b", "\u2060", "\x00"]


def _name(ch: str) -> str:
    return f"U+{ord(ch):04X}"


def test_the_sets_differ_as_documented() -> None:
    assert all(ch.strip() == "" for ch in PYTHON_ONLY_WHITESPACE)
    assert "\ufeff".strip() == "\ufeff"  # Python keeps the BOM; ECMAScript trims it


def _create_after(prompt: str) -> str:
    _, output = handle(
        EMPTY_STATE,
        "schedule_create",
        {"prompt": prompt, "after_seconds": 1},
        NOW,
        profile="reference",
    )
    return output


def _stored_prompt(prompt: str) -> str:
    changes, output = handle(
        EMPTY_STATE,
        "schedule_create",
        {"prompt": prompt, "after_seconds": 1},
        NOW,
        profile="reference",
    )
    assert len(changes) == 1, output
    value: str = json.loads(output)["prompt"]
    return value


@pytest.mark.parametrize("ch", ES_WHITESPACE, ids=_name)
def test_tool_prompt_is_trimmed_of_ecmascript_whitespace(ch: str) -> None:
    assert _stored_prompt(f"{ch}{ch}check{ch}logs{ch}") == f"check{ch}logs"


@pytest.mark.parametrize("ch", ES_WHITESPACE, ids=_name)
def test_tool_prompt_of_only_ecmascript_whitespace_is_blank(ch: str) -> None:
    assert json.loads(_create_after(ch * 3)) == {
        "code": "invalid_prompt",
        "message": "prompt must be non-empty after trimming.",
    }


@pytest.mark.parametrize("ch", PYTHON_ONLY_WHITESPACE + NOT_WHITESPACE, ids=_name)
def test_tool_prompt_keeps_what_ecmascript_does_not_trim(ch: str) -> None:
    assert _stored_prompt(f" {ch}x{ch} ") == f"{ch}x{ch}"
    assert _stored_prompt(ch) == ch


def _create_payload(prompt: str, schedule_id: str = "schedule-1") -> bytes:
    record = {
        "id": schedule_id,
        "kind": "at",
        "prompt": prompt,
        "scheduledAt": "2026-08-06T01:00:00.000Z",
    }
    return json.dumps({"version": 1, "operation": "create", "schedule": record}).encode()


@pytest.mark.parametrize("ch", ES_WHITESPACE, ids=_name)
def test_durable_prompt_and_id_must_be_already_trimmed(ch: str) -> None:
    with pytest.raises(CorruptScheduleLog) as prompt_error:
        decode_change(_create_payload(f"x{ch}"))
    assert prompt_error.value.reason == "at prompt must be non-empty and already trimmed"
    with pytest.raises(CorruptScheduleLog) as id_error:
        decode_change(_create_payload("x", f"{ch}schedule-1"))
    assert id_error.value.reason == (
        "schedule id must be a non-empty string without surrounding whitespace"
    )


@pytest.mark.parametrize("ch", PYTHON_ONLY_WHITESPACE + NOT_WHITESPACE, ids=_name)
def test_durable_prompt_and_id_may_end_in_non_ecmascript_whitespace(ch: str) -> None:
    change = decode_change(_create_payload(f"{ch}x{ch}", f"{ch}id{ch}"))
    record = json.loads(change_json(change))["schedule"]
    assert (record["id"], record["prompt"]) == (f"{ch}id{ch}", f"{ch}x{ch}")


@pytest.mark.parametrize("ch", ES_WHITESPACE, ids=_name)
def test_delete_id_padded_with_ecmascript_whitespace_is_invalid(ch: str) -> None:
    changes, output = handle(
        EMPTY_STATE, "schedule_delete", {"id": f"schedule-1{ch}"}, NOW, profile="reference"
    )
    assert changes == ()
    assert output == (
        '{"code":"invalid_rule",'
        '"message":"schedule_delete id must be non-empty without surrounding whitespace."}'
    )


@pytest.mark.parametrize("ch", PYTHON_ONLY_WHITESPACE + NOT_WHITESPACE, ids=_name)
def test_delete_id_ending_in_other_characters_is_looked_up(ch: str) -> None:
    _, output = handle(
        EMPTY_STATE, "schedule_delete", {"id": f"schedule-1{ch}"}, NOW, profile="reference"
    )
    assert json.loads(output) == {
        "id": f"schedule-1{ch}",
        "deleted": False,
        "code": "schedule_not_found",
    }


@pytest.mark.parametrize("ch", ES_WHITESPACE, ids=_name)
def test_time_zone_padded_with_ecmascript_whitespace_is_invalid(ch: str) -> None:
    at = {"date": "2026-08-06", "time": "09:00:00", "time_zone": f"UTC{ch}"}
    _, output = handle(
        EMPTY_STATE, "schedule_create", {"prompt": "x", "at": at}, NOW, profile="reference"
    )
    assert json.loads(output) == {
        "code": "invalid_time_zone",
        "message": "time_zone must be UTC or a valid IANA Area/Location name.",
    }


# ----------------------------------------------------------- JSON.stringify

_SHORT_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _stringify_control(ch: str) -> str:
    """ECMA-262 QuoteJSONString for a code point below U+0020."""
    return _SHORT_ESCAPES.get(ch, f"\\u{ord(ch):04x}")


CONTROL_CHARACTERS = [chr(c) for c in range(0x20)]
# Escaped by JSON.stringify -> exact escape text. Lone surrogates (a high
# alone, a low alone, a low then a high) are written as lower-case escapes.
ESCAPED = [
    *((ch, _stringify_control(ch)) for ch in CONTROL_CHARACTERS),
    ('"', '\\"'),
    ("\\", "\\\\"),
    *((chr(c), f"\\u{c:04x}") for c in (0xD800, 0xDBFF, 0xDC00, 0xDFFF)),
    (chr(0xDC00) + chr(0xD800), "\\udc00\\ud800"),
]
# Written as-is by JSON.stringify (json.dumps would escape some of these).
VERBATIM = ["/", "\x7f", "\x80", "\u00e9", "\u2028", "\u2029", "\ufeff", "会議", "\U0001f389"]


def _framing_prompt_line(prompt: str) -> str:
    text = one_shot_framing(Occurrence("schedule-1", "2026-08-06T01:00:00.000Z", prompt))
    return text.split("\n")[-1]


@pytest.mark.parametrize(("raw", "escaped"), ESCAPED, ids=repr)
def test_escaped_characters(raw: str, escaped: str) -> None:
    prompt = f"a{raw}b"
    assert _framing_prompt_line(prompt) == f'reminder_prompt_json: "a{escaped}b"'
    batch = every_batch_framing([Occurrence("x", "2026-08-06T01:00:00.000Z", prompt)])
    assert batch.split("\n")[-1] == (
        'reminders_json: [{"schedule_id":"x","occurrence_at":"2026-08-06T01:00:00.000Z",'
        f'"reminder_prompt":"a{escaped}b"}}]'
    )
    error = ScheduleError(code="persistence_uncertain", message="m", operation="delete", id=prompt)
    assert render(Failure(error)) == (
        f'{{"code":"persistence_uncertain","message":"m","operation":"delete","id":"a{escaped}b"}}'
    )


@pytest.mark.parametrize("raw", VERBATIM, ids=repr)
def test_verbatim_characters(raw: str) -> None:
    assert _framing_prompt_line(f"a{raw}b") == f'reminder_prompt_json: "a{raw}b"'
    _, output = handle(
        EMPTY_STATE, "schedule_delete", {"id": f"a{raw}b"}, NOW, profile="reference"
    )  # a miss echoes the id
    assert output == f'{{"id":"a{raw}b","deleted":false,"code":"schedule_not_found"}}'


def test_adjacent_surrogate_code_points_form_one_character() -> None:
    # A JavaScript string is UTF-16: a high then a low surrogate is one character.
    assert _framing_prompt_line("\ud83c\udf89") == 'reminder_prompt_json: "\U0001f389"'


def test_outputs_are_utf8_encodable() -> None:
    output = _create_after("a\ud800b")
    assert output.encode("utf-8").decode("utf-8") == output
    assert '"prompt":"a\\ud800b"' in output
