"""Instants for people: the UTC text the log keeps, plus the same instant in
the viewer's zone and, when a reminder carries one, in its own zone.

The viewer's zone is this machine's (:func:`local_zone`); zone data always
comes from the pinned ``tzdata`` package, as everywhere in tickler, so only
the choice of zone depends on the host.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Final
from zoneinfo import ZoneInfo

from tickler.core import format_instant, resolve_zone, zone_by_key

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_LOCALTIME: Final = Path("/etc/localtime")
_TIMEZONE_FILE: Final = Path("/etc/timezone")
UTC_ZONE: Final = zone_by_key("UTC") or ZoneInfo("UTC")


def zone_named(name: str) -> ZoneInfo | None:
    """The pinned zone ``name`` stands for: a tzdata key (``CET``,
    ``Etc/UTC``), an IANA name in any letter case, or a path into a zoneinfo
    folder (``/usr/share/zoneinfo/Europe/Berlin``, ``posix/`` and ``right/``
    variants too); None when it names none."""
    name = name.strip().removeprefix(":")
    if "zoneinfo/" in name:
        name = name.rsplit("zoneinfo/", 1)[1]
        for variant in ("posix/", "right/"):
            name = name.removeprefix(variant)
    if not name:
        return None
    return zone_by_key(name) or resolve_zone(name)


def local_zone(
    environ: Mapping[str, str] | None = None,
    localtime: Path = _LOCALTIME,
    timezone_file: Path = _TIMEZONE_FILE,
) -> ZoneInfo:
    """This machine's zone, as the C library would pick it: the ``TZ``
    variable when set (empty, or a POSIX rule such as ``UTC0`` that names
    no zone, is UTC), else the zone ``/etc/localtime`` links to, else the
    name in ``/etc/timezone``, else UTC. Never raises."""
    environ = os.environ if environ is None else environ
    tz = environ.get("TZ")
    if tz is not None:
        return zone_named(tz) or UTC_ZONE
    found = _linked_zone(localtime)
    if found is None:
        try:
            first = timezone_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            first = []
        found = zone_named(first[0]) if first else None
    return found or UTC_ZONE


def _linked_zone(localtime: Path) -> ZoneInfo | None:
    """The zone a ``/etc/localtime`` link points at: its target names it
    (``/usr/share/zoneinfo/Europe/Berlin``, relative too), else the file it
    finally resolves to."""
    try:
        target = str(localtime.readlink())
        return zone_named(target) or zone_named(os.path.realpath(localtime))
    except OSError:  # not a link (a copy), or missing
        return None


def _moment(instant_ms: int, zone: ZoneInfo) -> datetime | None:
    """The wall time in ``zone``; None when it falls outside years 1-9999
    (an instant in the first or last hours of the range)."""
    try:
        return (_EPOCH + timedelta(milliseconds=instant_ms)).astimezone(zone)
    except OverflowError:
        return None


def zone_text(instant_ms: int, zone: ZoneInfo) -> str:
    """``2026-12-24 09:00:00 CET``: the wall time in ``zone`` (``-`` when
    it has no year 1-9999 reading)."""
    moment = _moment(instant_ms, zone)
    return "-" if moment is None else moment.strftime("%Y-%m-%d %H:%M:%S %Z")


def reads_as_utc(instant_ms: int, zone: ZoneInfo) -> bool:
    """Whether ``zone`` reads as plain UTC at that instant (``UTC``,
    ``Etc/UTC``...), or not at all: shown beside the UTC text it would say
    nothing."""
    moment = _moment(instant_ms, zone)
    return moment is None or (moment.utcoffset() == timedelta(0) and moment.tzname() == "UTC")


def when_text(instant_ms: int, viewer: ZoneInfo, own: ZoneInfo | None = None) -> str:
    """The instant as the log keeps it, then in the reminder's own zone
    (``own``, when it has one) and the viewer's, each once and never a
    plain UTC again::

        2026-12-24T08:00:00.000Z (2026-12-24 09:00:00 CET, Europe/Berlin)
    """
    shown: list[str] = []
    seen: set[str] = set()
    for zone in (own, viewer):
        if zone is None or zone.key in seen or reads_as_utc(instant_ms, zone):
            continue
        seen.add(zone.key)
        shown.append(f"{zone_text(instant_ms, zone)}, {zone.key}")
    text = format_instant(instant_ms)
    return f"{text} ({'; '.join(shown)})" if shown else text
