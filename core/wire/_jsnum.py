"""JSON-number semantics, as the reference's JavaScript sees them.

Numbers follow JSON, not Python: ``30.0`` is the integer 30, ``True`` is never
a number, and integers beyond 2**53 - 1 are not "safe".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final

MAX_SAFE_INTEGER: Final = 2**53 - 1


def is_number(value: object) -> bool:
    """Whether ``value`` is a JSON number (a bool is not)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def safe_integer(value: object) -> int | None:
    """The value as an int when it is a JavaScript safe integer, else None.

    Mirrors ``Number.isSafeInteger``: finite, integral, |x| <= 2**53 - 1.
    """
    if type(value) is int:  # the usual case first
        return value if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        as_int = int(value)
        return as_int if -MAX_SAFE_INTEGER <= as_int <= MAX_SAFE_INTEGER else None
    return None


def is_safe_integer(value: object) -> bool:
    return safe_integer(value) is not None


def is_json_number(value: object) -> bool:
    """Whether ``value`` is a number JSON carries exactly (a bool is not; nor
    are NaN, the infinities and -0.0)."""
    if isinstance(value, float):
        return is_lossless(value)
    return is_number(value)


def is_lossless(value: float) -> bool:
    """Whether JSON can carry the float as it is: not NaN, not an infinity
    (``1e400`` overflows to one), not negative zero (JSON writes it as 0)."""
    return math.isfinite(value) and (value != 0 or math.copysign(1.0, value) > 0)


def beyond_double(value: int) -> bool:
    """Whether JavaScript reads the integer as an infinity: it rounds to a
    double beyond the largest one (written without an exponent, ``1`` and
    400 zeros is ``1e400``). Python's ``float()`` rounds the same way."""
    try:
        float(value)
    except OverflowError:
        return True
    return False


def holds_lossy_number(value: object) -> bool:
    """Whether a JSON-like value (dicts, lists, tuples and scalars) holds,
    anywhere at any depth, a number that JSON cannot carry exactly: a float
    :func:`is_lossless` refuses, or an integer JavaScript reads as an
    infinity (:func:`beyond_double`)."""
    pending: list[object] = [value]
    seen: set[int] = set()  # a Python caller may pass a cycle; JSON never does
    while pending:
        item = pending.pop()
        if isinstance(item, float):
            if not is_lossless(item):
                return True
        elif isinstance(item, int):
            if not isinstance(item, bool) and beyond_double(item):
                return True
        elif isinstance(item, Mapping | list | tuple) and id(item) not in seen:
            seen.add(id(item))
            pending.extend(item.values() if isinstance(item, Mapping) else item)
    return False
