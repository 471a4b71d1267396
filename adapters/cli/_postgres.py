"""``tickler db migrate``: the PostgreSQL schema's command."""

from __future__ import annotations

import importlib.util

import click

from tickler.adapters.cli._errors import CliError, echo_error

_DSN_HELP = "PostgreSQL connection string or URI (or set TICKLER_DSN)."
_SCHEMA_HELP = "PostgreSQL schema holding tickler's tables."
CANNOT_USE_DATABASE = 1
"""Exit status of every command that cannot connect to (or use) the database."""


def require_psycopg() -> None:
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
    require_psycopg()
    from tickler.adapters.stores._postgres_schema import DatabaseUnreachable
    from tickler.adapters.stores._postgres_schema import migrate as run_migration
    from tickler.shell import StoreError

    try:
        before, after = run_migration(dsn, schema)
    except DatabaseUnreachable as exc:
        return cannot_use(exc)
    except (ValueError, StoreError) as exc:
        raise CliError(str(exc)) from None
    if before == after:
        click.echo(f"schema {schema} is at version {after}: nothing to do")
    else:
        click.echo(f"schema {schema}: version {before} -> {after}")
    return 0


def cannot_use(exc: Exception) -> int:
    echo_error(str(exc))
    return CANNOT_USE_DATABASE
