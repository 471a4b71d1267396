"""The click application: ``tickler check|inspect|reminders|demo|chat|mcp|ui``, and the
operator's ``pause|resume|snooze|cancel|deliver-now``."""

from __future__ import annotations

import time
from pathlib import Path

import click

from tickler.adapters._times import local_zone
from tickler.adapters.cli._check import Examined, examine_database, examine_paths, exit_code
from tickler.adapters.cli._errors import CliError, echo_error
from tickler.adapters.cli._inspect_run import inspect_found, inspect_paths, why_found, why_paths
from tickler.adapters.cli._options import log_format_option, log_level_option, profile_option
from tickler.adapters.cli._output import print_json
from tickler.core import Profile, resolve_zone


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tickler-agents")
def cli() -> None:
    """tickler: durable, exactly-once reminders for LLM agents."""


_SESSION_HELP = "In an SQLite file or a PostgreSQL schema: only this session."
_SCHEMA_HELP = "PostgreSQL schema holding tickler's tables."


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--session", "session_id", default=None, metavar="ID", help=_SESSION_HELP)
@click.option("--schema", default="tickler", show_default=True, help=_SCHEMA_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def check(paths: tuple[str, ...], session_id: str | None, schema: str, as_json: bool) -> int:
    """Check session logs against the schedule log's invariants.

    A PATH is a session file (JSONL, or zstd frames when it ends in .zstd),
    a directory (a tickler store, or a harness root walked for
    <project>/<session>/session.jsonl[.zstd]), an SQLite store file or a
    PostgreSQL DSN (postgresql://...; every session of --schema, or
    --session ID), read without locking anything. Every session is reported
    on its own. Exit 1 when any log is corrupt (file, line or event, and
    reason are printed) or PostgreSQL cannot be reached, else 2 when an
    input cannot be read, else 0.
    """
    found = []
    for path in paths:
        try:
            database = _database_sessions(path, schema, session_id, with_index=True)
        except _Unreachable as exc:
            return _unreachable(exc)
        found += examine_paths([path], with_index=True) if database is None else database
    verdicts = [item.verdict for item in found]
    if as_json:
        print_json({"files": [v.as_json() for v in verdicts]})
    else:
        for verdict in verdicts:
            err = verdict.status != 0
            click.echo(("tickler: " if err else "") + verdict.as_text(), err=err)
    return exit_code(verdicts)


class _Unreachable(Exception):
    """A database that cannot be reached: one line, exit 1 (as every
    command that uses the database)."""


def _unreachable(exc: _Unreachable) -> int:
    echo_error(str(exc))
    return 1


def _database_sessions(
    path: str, schema: str, session_id: str | None, *, with_index: bool = False
) -> list[Examined] | None:
    """The verdicts on an SQLite store file's or a PostgreSQL schema's
    sessions; None when ``path`` is neither."""
    from tickler.adapters.cli._db_sessions import is_database, unreachable_type

    if not is_database(path):
        return None
    try:
        return examine_database(path, schema, session_id, with_index=with_index)
    except ValueError as exc:  # a DSN that does not parse, a bad schema name
        raise CliError(str(exc)) from None
    except Exception as exc:
        if isinstance(exc, unreachable_type(path)):
            raise _Unreachable(str(exc)) from None
        raise


@cli.command()
@click.argument("path")
@click.option("--session", "session_id", default=None, metavar="ID", help=_SESSION_HELP)
@click.option("--schema", default="tickler", show_default=True, help=_SCHEMA_HELP)
@click.option(
    "--tz",
    "tz_name",
    default=None,
    metavar="ZONE",
    help="Zone to show targets in, besides UTC (default: this machine's zone: "
    "TZ, else /etc/localtime, else UTC).",
)
@click.option(
    "--why",
    "why_id",
    default=None,
    metavar="ID",
    help="Tell reminder ID's story instead: created, each occurrence due, delivered "
    "(when, how late), skipped by catch-up, deleted.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def inspect(
    path: str,
    *,
    session_id: str | None,
    schema: str,
    tz_name: str | None,
    why_id: str | None,
    as_json: bool,
) -> int:
    """Show a session's active reminders, next wake and delivery history.

    PATH is a session file, a directory (a tickler store or a harness
    root), an SQLite store file or a PostgreSQL DSN (postgresql://...):
    every session in it is shown, or the one --session names. Nothing is
    locked. Exit codes as for check; with --why, exit 2 when no session
    created that reminder.
    """
    zone = local_zone() if tz_name is None else resolve_zone(tz_name)
    if zone is None:
        raise CliError(f"unknown time zone {tz_name!r} (use UTC or an IANA Area/Location name)")
    now_ms = time.time_ns() // 1_000_000
    try:
        database = _database_sessions(path, schema, session_id)
    except _Unreachable as exc:
        return _unreachable(exc)
    if database is not None:
        if why_id is not None:
            from tickler.adapters.cli._db_sessions import describe

            named = describe(path, schema)  # never a DSN's password
            return why_found(database, named, why_id, now_ms, zone, as_json=as_json)
        return inspect_found(database, now_ms, zone, as_json=as_json, single=session_id is not None)
    if why_id is not None:
        return why_paths(path, why_id, now_ms, zone, as_json=as_json)
    return inspect_paths(path, now_ms, zone, as_json=as_json)


@cli.command()
@click.argument("source")
@click.option(
    "--due-within",
    default=None,
    metavar="DURATION",
    help="Only reminders due within DURATION from now (30m, 1h, 2d), overdue ones included.",
)
@click.option("--failing", is_flag=True, help="Only reminders whose delivery keeps failing.")
@click.option("--session", "session_id", default=None, metavar="ID", help="Only this session.")
@click.option(
    "--sort",
    type=click.Choice(["due", "session", "failures"]),
    default="due",
    show_default=True,
    help="Soonest first; by session; or the most failures first.",
)
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=100,
    show_default=True,
    help="Show at most this many (0: all; with a large store, all reads every session).",
)
@click.option("--schema", default="tickler", show_default=True, help="PostgreSQL schema.")
@click.option(
    "--tz",
    "tz_name",
    default=None,
    metavar="ZONE",
    help="Zone to show times in when a reminder has none of its own (default: this machine's).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def reminders(
    *,
    source: str,
    due_within: str | None,
    failing: bool,
    session_id: str | None,
    sort: str,
    limit: int,
    schema: str,
    tz_name: str | None,
    as_json: bool,
) -> int:
    """List the reminders of every session in a store: what is due, what
    keeps failing, how late deliveries were.

    SOURCE is a JSONL store directory, an SQLite store file or a PostgreSQL
    DSN (postgresql://...). It only reads: no session is locked or leased.
    Exit 0; 1 when a session cannot be read (listed on stderr) or
    PostgreSQL cannot be reached; 2 for usage errors.
    """
    from tickler.adapters.cli._reminders import Query, parse_duration_ms, read_reminders, report
    from tickler.shell import StoreError

    zone = local_zone() if tz_name is None else resolve_zone(tz_name)
    if zone is None:
        raise CliError(f"unknown time zone {tz_name!r} (use UTC or an IANA Area/Location name)")
    try:
        within = None if due_within is None else parse_duration_ms(due_within)
        query = Query(
            source,
            schema,
            time.time_ns() // 1_000_000,
            within,
            failing,
            session_id,
            sort,
            limit or None,
        )
        views, problems = read_reminders(query)
    except ValueError as exc:  # a bad duration, source, DSN or schema name
        raise CliError(str(exc)) from None
    except StoreError as exc:  # the database or file cannot be used
        echo_error(str(exc))
        return 1
    return report(views, problems, zone, as_json=as_json, now_ms=query.now_ms)


@cli.command()
@click.option(
    "--json", "as_json", is_flag=True, help="Tell the story on stderr; print the outcome as JSON."
)
@click.option(
    "--store",
    "store_dir",
    default=None,
    metavar="DIR",
    help="Run in DIR (created if missing) and keep the session log there.",
)
@click.option("--keep", is_flag=True, help="Keep the temporary store and print its path.")
def demo(as_json: bool, store_dir: str | None, keep: bool) -> int:
    """Run the main job offline: reminders created by a model in an agent
    process that is then killed; a worker wakes the cold session and the
    reminder turn runs with the conversation; then inspected and checked."""
    from tickler.adapters.cli._demo import run_demo

    if keep and store_dir is not None:
        raise CliError("--keep is for the temporary store; --store DIR is always kept")
    return run_demo(as_json, store_dir, keep)


@cli.command("_demo-agent", hidden=True)
@click.argument("store_dir")
@click.argument("messages", nargs=-1)
def demo_agent(store_dir: str, messages: tuple[str, ...]) -> None:
    """The demo's agent process (internal)."""
    from tickler.adapters.cli._demo import run_agent

    run_agent(store_dir, list(messages))


@cli.command()
@click.option("--store", "store_dir", default=None, help="Session directory (JSONL store).")
@click.option("--session", "session_id", default="chat", show_default=True)
@click.option(
    "--model",
    "model_name",
    default=None,
    envvar="TICKLER_MODEL",
    help="A PydanticAI model name (env TICKLER_MODEL); offline rules when unset.",
)
@profile_option
def chat(store_dir: str | None, session_id: str, model_name: str | None, profile: Profile) -> None:
    """Chat in the terminal; reminders arrive as turns while you chat."""
    import asyncio

    from tickler.adapters.cli._chat import chat as run_chat
    from tickler.adapters.cli._chat import default_store

    directory = Path(store_dir or default_store())
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"cannot use {directory} as the store: {exc.strerror or exc}") from None
    asyncio.run(run_chat(str(directory), session_id, model_name, profile=profile))


@cli.command()
@click.option(
    "--store", "store_dir", required=True, metavar="DIR", help="Session directory (JSONL store)."
)
@click.option("--session", "session_id", required=True, metavar="ID", help="The session to serve.")
@click.option(
    "--deliver-cmd",
    default=None,
    metavar="CMD",
    help="Run CMD with each due follow-up (JSON) on stdin; exit 0 = delivered. No shell: "
    "CMD is split into words like a POSIX shell would, and its program must exist at start.",
)
@click.option(
    "--deliver-url",
    default=None,
    metavar="URL",
    help="POST each due follow-up (JSON) to URL; 2xx = delivered.",
)
@click.option(
    "--deliver-timeout",
    type=float,
    default=None,
    metavar="SECONDS",
    help="Give up on one delivery attempt after this long (command 30, URL 10).",
)
@profile_option
@log_level_option
@log_format_option
def mcp(
    *,
    store_dir: str,
    session_id: str,
    deliver_cmd: str | None,
    deliver_url: str | None,
    deliver_timeout: float | None,
    profile: Profile,
    log_level: str,
    log_format: str,
) -> int:
    """Serve the four schedule tools over MCP (stdio), and deliver due reminders.

    The extended profile (the default) serves schedule_create, schedule_list,
    schedule_delete and schedule_update; --profile reference serves the
    first three, the exact v1 contract.

    MCP clients do not start a model turn from a server notification, so a
    due reminder goes to --deliver-cmd or --deliver-url (exactly one); it is
    marked delivered in the log only after that succeeds, and retried
    otherwise. The same command runs as python -m tickler mcp.
    Exit 0 when the client disconnects, 1 when the server cannot run (the
    session is served elsewhere), 2 for usage errors.
    """
    from tickler.adapters.cli._mcp import serve_command

    try:
        return serve_command(
            store_dir,
            session_id,
            deliver_cmd,
            deliver_url,
            deliver_timeout=deliver_timeout,
            profile=profile,
            log_level=log_level.upper(),
            log_format=log_format.lower(),
        )
    except ValueError as exc:
        raise CliError(str(exc)) from None


def _add_postgres_commands() -> None:
    from tickler.adapters.cli._postgres import db
    from tickler.adapters.cli._worker import worker

    cli.add_command(db)
    cli.add_command(worker)


def _add_ui_command() -> None:
    from tickler.adapters.cli._ui import ui

    cli.add_command(ui)


def _add_operator_commands() -> None:
    from tickler.adapters.cli._operate import COMMANDS

    for command in COMMANDS:
        cli.add_command(command)


_add_postgres_commands()
_add_ui_command()
_add_operator_commands()
