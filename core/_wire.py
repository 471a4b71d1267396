"""The fast path of ``decode_change``: msgspec decodes straight into the
model's types (in C), then the rulebook (:mod:`tickler.core._rules`) judges
the values.

Anything that fails here is handed to the exact path, which alone decides
the rejection and its reason; this path only ever accepts what the exact
path accepts, with the same result.
"""

from __future__ import annotations

from typing import Final

import msgspec
from msgspec import UnsetType

from tickler.core._model import (
    CreateChange,
    DeleteChange,
    DispatchChange,
    ScheduleChange,
    V1Change,
)
from tickler.core._rules import Breach, id_breach, instant_rule, record_rule

# Version 1 only: a version-2 change always takes the exact path.
DECODER: Final[msgspec.json.Decoder[V1Change]] = msgspec.json.Decoder(V1Change)
_MANY: Final[msgspec.json.Decoder[list[V1Change]]] = msgspec.json.Decoder(list[V1Change])
_SPANS: Final[msgspec.json.Decoder[list[msgspec.Raw]]] = msgspec.json.Decoder(list[msgspec.Raw])


def obeys_rules(change: ScheduleChange) -> bool:
    """Whether a change decoded to its types keeps every field rule."""
    match change:
        case CreateChange(schedule=record):
            return not isinstance(record_rule(record), Breach)
        case DeleteChange(id=schedule_id):
            return id_breach(schedule_id) is None
        case DispatchChange(id=schedule_id, accepted_at=accepted_at):
            if id_breach(schedule_id) is not None:
                return False
            return isinstance(accepted_at, UnsetType) or not isinstance(
                instant_rule(accepted_at), Breach
            )
        case _:  # a version-2 change: never decoded here
            return False


def fast_decode(raw: bytes | str | msgspec.Raw) -> ScheduleChange | None:
    """The change, or None when only the exact path can say."""
    try:
        change = DECODER.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeEncodeError, RecursionError):
        # (a str holding a lone surrogate cannot become UTF-8; deep nesting
        # is left to the exact path, which reads any depth)
        return None
    return change if obeys_rules(change) else None


def decode_many(raws: list[msgspec.Raw]) -> list[V1Change] | None:
    """Many payloads decoded to their types in one call (the per-call cost
    dominates small payloads), without the field rules: the caller judges
    what it uses. None when any payload does not fit the types, or is not
    exactly one JSON value (a hand-built payload of two values, or half of
    one, would otherwise read as other changes once joined)."""
    joined = b"".join((b"[", b",".join(raws), b"]"))  # (one copy of the chunk fewer than +)
    try:
        # The values' spans as long as the payloads, in order, with only the
        # commas between them: each value is its payload.
        if list(map(len, _SPANS.decode(joined))) != list(map(len, raws)):
            return None
        return _MANY.decode(joined)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
