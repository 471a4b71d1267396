"""What the dashboard shows, as text: the read model's rows turned into
rows of ready strings, so the template only lays them out and escapes them.

Every instant is shown in UTC and in the reminder's own zone; for a
reminder that keeps none (``after``, ``every``, and ``at`` records, which
keep only the UTC target) in the viewer's zone (the machine's by default),
as ``tickler inspect`` does.

Nothing here does I/O but the read model's queries in :func:`gather`.
The read model never takes a session's lease or lock.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final
from zoneinfo import ZoneInfo

from tickler.adapters._times import UTC_ZONE, reads_as_utc, zone_named, zone_text
from tickler.adapters.read._model import DeliveryView, ReadModel, ReminderView
from tickler.core import ReminderState, format_instant, in_range

HOUR_MS: Final = 3_600_000
DAY_MS: Final = 24 * HOUR_MS
WEEK_MS: Final = 7 * DAY_MS
# A reminder this far past its due time has not fired: no process runs its
# session (or it is failing); the page lists it as stuck.
STUCK_AFTER_MS: Final = 5 * 60_000
# Rows per table, and reminders asked for per page: the page stays small
# however many sessions a store holds.
ROWS: Final = 200
SCAN: Final = 10_000


@dataclass(frozen=True, slots=True)
class Moment:
    """One instant for people: in a zone (empty when that zone reads as
    UTC), in UTC, and how far from now (``in 2 h 05 min``)."""

    zoned: str
    utc: str
    relative: str


@dataclass(frozen=True, slots=True)
class ReminderLine:
    session_id: str
    id: str
    kind: str
    prompt: str
    due: Moment | None
    paused: bool
    state: str  # the core's: scheduled, due, paused, delivering, failing
    overdue: str  # how long past due, not yet dispatched ("" when not)
    outbox: str
    stuck: bool
    failures: int
    last_delivery: Moment | None
    last_lateness: str


@dataclass(frozen=True, slots=True)
class DeliveryLine:
    session_id: str
    occurrence_key: str
    reminder_ids: str
    due: Moment
    delivered: Moment | None
    lateness: str
    status: str
    failures: int


@dataclass(frozen=True, slots=True)
class SessionLine:
    session_id: str
    active: int  # its reminders, paused ones included
    paused: int
    failing: int
    next_due: Moment | None


@dataclass(frozen=True, slots=True)
class Dashboard:
    """Everything one page shows, as of ``now``."""

    now: Moment
    viewer: str  # the zone of times whose reminder keeps none ("" for UTC)
    sessions: tuple[SessionLine, ...]
    session_count: int
    # False when there were more than SCAN reminders: the counts per session
    # are of the first SCAN by due time.
    counted: bool
    next_day: tuple[ReminderLine, ...]
    next_week: tuple[ReminderLine, ...]
    paused: tuple[ReminderLine, ...]
    deliveries: tuple[DeliveryLine, ...]
    trouble: tuple[ReminderLine, ...]
    # Sessions the read model could not read: (session id, reason).
    unreadable: tuple[tuple[str, str], ...]


def span_text(ms: int) -> str:
    """A duration for people: ``850 ms``, ``12.3 s``, ``4 min 05 s``,
    ``2 h 05 min``, ``3 d 04 h``."""
    ms = abs(ms)
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    seconds = ms // 1000
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    minutes = seconds // 60
    if minutes < 24 * 60:
        return f"{minutes // 60} h {minutes % 60:02d} min"
    hours = minutes // 60
    return f"{hours // 24} d {hours % 24:02d} h"


def _relative(instant_ms: int, now_ms: int) -> str:
    if instant_ms == now_ms:
        return "now"
    gap = span_text(instant_ms - now_ms)
    return f"in {gap}" if instant_ms > now_ms else f"{gap} ago"


def moment(instant_ms: int, now_ms: int, zone: ZoneInfo) -> Moment:
    """``instant_ms`` in ``zone`` and in UTC."""
    if not in_range(instant_ms):
        return Moment("", str(instant_ms), "")
    shown = "" if reads_as_utc(instant_ms, zone) else f"{zone_text(instant_ms, zone)} ({zone.key})"
    return Moment(shown, format_instant(instant_ms), _relative(instant_ms, now_ms))


def zone_of(name: str | None, viewer: ZoneInfo) -> ZoneInfo:
    """A reminder's own zone, else (none kept, or unknown here) ``viewer``."""
    own = None if name is None else zone_named(name)
    return viewer if own is None else own


def reminder_line(row: ReminderView, now_ms: int, viewer: ZoneInfo) -> ReminderLine:
    zone = zone_of(row.time_zone, viewer)
    due = None if row.next_due_ms is None else moment(row.next_due_ms, now_ms, zone)
    last = None if row.last_delivery_ms is None else moment(row.last_delivery_ms, now_ms, zone)
    lateness = "" if row.last_lateness_ms is None else span_text(row.last_lateness_ms)
    return ReminderLine(
        session_id=row.session_id,
        id=row.id,
        kind=row.kind,
        prompt=row.prompt,
        due=due,
        paused=row.paused,
        state=str(row.state),
        overdue="" if row.overdue_ms is None else span_text(row.overdue_ms),
        outbox=row.outbox,
        stuck=is_stuck(row, now_ms),
        failures=row.failures,
        last_delivery=last,
        last_lateness=lateness,
    )


def delivery_line(
    row: DeliveryView, now_ms: int, zones: dict[str, str], viewer: ZoneInfo
) -> DeliveryLine:
    """``zones`` maps ``session/reminder id`` to the zone of a reminder
    still active: a delivery of a reminder that is gone (or keeps no zone)
    is shown in ``viewer``."""
    names = (zones.get(f"{row.session_id}/{rid}") for rid in row.reminder_ids)
    zone = zone_of(next((name for name in names if name is not None), None), viewer)
    delivered = None if row.delivered_ms is None else moment(row.delivered_ms, now_ms, zone)
    return DeliveryLine(
        session_id=row.session_id,
        occurrence_key=row.occurrence_key,
        reminder_ids=", ".join(row.reminder_ids),
        due=moment(row.due_ms, now_ms, zone),
        delivered=delivered,
        lateness="" if row.lateness_ms is None else span_text(row.lateness_ms),
        status=row.status,
        failures=row.failures,
    )


def is_stuck(row: ReminderView, now_ms: int) -> bool:
    """Due, or its follow-up waiting (not failing), for more than
    :data:`STUCK_AFTER_MS`: nothing delivered it."""
    due = row.next_due_ms
    waits = row.state in (ReminderState.DUE, ReminderState.DELIVERING)
    return waits and due is not None and due < now_ms - STUCK_AFTER_MS


def session_lines(
    ids: Iterable[str], rows: Sequence[ReminderView], now_ms: int, viewer: ZoneInfo
) -> tuple[SessionLine, ...]:
    """One line per session id: its active reminders among ``rows``
    (sorted by due time), how many fail, and its earliest due time."""
    by_session: dict[str, list[ReminderView]] = {}
    for row in rows:
        by_session.setdefault(row.session_id, []).append(row)
    lines = []
    for session_id in ids:
        own = by_session.get(session_id, [])
        due = [row for row in own if row.next_due_ms is not None]
        first = min(due, key=lambda row: row.next_due_ms or 0, default=None)
        lines.append(
            SessionLine(
                session_id=session_id,
                active=len(own),
                paused=sum(1 for row in own if row.state is ReminderState.PAUSED),
                failing=sum(1 for row in own if row.state is ReminderState.FAILING),
                next_due=None
                if first is None or first.next_due_ms is None
                else moment(first.next_due_ms, now_ms, zone_of(first.time_zone, viewer)),
            )
        )
    return tuple(lines)


async def gather(source: ReadModel, now_ms: int, viewer: ZoneInfo = UTC_ZONE) -> Dashboard:
    """Query the read model for the page (:meth:`ReadModel.overview`): the
    session ids, the first :data:`SCAN` reminders by due time (the
    timeline, the stuck and paused ones and the per-session counts come
    from them; paused ones, due never, come last), the failing ones and the
    latest deliveries."""
    seen = await source.overview(now_ms=now_ms, scan=SCAN, rows=ROWS)
    ids, rows, deliveries = seen.sessions, seen.reminders, seen.deliveries
    unreadable = tuple(seen.problems)
    if seen.failing is None:  # every reminder is in rows
        failing = [row for row in rows if row.state is ReminderState.FAILING]
    else:
        failing = seen.failing
    trouble = {(row.session_id, row.id): row for row in failing}
    for row in rows:
        if is_stuck(row, now_ms):
            trouble.setdefault((row.session_id, row.id), row)
    day: list[ReminderView] = []
    week: list[ReminderView] = []
    for row in rows:
        due = row.next_due_ms
        if due is None or due >= now_ms + WEEK_MS:
            continue
        # Past due and not yet in trouble (due, or waiting, for minutes): it
        # leads the next 24 hours; in trouble, it is listed there alone.
        if due >= now_ms or (row.session_id, row.id) not in trouble:
            (day if due < now_ms + DAY_MS else week).append(row)
    paused = [row for row in rows if row.state is ReminderState.PAUSED]
    zones = {
        f"{row.session_id}/{row.id}": row.time_zone for row in [*rows, *failing] if row.time_zone
    }
    ordered = sorted(trouble.values(), key=lambda row: (row.next_due_ms or 0, row.session_id))
    return Dashboard(
        now=moment(now_ms, now_ms, viewer),
        viewer="" if reads_as_utc(now_ms, viewer) else viewer.key,
        sessions=session_lines(ids[:ROWS], rows, now_ms, viewer),
        session_count=len(ids),
        counted=len(rows) < SCAN,
        next_day=tuple(reminder_line(row, now_ms, viewer) for row in day[:ROWS]),
        next_week=tuple(reminder_line(row, now_ms, viewer) for row in week[:ROWS]),
        paused=tuple(reminder_line(row, now_ms, viewer) for row in paused[:ROWS]),
        deliveries=tuple(delivery_line(row, now_ms, zones, viewer) for row in deliveries),
        trouble=tuple(reminder_line(row, now_ms, viewer) for row in ordered[:ROWS]),
        unreadable=unreadable[:ROWS],
    )
