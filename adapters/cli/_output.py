"""Printing for people (rich tables) and for programs (JSON).

Text that comes from a log (prompts, ids, keys, zone names) is passed to
Rich as ``Text``, never as a markup string, so ``[link=...]`` or ``[/x]`` in
a prompt is shown as written; and it goes through ``visible`` first, so no
control sequence reaches the terminal.
"""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tickler.adapters.cli._inspect import Report
from tickler.adapters.cli._visible import json_text, visible
from tickler.core import format_instant
from tickler.shell import Pending, PendingTurn


def print_json(value: object) -> None:
    click.echo(json_text(value))


def console(*, stderr: bool = False) -> Console:
    """A console that does not squeeze tables when output is piped."""
    probe = Console(stderr=stderr)
    return Console(
        stderr=stderr,
        highlight=False,
        markup=False,
        emoji=False,
        width=None if probe.is_terminal else 160,
    )


def shown(value: object, *, newlines: bool = False) -> Text:
    """Log-derived text as inert Rich text."""
    return Text(visible(str(value), newlines=newlines))


def print_report(report: Report, out: Console | None = None) -> None:
    out = out if out is not None else console()
    title = Text("session", style="bold")
    title.append(f" {visible(report.session)}: {report.events} events", style="")
    if report.seed_length:
        title.append(f" (first {report.seed_length} inherited)", style="")
    title.append(f", now {report.now}", style="")
    out.print(title)
    active = Table(title="Active reminders", title_justify="left")
    zone = visible(report.zone)
    own = any("zoneLocal" in row for row in report.active)  # reminders with a zone of their own
    columns = ["id", "kind", "prompt", "target (UTC)", f"target ({zone})"]
    for column in [*columns, *(["target (its zone)"] if own else []), "state"]:
        active.add_column(Text(column))
    for row in report.active:
        kind = str(row["kind"])
        if "everySeconds" in row:
            kind += f" {row['everySeconds']}s"
        cells = [
            shown(row["id"]),
            shown(kind),
            shown(row["prompt"], newlines=True),
            shown(row["scheduledAt"]),
            shown(row["local"]),
        ]
        if own:
            in_zone = f"{row['zoneLocal']} ({row['zone']})" if "zoneLocal" in row else "-"
            cells.append(shown(in_zone))
        active.add_row(*cells, shown(row["state"]))
    out.print(active if report.active else Text("No active reminders."))
    out.print(Text(f"next wake: {visible(report.next_wake or 'none')}"))
    history = Table(title="Deliveries", title_justify="left")
    for column in ("occurrence", "prompt", "appended", "taken by the agent", "turn"):
        history.add_column(Text(column))
    for item in report.history:
        prompts = "; ".join(o["prompt"] for o in item.occurrences)
        keys = ", ".join(f"{o['id']}@{o['occurrenceAt']}" for o in item.occurrences)
        turn = (
            "-"
            if item.turn_input is None
            else f"#{item.turn_input}" + (" done" if item.turn_done else " pending")
        )
        history.add_row(
            shown(keys),
            shown(prompts, newlines=True),
            shown(item.appended_at),
            Text("yes" if item.delivered else "no"),
            Text(turn),
        )
    out.print(history if report.history else Text("No deliveries yet."))
    print_pending(report.pending, out)


def print_pending(pending: Pending, out: Console) -> None:
    """What the session still owes; error text is log data, shown escaped."""
    if not (pending.deliveries or pending.turns or pending.abandoned):
        out.print(Text("Nothing pending delivery."))
        return
    deliveries = Table(title="Pending delivery", title_justify="left")
    for column in ("key", "reminders", "queued", "failures (at least)", "last error"):
        deliveries.add_column(Text(column))
    for row in pending.deliveries:
        queued = "-" if row.queued_at is None else format_instant(row.queued_at)
        deliveries.add_row(
            shown(row.key),
            shown(", ".join(row.ids)),
            Text(queued),
            Text(str(row.failures)),
            shown(row.last_error or "-"),
        )
    out.print(deliveries if pending.deliveries else Text("Pending delivery: none."))
    if pending.turns:
        out.print(_turns("Pending turns", pending.turns))
    if pending.abandoned:
        out.print(_turns("Abandoned turns", pending.abandoned))
    if pending.stuck:
        out.print(
            Text(
                "stuck: something owed has failed (or was cut off by a crash) at least once,"
                " or was given up",
                style="bold",
            )
        )


def _turns(title: str, rows: tuple[PendingTurn, ...]) -> Table:
    table = Table(title=title, title_justify="left")
    for column in ("input", "source", "key", "starts", "failures", "cuts", "last error"):
        table.add_column(Text(column))
    for row in rows:
        table.add_row(
            Text(f"#{row.input}"),
            shown(row.source),
            shown(row.key or "-"),
            Text(str(row.starts)),
            Text(str(row.failures)),
            Text(str(row.cuts)),
            shown(row.last_error or "-"),
        )
    return table
