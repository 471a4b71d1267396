"""The PostgreSQL store's schema: names, DDL, and the explicit migration.

Everything lives in one PostgreSQL schema (``tickler`` unless chosen), so
several deployments, or test runs, share a database without meeting:

* ``sessions``: one row per session: its header, the number of committed
  events (``length``: the next ``seq``), the wake index ``next_due_at``
  (epoch ms, computed by the core and written in the same transaction as
  the events), and the writer lease (``lease_owner``, ``lease_token`` - a
  fencing token bumped by every grant -, ``lease_until`` on the database's
  clock), and ``failures``, failed worker hand-overs in a row (backoff).
* ``events``: keyed by ``(session_id, seq)``: a seq is never written twice.
* ``snapshots``: one checkpoint per session.
* ``migrations``: the versions applied.
* Indexes for the read model (version 2): the wake index in
  ``(next_due_at, id)`` order, the failing sessions (``failures > 0``), the
  delivery records by time; (version 3) the sessions that paused a
  reminder (a session whose reminders are all paused has no wake).

The schema is created by :func:`migrate` (``tickler db migrate``), never as
a side effect of opening a store: a store over a missing or older schema
refuses to start and says which command to run.
"""

from __future__ import annotations

import math
import os
import re
from typing import Final

from tickler.adapters._extras import missing_extra
from tickler.adapters._redact import redact
from tickler.shell import StoreError

try:
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo
except ImportError as exc:
    raise missing_extra("PostgreSQL", "postgres") from exc

SCHEMA_VERSION: Final = 3
# Version 2 added the read model's indexes (``tickler reminders``, the
# dashboard): the wake index in (next_due_at, id) order for a walk in pages,
# the failing sessions, and the latest deliveries. Version 3 the pause
# index: the schedule changes that pause a reminder, by session, so the read
# model finds a session whose reminders are all paused (it has no wake).
# Building them on a large events table locks writes to it while it runs.
DEFAULT_SCHEMA: Final = "tickler"
# PostgreSQL names are at most 63 bytes, and the NOTIFY channel is the
# schema's name + "_wake": a longer schema would make every notifying commit
# fail ("channel name too long").
_WAKE_SUFFIX: Final = "_wake"
MAX_SCHEMA_LENGTH: Final = 63 - len(_WAKE_SUFFIX)
_NAME: Final = re.compile(rf"[a-z_][a-z0-9_]{{0,{MAX_SCHEMA_LENGTH - 1}}}")
# Serialises concurrent migrations of any tickler schema in one database.
_MIGRATION_LOCK: Final = 0x7469636B6C6572  # "tickler"


class SchemaMissing(StoreError):
    """The database has no (or an older) tickler schema: run the migration."""


DEFAULT_CONNECT_TIMEOUT_S: Final = 10
# libpq's words around the cause: "connection failed: connection to server at
# "127.0.0.1", port 5433 failed: Connection refused"; "FATAL:  database ...".
_CAUSE_PREFIX: Final = re.compile(
    r"^(?:connection (?:failed|is bad): )?"
    r"(?:connection to server (?:at|on socket) .*? failed: )?(?:FATAL: +)?"
)


class DatabaseUnreachable(StoreError):
    """No connection to the database could be made (the server is down or
    unreachable, or refused the login). ``where`` names the host(s) and
    port(s) the DSN gives, ``cause`` is libpq's reason, in a few words."""

    def __init__(self, where: str, cause: str) -> None:
        super().__init__(f"cannot connect to PostgreSQL at {where}: {cause}")
        self.where = where
        self.cause = cause


def with_connect_timeout(dsn: str, timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S) -> str:
    """``dsn`` with a connect timeout, unless it or ``PGCONNECT_TIMEOUT``
    sets one (psycopg would wait over two minutes for a host that never
    answers). ValueError for a DSN that does not parse."""
    params = parse_dsn(dsn)
    if "connect_timeout" in params or os.environ.get("PGCONNECT_TIMEOUT"):
        return dsn
    return make_conninfo(dsn, connect_timeout=max(2, math.ceil(timeout_s)))


def parse_dsn(dsn: str) -> dict[str, str | int | None]:
    """libpq's parameters of ``dsn``; ValueError for a DSN that does not
    parse, saying why without its password (libpq quotes the DSN)."""
    try:
        return conninfo_to_dict(dsn)
    except psycopg.Error as exc:
        why = redact(" ".join(str(exc).split()), [dsn])
        raise ValueError(f"invalid PostgreSQL DSN: {why}") from None


def server_address(dsn: str) -> str:
    """``host:port`` as the DSN (or ``PGHOST``/``PGPORT``) gives them; a
    socket folder as its socket file; several hosts comma separated. No
    piece of the password is shown, even where libpq read one as a host
    or port (a ``/`` in a URI's password); ValueError for a bad DSN."""
    params = parse_dsn(dsn)
    hosts = str(params.get("host") or os.environ.get("PGHOST") or "").split(",")
    ports = str(params.get("port") or os.environ.get("PGPORT") or "5432").split(",")
    ports = ports * len(hosts) if len(ports) == 1 else ports
    shown = []
    for host, port in zip(hosts, ports, strict=False):
        if not host:
            shown.append(f"the local socket (port {port or 5432})")
        elif host.startswith("/"):
            shown.append(f"{host.rstrip('/')}/.s.PGSQL.{port or 5432}")
        elif ":" in host:  # IPv6
            shown.append(f"[{host}]:{port or 5432}")
        else:
            shown.append(f"{host}:{port or 5432}")
    return redact(", ".join(shown), [dsn])


def unreachable(dsn: str, exc: psycopg.Error) -> DatabaseUnreachable:
    """The one-line error for a connection that could not be made: where
    (from the DSN) and libpq's cause, without its hints or the password."""
    lines = str(exc).strip().splitlines()
    cause = _CAUSE_PREFIX.sub("", lines[0].strip() if lines else "")
    if len(cause) > 1 and cause[0].isupper() and cause[1].islower():
        cause = cause[0].lower() + cause[1:]  # "Connection refused" -> "connection refused"
    return DatabaseUnreachable(server_address(dsn), redact(cause, [dsn]) or type(exc).__name__)


def schema_name(name: object) -> str:
    """A schema name that needs no quoting: lower-case letters, digits and
    ``_``, not starting with a digit, at most 58 characters (its NOTIFY
    channel, ``<schema>_wake``, must fit PostgreSQL's 63)."""
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise ValueError(
            f"invalid schema name {name!r}: use 1-{MAX_SCHEMA_LENGTH} of a-z 0-9 _,"
            " not starting with a digit"
        )
    return name


def notify_channel(schema: str) -> str:
    """The LISTEN/NOTIFY channel on which commits announce a nearer wake."""
    return f"{schema}{_WAKE_SUFFIX}"


def _ddl(schema: str) -> tuple[str, ...]:
    s = schema
    return (
        f"CREATE SCHEMA IF NOT EXISTS {s}",
        f"""CREATE TABLE IF NOT EXISTS {s}.migrations (
            version integer PRIMARY KEY,
            applied_at timestamptz NOT NULL DEFAULT now()
        )""",
        f"""CREATE TABLE IF NOT EXISTS {s}.sessions (
            id text PRIMARY KEY,
            header bytea NOT NULL,
            length bigint NOT NULL DEFAULT 0 CHECK (length >= 0),
            next_due_at bigint,
            lease_owner text,
            lease_token bigint NOT NULL DEFAULT 0,
            lease_until timestamptz,
            failures integer NOT NULL DEFAULT 0
        )""",
        f"""CREATE INDEX IF NOT EXISTS sessions_next_due
            ON {s}.sessions (next_due_at) WHERE next_due_at IS NOT NULL""",
        f"""CREATE TABLE IF NOT EXISTS {s}.events (
            session_id text NOT NULL,
            seq bigint NOT NULL CHECK (seq >= 0),
            type text NOT NULL,
            time bigint NOT NULL,
            data bytea NOT NULL,
            PRIMARY KEY (session_id, seq)
        )""",
        f"""CREATE TABLE IF NOT EXISTS {s}.snapshots (
            session_id text PRIMARY KEY,
            through bigint NOT NULL,
            data bytea NOT NULL
        )""",
        # version 2: the read model's
        f"""CREATE INDEX IF NOT EXISTS sessions_due_id
            ON {s}.sessions (next_due_at, id) WHERE next_due_at IS NOT NULL""",
        f"""CREATE INDEX IF NOT EXISTS sessions_failing
            ON {s}.sessions (failures DESC, id) WHERE failures > 0""",
        f"""CREATE INDEX IF NOT EXISTS events_delivered
            ON {s}.events (time) WHERE type = 'tickler/delivered'""",
        # version 3: the pause index (the read model repeats its predicate)
        f"""CREATE INDEX IF NOT EXISTS events_paused
            ON {s}.events (session_id) WHERE type = 'schedule/change'
            AND position('"paused":true'::bytea IN data) > 0""",
    )


def migrate(dsn: str, schema: str = DEFAULT_SCHEMA) -> tuple[int, int]:
    """Create or upgrade the tickler schema in the database at ``dsn``;
    idempotent, safe to run from several processes at once. Returns the
    version before and after (0 when there was none)."""
    schema = schema_name(schema)
    timed = with_connect_timeout(dsn)
    try:
        connection = psycopg.connect(timed, autocommit=True)
    except psycopg.OperationalError as exc:
        raise unreachable(dsn, exc) from exc
    except psycopg.Error as exc:
        raise StoreError(f"migration of schema {schema} failed: {redact(str(exc), [dsn])}") from exc
    try:
        with connection as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            before = _version(conn, schema)
            if before > SCHEMA_VERSION:
                raise StoreError(
                    f"schema {schema} is at version {before}, newer than this tickler "
                    f"({SCHEMA_VERSION}): upgrade tickler"
                )
            for statement in _ddl(schema):
                conn.execute(statement)
            conn.execute(
                f"INSERT INTO {schema}.migrations (version) VALUES (%s) ON CONFLICT DO NOTHING",
                (SCHEMA_VERSION,),
            )
    except psycopg.Error as exc:
        raise StoreError(f"migration of schema {schema} failed: {redact(str(exc), [dsn])}") from exc
    return before, SCHEMA_VERSION


def _version(conn: psycopg.Connection[tuple[object, ...]], schema: str) -> int:
    found = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (f"{schema}.migrations",)).fetchone()
    if found is None or not found[0]:
        return 0
    row = conn.execute(f"SELECT coalesce(max(version), 0) FROM {schema}.migrations").fetchone()
    return 0 if row is None else int(str(row[0]))


async def check_version(conn: psycopg.AsyncConnection[tuple[object, ...]], schema: str) -> None:
    """Raise :class:`SchemaMissing` unless ``schema`` is at this version."""
    cursor = await conn.execute("SELECT to_regclass(%s) IS NOT NULL", (f"{schema}.migrations",))
    found = await cursor.fetchone()
    version = 0
    if found is not None and found[0]:
        cursor = await conn.execute(f"SELECT coalesce(max(version), 0) FROM {schema}.migrations")
        row = await cursor.fetchone()
        version = 0 if row is None else int(str(row[0]))
    if version == SCHEMA_VERSION:
        return
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"schema {schema} is at version {version}, newer than this tickler "
            f"({SCHEMA_VERSION}): upgrade tickler"
        )
    raise SchemaMissing(
        f"the database has no tickler schema {schema!r} at version {SCHEMA_VERSION} "
        f"(found {version}): run tickler db migrate --dsn DSN --schema {schema}"
    )
