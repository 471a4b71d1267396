"""The runtime's own log records, beside the reference's ``schedule/change``.

``tickler/followup`` is the outbox: appended in ONE atomic batch with the
dispatch change(s) it delivers, and flushed before the host hears of it.
``tickler/delivered`` says the host took it. A follow-up without a matching
``delivered`` is handed over again after a restart, with the same key.
``tickler/followup-failed`` records a hand-over the host refused (it is
retried; the record only makes a stuck follow-up visible). Its ``attempt``
counts the failures of that follow-up so far, across runtimes; records are
written at the 1st, 2nd, 4th, 8th... failure.
"""

from __future__ import annotations

import json
import re
from typing import Final, NamedTuple, TypeVar, cast

import msgspec

from tickler.core import Delivery, Occurrence, js_string
from tickler.shell._host import FollowUp

FOLLOWUP: Final = "tickler/followup"
DELIVERED: Final = "tickler/delivered"
T = TypeVar("T")


class _OccurrenceRecord(msgspec.Struct, frozen=True, rename="camel"):
    id: str
    occurrence_at: str
    prompt: str


class FollowUpRecord(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    key: str
    text: str
    occurrences: tuple[_OccurrenceRecord, ...]


class DeliveredRecord(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    key: str


_FOLLOWUP_DECODER: Final = msgspec.json.Decoder(FollowUpRecord)
_DELIVERED_DECODER: Final = msgspec.json.Decoder(DeliveredRecord)


def followup_for(delivery: Delivery) -> FollowUp:
    return FollowUp(delivery.occurrences[0].key, delivery.text, delivery.occurrences)


def encode_followup(message: FollowUp) -> bytes:
    # Written with the JSON.stringify rules, so a prompt holding a lone
    # surrogate (valid in a JavaScript string) still makes valid UTF-8.
    occurrences = ",".join(
        f'{{"id":{js_string(o.id)},"occurrenceAt":"{o.occurrence_at}",'
        f'"prompt":{js_string(o.prompt)}}}'
        for o in message.occurrences
    )
    return (
        f'{{"key":{js_string(message.key)},"text":{js_string(message.text)},'
        f'"occurrences":[{occurrences}]}}'
    ).encode()


def _decode(decoder: msgspec.json.Decoder[T], data: bytes | msgspec.Raw) -> T:
    try:
        return decoder.decode(data)
    except msgspec.DecodeError:
        # msgspec refuses lone-surrogate escapes; the stdlib reads them.
        return cast(T, msgspec.convert(json.loads(bytes(data)), decoder.type))


def decode_followup(data: bytes | msgspec.Raw) -> FollowUp:
    record = _decode(_FOLLOWUP_DECODER, data)
    occurrences = tuple(Occurrence(o.id, o.occurrence_at, o.prompt) for o in record.occurrences)
    return FollowUp(record.key, record.text, occurrences)


def encode_delivered(key: str) -> bytes:
    return f'{{"key":{js_string(key)}}}'.encode()


def decode_delivered(data: bytes | msgspec.Raw) -> str:
    return _decode(_DELIVERED_DECODER, data).key


# -- failures, kept visible -------------------------------------------------

FOLLOWUP_FAILED: Final = "tickler/followup-failed"
ERROR_TEXT_MAX: Final = 500


class FollowUpFailedRecord(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A hand-over of follow-up ``key`` failed; ``attempt`` counts its
    failures so far (the log keeps the 1st, 2nd, 4th, 8th...). Runtimes
    before 2026-12 counted from 1 again in each runtime."""

    key: str
    attempt: int
    error: str


class FailureCount(NamedTuple):
    """The failed hand-overs of one follow-up: ``total`` of them, the last
    with ``error``. A record whose ``attempt`` is not above the one before
    was written by a runtime that counted from 1 again (before 2026-12):
    the runs add up (``earlier``), and later records go on from the latest
    run's number, so that reading stays right."""

    earlier: int = 0  # the failures of the runs before the latest
    last: int = 0  # the latest run's count (its latest ``attempt``)
    error: str | None = None

    @property
    def total(self) -> int:
        return self.earlier + self.last

    def recorded(self, attempt: int, error: str) -> FailureCount:
        """After a ``tickler/followup-failed`` record of ``attempt``."""
        earlier = self.earlier + self.last if attempt <= self.last else self.earlier
        return FailureCount(earlier, attempt, error)

    def failed(self, error: str) -> FailureCount:
        """After one more failure (its record's ``attempt`` is ``last``)."""
        return FailureCount(self.earlier, self.last + 1, error)

    def at_least(self, total: int) -> FailureCount:
        """Raised to ``total`` failures when another count knows more."""
        if total <= self.total:
            return self
        return FailureCount(self.earlier, total - self.earlier, self.error)


_FOLLOWUP_FAILED_DECODER: Final = msgspec.json.Decoder(FollowUpFailedRecord)


_CONTROL: Final = re.compile("[\x00-\x1f\x7f-\x9f]")


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def error_text(error: BaseException) -> str:
    """``"<ExcType>: <message>"`` on one bounded line (no traceback)."""
    message = str(error)
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    text = _CONTROL.sub(_escape, " ".join(text.split()))  # inert on a terminal
    return text if len(text) <= ERROR_TEXT_MAX else text[: ERROR_TEXT_MAX - 1] + "\u2026"


def encode_followup_failed(key: str, attempt: int, error: str) -> bytes:
    return f'{{"key":{js_string(key)},"attempt":{attempt},"error":{js_string(error)}}}'.encode()


def decode_followup_failed(data: bytes | msgspec.Raw) -> FollowUpFailedRecord:
    return _decode(_FOLLOWUP_FAILED_DECODER, data)
