"""``tickler pause|resume|snooze|cancel|deliver-now STORE SESSION ID``:
an operator's action on one reminder (see :mod:`tickler.adapters.operate._operate`)."""

from __future__ import annotations

import asyncio
import getpass
from collections.abc import Callable
from typing import Any

import click

from tickler.adapters.cli._errors import CliError
from tickler.adapters.cli._options import profile_option
from tickler.adapters.cli._output import print_json
from tickler.adapters.cli._postgres import require_psycopg
from tickler.adapters.cli._visible import visible
from tickler.adapters.operate._operate import DEFAULT_WAIT_S, Action, Done, Operator, OperatorError
from tickler.adapters.read._model import is_dsn
from tickler.core import Profile

_DONE_TEXT = {
    "pause": "paused",
    "resume": "resumed",
    "snooze": "snoozed",
    "cancel": "cancelled",
    "deliver-now": "due now",
}


def default_operator() -> str:
    """The OS user running the command: the operator when --by is not given."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name for this uid
        return "operator"


def _shared(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options every action takes."""
    for option in reversed(
        [
            click.option(
                "--by",
                default=None,
                metavar="NAME",
                help="The operator named in the session's log (default: this OS user).",
            ),
            click.option(
                "--wait",
                "wait_s",
                type=click.FloatRange(min=0),
                default=DEFAULT_WAIT_S,
                show_default=True,
                metavar="SECONDS",
                help="Wait this long for a session a worker is delivering.",
            ),
            click.option(
                "--schema", default="tickler", show_default=True, help="PostgreSQL schema."
            ),
            click.option("--json", "as_json", is_flag=True, help="Print one JSON document."),
            profile_option,
        ]
    ):
        command = option(command)
    return command


def _run(
    action: Action,
    store: str,
    session_id: str,
    reminder_id: str,
    *,
    by: str | None,
    wait_s: float,
    schema: str,
    as_json: bool,
    profile: Profile,
    snooze_seconds: int | None = None,
) -> int:
    operator = by if by is not None else default_operator()
    if is_dsn(store):
        require_psycopg()
    acting = Operator(store, schema, operator, wait_s, profile)
    try:
        done = asyncio.run(acting.act(session_id, action, reminder_id, operator, snooze_seconds))
    except OperatorError as exc:
        raise CliError(str(exc)) from None
    if as_json:
        print_json(done.as_json())
    else:
        click.echo(_text(done))
    return 0


def _text(done: Done) -> str:
    what = f"{visible(done.reminder_id)} of session {visible(done.session_id)}"
    if not done.changed:
        return f"{what}: nothing to change (already {_DONE_TEXT[done.action]})"
    text = f"{_DONE_TEXT[done.action]} {what} by {visible(done.by)}"
    if not done.recorded_by:
        text += " (the reference profile's v1 delete cannot name the operator: not recorded)"
    if done.next_due is not None and done.state != "paused":
        text += f"; next due {done.next_due}"
    return text


_ARGS_HELP = (
    "STORE is a JSONL store directory, an SQLite store file or a PostgreSQL DSN; the "
    "action is logged in the session's log, naming the operator (--by), through the "
    "session's lock or lease (a session a worker is delivering is waited for, up to "
    "--wait). Exit 0 when done (or nothing to change), 2 otherwise (one line on stderr)."
)


@click.command(help=f"Pause one reminder: it delivers nothing until resumed. {_ARGS_HELP}")
@click.argument("store")
@click.argument("session_id", metavar="SESSION")
@click.argument("reminder_id", metavar="ID")
@_shared
def pause(store: str, session_id: str, reminder_id: str, **options: Any) -> int:
    return _run("pause", store, session_id, reminder_id, **options)


@click.command(
    help=f"Resume a paused reminder (what fell due meanwhile is not replayed). {_ARGS_HELP}"
)
@click.argument("store")
@click.argument("session_id", metavar="SESSION")
@click.argument("reminder_id", metavar="ID")
@_shared
def resume(store: str, session_id: str, reminder_id: str, **options: Any) -> int:
    return _run("resume", store, session_id, reminder_id, **options)


@click.command(
    help=f"Move a reminder's next occurrence to now plus DURATION (30m, 1h, 2d). {_ARGS_HELP}"
)
@click.argument("store")
@click.argument("session_id", metavar="SESSION")
@click.argument("reminder_id", metavar="ID")
@click.argument("duration")
@_shared
def snooze(store: str, session_id: str, reminder_id: str, duration: str, **options: Any) -> int:
    from tickler.adapters.cli._reminders import parse_duration_ms

    try:
        ms = parse_duration_ms(duration)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if ms < 1000:
        raise CliError(f"invalid duration {duration!r}: snooze for at least 1s")
    return _run("snooze", store, session_id, reminder_id, snooze_seconds=ms // 1000, **options)


@click.command(help=f"Cancel (delete) one reminder. {_ARGS_HELP}")
@click.argument("store")
@click.argument("session_id", metavar="SESSION")
@click.argument("reminder_id", metavar="ID")
@_shared
def cancel(store: str, session_id: str, reminder_id: str, **options: Any) -> int:
    return _run("cancel", store, session_id, reminder_id, **options)


@click.command(
    "deliver-now",
    help="Deliver a reminder now: its next occurrence moves to now, and whoever serves "
    f"the session (a worker) delivers it. {_ARGS_HELP}",
)
@click.argument("store")
@click.argument("session_id", metavar="SESSION")
@click.argument("reminder_id", metavar="ID")
@_shared
def deliver_now(store: str, session_id: str, reminder_id: str, **options: Any) -> int:
    return _run("deliver-now", store, session_id, reminder_id, **options)


COMMANDS = (pause, resume, snooze, cancel, deliver_now)
