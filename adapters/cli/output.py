"""Printing for people (rich tables) and for programs (JSON)."""

from __future__ import annotations

import json

import click
from rich.console import Console
from rich.table import Table

from tickler.adapters.cli.inspect import Report


def print_json(value: object) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, indent=2))


def console(*, stderr: bool = False) -> Console:
    """A console that does not squeeze tables when output is piped."""
    probe = Console(stderr=stderr)
    return Console(stderr=stderr, highlight=False, width=None if probe.is_terminal else 160)


def print_report(report: Report, out: Console | None = None) -> None:
    out = out if out is not None else console()
    out.print(
        f"[bold]session[/bold] {report.session}: {report.events} events"
        + (f" (first {report.seed_length} inherited)" if report.seed_length else "")
        + f", now {report.now}"
    )
    active = Table(title="Active reminders", title_justify="left")
    for column in ("id", "kind", "prompt", "target (UTC)", f"target ({report.zone})", "state"):
        active.add_column(column)
    for row in report.active:
        kind = str(row["kind"])
        if "everySeconds" in row:
            kind += f" {row['everySeconds']}s"
        active.add_row(
            str(row["id"]),
            kind,
            str(row["prompt"]),
            str(row["scheduledAt"]),
            str(row["local"]),
            str(row["state"]),
        )
    out.print(active if report.active else "No active reminders.")
    out.print(f"next wake: {report.next_wake or 'none'}")
    history = Table(title="Deliveries", title_justify="left")
    for column in ("occurrence", "prompt", "appended", "taken by the agent", "turn"):
        history.add_column(column)
    for item in report.history:
        prompts = "; ".join(o["prompt"] for o in item.occurrences)
        keys = ", ".join(f"{o['id']}@{o['occurrenceAt']}" for o in item.occurrences)
        turn = (
            "-"
            if item.turn_input is None
            else f"#{item.turn_input}" + (" done" if item.turn_done else " pending")
        )
        history.add_row(keys, prompts, item.appended_at, "yes" if item.delivered else "no", turn)
    out.print(history if report.history else "No deliveries yet.")
