"""``tickler worker``: deliver the due reminders of sessions no process
holds, in a PostgreSQL schema (``--dsn``) or in an embedded store on this
machine (``--store``: a JSONL directory or an SQLite file)."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from click.core import ParameterSource

from tickler.adapters.cli._errors import CliError
from tickler.adapters.cli._options import (
    configure_logging,
    log_format_option,
    log_level_option,
    profile_option,
)
from tickler.adapters.cli._postgres import CANNOT_USE_DATABASE, cannot_use, require_psycopg
from tickler.core import Profile

if TYPE_CHECKING:
    from tickler.adapters.worker._worker import WakeStore

_DSN_HELP = "A PostgreSQL connection string or URI (or set TICKLER_DSN)."
_STORE_HELP = "A JSONL store directory or an SQLite store file, on this machine."
_SCHEMA_HELP = "PostgreSQL schema holding tickler's tables."
CANNOT_USE_STORE = CANNOT_USE_DATABASE
"""Exit status when the store cannot be used (the database cannot be
reached, the directory cannot be read)."""


@click.command()
@click.option("--store", "store_path", default=None, metavar="PATH", help=_STORE_HELP)
@click.option("--dsn", envvar="TICKLER_DSN", default=None, help=_DSN_HELP)
@click.option("--schema", default="tickler", show_default=True, help=_SCHEMA_HELP)
@click.option(
    "--deliver",
    "target",
    required=True,
    metavar="TARGET",
    help="Where due follow-ups go: module:function (a Python callable taking (message, "
    "session[, tools]), or a host factory taking (session), as open_session's host=), an "
    "http(s):// URL (POST, 2xx = delivered), or a command (JSON on stdin, exit 0 = "
    "delivered; no shell).",
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
    help="Look for due sessions at least this often (a change in the wake index wakes it sooner).",
)
@click.option(
    "--lease",
    "lease_s",
    type=click.FloatRange(min=1),
    default=60.0,
    show_default=True,
    metavar="SECONDS",
    help="PostgreSQL: how long a session stays with this worker if it dies.",
)
@click.option(
    "--grace",
    "grace_s",
    type=click.FloatRange(min=0),
    default=None,
    metavar="SECONDS",
    help="On SIGTERM, wait this long for deliveries in flight (default: their deadline).",
)
@click.option(
    "--max-rate",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="N",
    help="Hand over at most N follow-ups a second from this process (a fleet: N x workers).",
)
@click.option(
    "--health",
    "health_at",
    default=None,
    metavar="[HOST:]PORT",
    help="Serve GET /livez and /readyz on HOST:PORT (HOST 127.0.0.1 unless given).",
)
@profile_option
@log_level_option
@log_format_option
def worker(
    *,
    store_path: str | None,
    dsn: str | None,
    schema: str,
    target: str,
    app_dir: str,
    concurrency: int,
    deliver_timeout: float | None,
    poll_s: float,
    lease_s: float,
    grace_s: float | None,
    max_rate: float | None,
    health_at: str | None,
    profile: Profile,
    log_level: str,
    log_format: str,
) -> int:
    """Deliver due reminders of sessions no process holds, until SIGTERM.

    Give --store PATH (a JSONL directory or an SQLite file: several workers
    on this machine may serve it) or --dsn DSN (PostgreSQL: any number of
    workers, on any machines, against one schema). Exit 0 after
    SIGTERM/SIGINT, 1 when the store cannot be used, 2 for usage errors
    (--health cannot listen included).
    """
    # A SIGTERM while starting (imports, connecting) stops it cleanly too.
    early: list[int] = []
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda number, _frame: early.append(number))
    dsn = _one_source(store_path, dsn)
    import asyncio

    from tickler.adapters.delivery._target import delivery_target, target_timeout
    from tickler.adapters.worker._health import HealthUnavailable
    from tickler.adapters.worker._worker import run_worker
    from tickler.shell import StoreError

    health = _health_address(health_at)
    timeout = target_timeout(target, deliver_timeout)
    if dsn is not None:
        _check_lease(lease_s, timeout)
    try:
        deliver = delivery_target(target, timeout=deliver_timeout, app_dir=app_dir)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    try:
        store = _embedded(store_path) if store_path is not None else _postgres(dsn, schema, lease_s)
    except StoreError as exc:  # a directory or file that cannot be used (permissions, I/O)
        return cannot_use(exc)
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
                max_rate=max_rate,
                health=health,
            )
        )
    except HealthUnavailable as exc:
        raise CliError(str(exc)) from None
    except StoreError as exc:
        if _is_usage(exc):
            raise CliError(str(exc)) from None
        return cannot_use(exc)
    return 0


def _one_source(store_path: str | None, dsn: str | None) -> str | None:
    """The DSN to use: exactly one of --store and --dsn (TICKLER_DSN is
    not asked for beside --store), each with its own options; usage errors
    otherwise."""
    source = click.get_current_context().get_parameter_source
    if store_path is not None and source("dsn") is ParameterSource.ENVIRONMENT:
        dsn = None
    if (store_path is None) == (dsn is None):
        raise CliError("give exactly one of --store PATH and --dsn DSN")
    if store_path is not None:
        if source("lease_s") is ParameterSource.COMMANDLINE:
            raise CliError("--lease is for PostgreSQL (--dsn); an embedded store needs none")
        _check_store_path(store_path)
    return dsn


def _health_address(text: str | None) -> tuple[str, int] | None:
    from tickler.adapters.worker._health import parse_address

    try:
        return parse_address(text) if text is not None else None
    except ValueError as exc:
        raise CliError(str(exc)) from None


def _check_lease(lease_s: float, timeout: float) -> None:
    from tickler.adapters.worker._worker import shortest_lease_s

    if lease_s < shortest_lease_s(timeout):
        # The lease guard would refuse every attempt: nothing would ever be sent.
        raise CliError(
            f"--lease {lease_s:g} is too short for a delivery deadline of {timeout:g} s: "
            f"give at least {shortest_lease_s(timeout):g} s, or a shorter --deliver-timeout"
        )


def _postgres(dsn: str | None, schema: str, lease_s: float) -> WakeStore:
    require_psycopg()
    from tickler.adapters.stores._postgres import PostgresStore

    assert dsn is not None
    try:
        return PostgresStore(dsn, schema=schema, lease_s=lease_s)
    except ValueError as exc:
        raise CliError(str(exc)) from None


def _check_store_path(path: str) -> None:
    """A JSONL store directory or an SQLite store file; anything else is a
    usage error (a worker never makes a store)."""
    from tickler.adapters.read._model import is_dsn, is_sqlite_file

    where = Path(path)
    if is_dsn(path):
        raise CliError("--store takes a path; give a PostgreSQL DSN as --dsn")
    if where.is_dir() or (where.is_file() and is_sqlite_file(where)):
        return
    if where.exists():
        raise CliError(f"--store {path}: not a JSONL store directory nor an SQLite store file")
    raise CliError(f"--store {path}: no such directory or SQLite file")


def _embedded(path: str) -> WakeStore:
    """The JSONL store of a directory, or the SQLite store of a file
    (raises StoreError when it cannot be used)."""
    from tickler.adapters.stores import JsonlStore, SqliteStore

    return JsonlStore(path) if Path(path).is_dir() else SqliteStore(path)


def _is_usage(exc: Exception) -> bool:
    """An unmigrated PostgreSQL schema is the user's to fix (exit 2)."""
    schema = sys.modules.get("tickler.adapters.stores._postgres_schema")
    return schema is not None and isinstance(exc, schema.SchemaMissing)
