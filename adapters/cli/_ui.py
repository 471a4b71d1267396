"""``tickler ui``: the read-only dashboard over a store (the ``ui``
extra), on 127.0.0.1 unless told otherwise; anywhere else only with a
token."""

from __future__ import annotations

import asyncio
import sys
from urllib.parse import urlsplit

import click

from tickler.adapters._redact import redact
from tickler.adapters._times import local_zone
from tickler.adapters.cli._errors import CliError, echo_error
from tickler.adapters.cli._options import (
    configure_logging,
    log_format_option,
    log_level_option,
    profile_option,
)
from tickler.adapters.dashboard._loopback import is_loopback
from tickler.core import Profile, resolve_zone

CANNOT_USE_DATABASE = 1
"""As for ``db migrate`` and ``worker``: the database cannot be reached."""


def store_title(store: str | None, dsn: str | None) -> str:
    """What the page calls the store: the path, or the DSN's host, port
    and database (never its user or password)."""
    if store is not None:
        return store
    assert dsn is not None
    try:
        return redact(_database(dsn), [dsn])
    except ValueError:  # a port urllib cannot read (several hosts): libpq took it
        return "PostgreSQL"


def _database(dsn: str) -> str:
    if dsn.startswith(("postgresql://", "postgres://")):
        parts = urlsplit(dsn)
        where = parts.hostname or "localhost"
        port = f":{parts.port}" if parts.port else ""
        return f"PostgreSQL {where}{port}{parts.path or ''}"
    words = dict(
        word.split("=", 1) for word in dsn.split() if "=" in word and not word.startswith("=")
    )
    where = words.get("host", "localhost")
    port = f":{words['port']}" if "port" in words else ""
    return f"PostgreSQL {where}{port}/{words.get('dbname', '')}"


def _unreachable(exc: Exception) -> bool:
    """Whether ``exc`` says PostgreSQL cannot be reached (its module is
    loaded only with the postgres extra, and only for a DSN)."""
    schema = sys.modules.get("tickler.adapters.stores._postgres_schema")
    return schema is not None and isinstance(exc, schema.DatabaseUnreachable)


def check_options(store: str | None, dsn: str | None, host: str, token: str | None) -> None:
    """Usage errors, before anything is opened: exactly one source, of
    the kind its option says, and a token (not empty) for any address but
    loopback."""
    from tickler.adapters.read._model import is_dsn

    if (store is None) == (dsn is None):
        raise CliError("give exactly one of --store PATH and --dsn DSN")
    if dsn is not None and not is_dsn(dsn):
        raise CliError(f"--dsn {dsn!r} is no PostgreSQL DSN (postgresql://... or key=value words)")
    if store is not None and is_dsn(store):
        raise CliError("--store takes a path; give a PostgreSQL DSN as --dsn")
    if token is not None and not token.strip():
        raise CliError("the token is empty (--token or TICKLER_UI_TOKEN)")
    if token is None and not is_loopback(host):
        raise CliError(
            f"listening on {host} (not loopback) needs a token: --token TOKEN or TICKLER_UI_TOKEN"
        )


@click.command()
@click.option(
    "--store", default=None, metavar="PATH", help="A JSONL store directory or an SQLite store file."
)
@click.option("--dsn", default=None, metavar="DSN", help="A PostgreSQL connection string or URI.")
@click.option(
    "--schema",
    default="tickler",
    show_default=True,
    help="PostgreSQL schema holding tickler's tables.",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; any but loopback needs a token.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port (0: any free one).",
)
@click.option(
    "--token",
    envvar="TICKLER_UI_TOKEN",
    default=None,
    help="Every request must carry it (?token=... or Authorization: Bearer ...); "
    "env TICKLER_UI_TOKEN.",
)
@click.option(
    "--tz",
    "tz_name",
    default=None,
    metavar="ZONE",
    help="Zone for times whose reminder keeps none, besides UTC (default: this machine's "
    "zone: TZ, else /etc/localtime, else UTC).",
)
@click.option(
    "--refresh",
    type=click.IntRange(1, 3600),
    default=10,
    show_default=True,
    help="Seconds between the page's reloads.",
)
@click.option(
    "--by",
    default=None,
    metavar="NAME",
    help="With a token: the operator the action buttons name by default "
    "(default: this OS user; each confirmation page may name another).",
)
@click.option(
    "--wait",
    "wait_s",
    type=click.FloatRange(min=0),
    default=5.0,
    show_default=True,
    metavar="SECONDS",
    help="How long an action waits for a session a worker is delivering.",
)
@click.option("--read-only", is_flag=True, help="No action buttons, even with a token.")
@profile_option
@log_level_option
@log_format_option
def ui(
    *,
    store: str | None,
    dsn: str | None,
    schema: str,
    host: str,
    port: int,
    token: str | None,
    tz_name: str | None,
    refresh: int,
    by: str | None,
    wait_s: float,
    read_only: bool,
    profile: Profile,
    log_level: str,
    log_format: str,
) -> int:
    """Serve a dashboard of a store: its sessions (each with its story,
    operators' changes named), what fires in the next 24 hours and 7 days,
    the delivery history with lateness, and the follow-ups that are failing
    or stuck; every time in the reminder's zone and in UTC. Reading never
    takes a session's lease or lock.

    With a token (even on loopback), each reminder has buttons: pause or
    resume, deliver now, snooze, cancel; each asks for a confirmation that
    names the operator, and is then done as tickler pause ... does it,
    through the session's lock or lease. --read-only leaves them out.

    Exit 0 after Ctrl-C, 1 when PostgreSQL cannot be reached, 2 for usage
    errors (a missing token for an address other than loopback included).
    """
    check_options(store, dsn, host, token)
    zone = local_zone() if tz_name is None else resolve_zone(tz_name)
    if zone is None:
        raise CliError(f"unknown time zone {tz_name!r} (use UTC or an IANA Area/Location name)")
    try:
        from tickler.adapters.dashboard._app import create_app
        from tickler.adapters.dashboard._serve import listen, serve, url_of
        from tickler.adapters.read._model import open_read_model
    except ImportError as exc:
        raise CliError(str(exc)) from None
    from tickler.shell import StoreError

    configure_logging(log_level, log_format)
    source = store if store is not None else dsn
    assert source is not None
    try:
        sock = listen(host, port)
    except OSError as exc:
        raise CliError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None

    async def run() -> None:
        async with open_read_model(source, schema=schema) as model:
            title = store_title(store, dsn)
            operator = None
            if token is not None and not read_only:
                from tickler.adapters.cli._operate import default_operator
                from tickler.adapters.operate._operate import Operator

                operator = Operator(source, schema, by or default_operator(), wait_s, profile)
            app = create_app(
                model,
                token=token,
                zone=zone,
                title=title,
                refresh_seconds=refresh,
                operator=operator,
                source=source,
                schema=schema,
            )
            hint = " (add ?token=YOUR_TOKEN)" if token is not None else ""
            mode = "read-only" if operator is None else "with operator actions"
            click.echo(f"tickler ui: {url_of(sock)}{hint}; {mode}; Ctrl-C stops it", err=True)
            await serve(app, sock)

    try:
        asyncio.run(run())
    except StoreError as exc:
        if not _unreachable(exc):
            raise CliError(str(exc)) from None
        echo_error(str(exc))
        return CANNOT_USE_DATABASE
    except (ImportError, ValueError) as exc:  # no postgres extra; a DSN that does not parse
        raise CliError(str(exc)) from None
    finally:
        sock.close()
    return 0
