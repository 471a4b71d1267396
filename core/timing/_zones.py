"""IANA zones from the pinned ``tzdata`` package, never the host.

Reading the wheel's zone files is reading constant package data: the same
bytes on every machine for one pinned version, so results stay a pure
function of the inputs. Names resolve like ``Intl.DateTimeFormat``: exactly
``UTC`` or an ``Area/Location`` name, links and any letter case accepted.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from functools import cache
from importlib import resources
from typing import Final
from zoneinfo import ZoneInfo

import tzdata

from tickler.core.wire import es_trim

IANA_ZONE_PATTERN: Final = r"^[A-Za-z][A-Za-z0-9_+.-]*(?:/[A-Za-z0-9_+.-]+)+$"
_IANA_ZONE: Final = re.compile(IANA_ZONE_PATTERN, re.ASCII)
TZDATA_VERSION: Final[str] = tzdata.IANA_VERSION
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_EDGE_PROBE_MS: Final = 3 * 86_400_000


@cache
def _names_by_folded_case() -> dict[str, str]:
    listing = resources.files("tzdata").joinpath("zones").read_text(encoding="utf-8")
    return {name.lower(): name for name in listing.split()}


@cache
def _load(key: str) -> ZoneInfo:
    path = resources.files("tzdata.zoneinfo").joinpath(*key.split("/"))
    with path.open("rb") as data:
        return ZoneInfo.from_file(data, key=key)


@cache
def tzif_bytes(key: str) -> bytes:
    """The pinned TZif file of a zone that :func:`resolve_zone` resolved."""
    return resources.files("tzdata.zoneinfo").joinpath(*key.split("/")).read_bytes()


def resolve_zone(name: str) -> ZoneInfo | None:
    """The zone a ``time_zone`` value names, or None when it names none."""
    if not name or es_trim(name) != name:
        return None
    if name != "UTC" and _IANA_ZONE.match(name) is None:
        return None
    key = _names_by_folded_case().get(name.lower())
    return None if key is None else _load(key)


def zone_by_key(key: str) -> ZoneInfo | None:
    """The pinned zone whose key is exactly ``key`` (any tzdata name, such as
    ``Etc/UTC``, ``CET`` or ``EST5EDT``), or None."""
    return _load(key) if _names_by_folded_case().get(key.lower()) == key else None


def utc_offset_ms(zone: ZoneInfo, instant_ms: int) -> int:
    """The zone's UTC offset (ms, seconds precision) at one instant.

    Near years 1 and 9999 the local reading can leave ``datetime``'s range;
    no zone changes offset in those first or last days, so probe inside.
    """
    try:
        local = (_EPOCH + timedelta(milliseconds=instant_ms)).astimezone(zone)
    except OverflowError:
        inward = _EDGE_PROBE_MS if instant_ms < 0 else -_EDGE_PROBE_MS
        local = (_EPOCH + timedelta(milliseconds=instant_ms + inward)).astimezone(zone)
    offset = local.utcoffset()
    assert offset is not None  # an aware datetime from astimezone always has one
    return offset // timedelta(milliseconds=1)
