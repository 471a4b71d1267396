"""JSON-number semantics, as the reference's JavaScript sees them.

Numbers follow JSON, not Python: ``30.0`` is the integer 30, ``True`` is never
a number, and integers beyond 2**53 - 1 are not "safe".
"""

from __future__ import annotations

import math
from typing import Final

MAX_SAFE_INTEGER: Final = 2**53 - 1


def is_number(value: object) -> bool:
    """Whether ``value`` is a JSON number (a bool is not)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def safe_integer(value: object) -> int | None:
    """The value as an int when it is a JavaScript safe integer, else None.

    Mirrors ``Number.isSafeInteger``: finite, integral, |x| <= 2**53 - 1.
    """
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
