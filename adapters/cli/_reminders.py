"""``tickler reminders SOURCE``: every session's reminders, from the read
model, as a table or JSON."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Final
from zoneinfo import ZoneInfo

import click
from rich.table import Table
from rich.text import Text

from tickler.adapters._times import zone_named, zone_text
from tickler.adapters.cli._output import console, print_json, shown
from tickler.adapters.cli._visible import visible
from tickler.adapters.cli._why import duration_text
from tickler.adapters.read._model import ReminderView, open_read_model
from tickler.core import format_instant

_UNITS: Final = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
_DURATION: Final = re.compile(r"(\d+)([smhdw])")
PROMPT_WIDTH: Final = 40
"""Characters of a prompt a table shows (``--json`` gives it whole)."""
PIPED_WIDTH: Final = 240
"""The table's width when it is not shown on a terminal."""


def parse_duration_ms(text: str) -> int:
    """``90s``, ``30m``, ``1h30m``, ``2d``, ``1w`` as milliseconds;
    ValueError for anything else."""
    cleaned = text.strip().lower()
    parts = _DURATION.findall(cleaned)
    if not cleaned or "".join(n + u for n, u in parts) != cleaned:
        raise ValueError(
            f"invalid duration {text!r}: use a number and a unit s, m, h, d or w (30m, 1h, 2d)"
        )
    return sum(int(n) * _UNITS[u] for n, u in parts)


@dataclass(frozen=True)
class Query:
    source: str
    schema: str
    now_ms: int
    due_within_ms: int | None
    failing: bool
    session_id: str | None
    sort: str
    limit: int | None


async def _read(query: Query) -> tuple[list[ReminderView], list[tuple[str, str]]]:
    async with open_read_model(query.source, schema=query.schema) as model:
        views = await model.reminders(
            now_ms=query.now_ms,
            due_within_ms=query.due_within_ms,
            failing=query.failing,
            session_id=query.session_id,
            sort=query.sort,
            limit=query.limit,
        )
        return views, list(model.problems)


def read_reminders(query: Query) -> tuple[list[ReminderView], list[tuple[str, str]]]:
    return asyncio.run(_read(query))


def _when(ms: int | None) -> str | None:
    return None if ms is None else format_instant(ms)


def view_json(view: ReminderView, viewer: ZoneInfo) -> dict[str, object]:
    own = None if view.time_zone is None else zone_named(view.time_zone)
    zone = own or viewer
    due = view.next_due_ms
    return {
        "sessionId": view.session_id,
        "id": view.id,
        "kind": view.kind,
        "prompt": view.prompt,
        "nextDue": _when(due),
        "nextDueMs": due,
        "nextDueLocal": None if due is None else zone_text(due, zone),
        "zone": zone.key,
        "timeZone": view.time_zone,
        "state": str(view.state),
        "overdue": view.overdue_ms is not None,
        "overdueMs": view.overdue_ms,
        "paused": view.paused,
        "outbox": view.outbox,
        "failures": view.failures,
        "lastDelivery": _when(view.last_delivery_ms),
        "lastDeliveryMs": view.last_delivery_ms,
        "lastLatenessMs": view.last_lateness_ms,
    }


def lateness_text(ms: int | None) -> str:
    if ms is None:
        return "-"
    if ms < 1000:
        return f"{ms} ms"
    seconds = ms / 1000
    if seconds < 120:
        return f"{seconds:.1f} s"
    return f"{seconds / 60:.1f} min"


def prompt_cell(prompt: str, width: int = PROMPT_WIDTH) -> str:
    """A prompt for one table cell: every control character shown as an
    escape (as the CLI shows log text), cut to ``width`` characters with an
    ellipsis, never inside an escape."""
    whole = visible(prompt)
    if len(whole) <= width:
        return whole
    kept: list[str] = []
    used = 0
    for part in map(visible, prompt):
        if used + len(part) >= width:
            break
        kept.append(part)
        used += len(part)
    return "".join(kept) + "…"


def overdue_text(ms: int | None) -> str:
    return "-" if ms is None else duration_text(ms)


def print_table(views: list[ReminderView], viewer: ZoneInfo) -> None:
    """One row per reminder: its prompt (cut), its next due in UTC, in the
    viewer's zone and, for reminders that carry a zone of their own, in
    that one (a column shown only then, as ``tickler inspect`` does), its
    state (the core's) and, when it is due, how long overdue."""
    out = console()
    if not out.is_terminal:  # piped: one line per row, however many columns
        out.width = PIPED_WIDTH
    if not views:
        out.print(Text("No reminders."))
        return
    own = any(v.time_zone is not None for v in views)
    table = Table(title="Reminders", title_justify="left")
    columns = ["session", "id", "kind", "prompt", "next due (UTC)"]
    columns += [f"next due ({visible(viewer.key)})"]
    columns += ["next due (its zone)"] if own else []
    # The outbox is in the state (delivering: pending; failing); --json has both.
    columns += ["state", "overdue", "failures", "last delivery", "late"]
    for column in columns:
        table.add_column(Text(column), no_wrap=column == "prompt", overflow="ellipsis")
    for view in views:
        due = view.next_due_ms
        cells = [
            shown(view.session_id),
            shown(view.id),
            shown(view.kind),
            Text(prompt_cell(view.prompt)),
            Text(_when(due) or "-"),
            Text("-" if due is None else zone_text(due, viewer)),
        ]
        if own:
            zone = None if view.time_zone is None else zone_named(view.time_zone)
            in_zone = "-" if due is None or zone is None else f"{zone_text(due, zone)} ({zone.key})"
            cells.append(shown(in_zone))
        table.add_row(
            *cells,
            Text(str(view.state)),
            Text(overdue_text(view.overdue_ms)),
            Text(str(view.failures)),
            Text(_when(view.last_delivery_ms) or "-"),
            Text(lateness_text(view.last_lateness_ms)),
        )
    out.print(table)


def report(
    views: list[ReminderView],
    problems: list[tuple[str, str]],
    viewer: ZoneInfo,
    *,
    as_json: bool,
    now_ms: int,
) -> int:
    """Print; 1 when a session could not be read (each on one line on
    stderr), else 0."""
    if as_json:
        print_json(
            {
                "now": format_instant(now_ms),
                "reminders": [view_json(v, viewer) for v in views],
                "problems": [{"sessionId": s, "reason": r} for s, r in problems],
            }
        )
    else:
        print_table(views, viewer)
    for session_id, reason in problems:
        click.echo(
            f"tickler: session {visible(session_id)} cannot be read: {visible(reason)}", err=True
        )
    return 1 if problems else 0
