"""``tickler db migrate`` and ``tickler worker``: the PostgreSQL commands."""

from __future__ import annotations

import importlib.util
import signal

import click

from tickler.adapters.cli._errors import CliError, echo_error
from tickler.adapters.cli._options import (
    configure_logging,
    log_format_option,
    log_level_option,
    profile_option,
)
from tickler.core import Profile

_DSN_HELP = "PostgreSQL connection string or URI (or set TICKLER_DSN)."
_SCHEMA_HELP = "PostgreSQL schema holding tickler's tables."
CANNOT_USE_DATABASE = 1
"""Exit status of every command that cannot connect to (or use) the database."""


def _require_psycopg() -> None:
    if (
        importlib.util.find_spec("psycopg") is None
        or importlib.util.find_spec("psycopg_pool") is None
    ):
        raise CliError(
            "PostgreSQL support needs the postgres extra: pip install 'tickler-agents[postgres]'"
        )


@click.group()
def db() -> None:
    """Manage the PostgreSQL schema."""


@db.command()
@click.option("--dsn", envvar="TICKLER_DSN", required=True, help=_DSN_HELP)
@click.option("--schema", default="tickler", show_default=True, help=_SCHEMA_HELP)
def migrate(dsn: str, schema: str) -> int:
    """Create or upgrade tickler's tables; safe to run again and from
    several processes at once. Exit 0 when done, 1 when PostgreSQL cannot
    be reached, 2 for usage errors."""
    _require_psycopg()
    from tickler.adapters.stores._postgres_schema import DatabaseUnreachable
    from tickler.adapters.stores._postgres_schema import migrate as run_migration
    from tickler.shell._ports import StoreError

    try:
        before, after = run_migration(dsn, schema)
    except DatabaseUnreachable as exc:
        return _cannot_use(exc)
    except (ValueError, StoreError) as exc:
        raise CliError(str(exc)) from None
    if before == after:
        click.echo(f"schema {schema} is at version {after}: nothing to do")
    else:
        click.echo(f"schema {schema}: version {before} -> {after}")
    return 0


def _cannot_use(exc: Exception) -> int:
    echo_error(str(exc))
    return CANNOT_USE_DATABASE


@click.command()
@click.option("--dsn", envvar="TICKLER_DSN", required=True, help=_DSN_HELP)
@click.option("--schema", default="tickler", show_default=True, help=_SCHEMA_HELP)
@click.option(
    "--deliver",
    "target",
    required=True,
    metavar="TARGET",
    help="Where due follow-ups go: module:function (a Python callable), an http(s):// URL "
    "(POST, 2xx = delivered), or a command (JSON on stdin, exit 0 = delivered; no shell).",
)
@click.option(
    "--app-dir",
    default=".",
    show_default=True,
    metavar="DIR",
    help="Put DIR first on the import path, to import a module:function target from it "
    "(the working directory unless given).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 10_000),
    default=16,
    show_default=True,
    help="Sessions delivered at once by this process.",
)
@click.option(
    "--deliver-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="SECONDS",
    help="Total deadline of one delivery attempt (callable 30, command 30, URL 10).",
)
@click.option(
    "--poll",
    "poll_s",
    type=click.FloatRange(min=0, min_open=True),
    default=1.0,
    show_default=True,
    metavar="SECONDS",
    help="Look for due sessions at least this often (NOTIFY wakes it sooner).",
)
@click.option(
    "--lease",
    "lease_s",
    type=click.FloatRange(min=1),
    default=60.0,
    show_default=True,
    metavar="SECONDS",
    help="How long a session stays with this worker if it dies.",
)
@click.option(
    "--grace",
    "grace_s",
    type=click.FloatRange(min=0),
    default=None,
    metavar="SECONDS",
    help="On SIGTERM, wait this long for deliveries in flight (default: their deadline).",
)
@profile_option
@log_level_option
@log_format_option
def worker(
    *,
    dsn: str,
    schema: str,
    target: str,
    app_dir: str,
    concurrency: int,
    deliver_timeout: float | None,
    poll_s: float,
    lease_s: float,
    grace_s: float | None,
    profile: Profile,
    log_level: str,
    log_format: str,
) -> int:
    """Deliver due reminders of sessions no process holds, until SIGTERM.

    Run as many as you like, on any machines, against one schema. Exit 0
    after SIGTERM/SIGINT, 1 when PostgreSQL cannot be used, 2 for usage
    errors.
    """
    # A SIGTERM while starting (imports, connecting) stops it cleanly too.
    early: list[int] = []
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda number, _frame: early.append(number))
    _require_psycopg()
    import asyncio

    from tickler.adapters._delivery import delivery_target, target_timeout
    from tickler.adapters._worker import run_worker, shortest_lease_s
    from tickler.adapters.stores._postgres import PostgresStore
    from tickler.adapters.stores._postgres_schema import SchemaMissing
    from tickler.shell._ports import StoreError

    timeout = target_timeout(target, deliver_timeout)
    if lease_s < shortest_lease_s(timeout):
        # The lease guard would refuse every attempt: nothing would ever be sent.
        raise CliError(
            f"--lease {lease_s:g} is too short for a delivery deadline of {timeout:g} s: "
            f"give at least {shortest_lease_s(timeout):g} s, or a shorter --deliver-timeout"
        )
    try:
        deliver = delivery_target(target, timeout=deliver_timeout, app_dir=app_dir)
        store = PostgresStore(dsn, schema=schema, lease_s=lease_s)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    configure_logging(log_level, log_format)
    grace = grace_s if grace_s is not None else timeout + 5.0
    try:
        asyncio.run(
            run_worker(
                store,
                deliver,
                concurrency=concurrency,
                poll_s=poll_s,
                grace_s=grace,
                signalled_early=lambda: bool(early),
                profile=profile,
            )
        )
    except SchemaMissing as exc:
        raise CliError(str(exc)) from None
    except StoreError as exc:  # the database cannot be used: not a usage error
        return _cannot_use(exc)
    return 0
