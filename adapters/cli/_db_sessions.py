"""Sessions stored in a database, for ``tickler check`` and ``tickler
inspect``: an SQLite store file or a PostgreSQL DSN. Each session is read
whole (its header and every event, in ``seq`` order) on a read-only
connection: no session is locked or leased, no writer waits.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import msgspec

from tickler.adapters.read._model import is_dsn, is_sqlite_file
from tickler.adapters.stores._files import require_sqlite_files
from tickler.core import ParsedSession, SessionEvent, SessionHeader, event
from tickler.shell import StoreError

_HEADER: Final = msgspec.json.Decoder(SessionHeader)
Row = tuple[Any, ...]


@dataclass(frozen=True)
class DbSession:
    """One stored session: its events as a parsed file would hold them
    (``lines`` are the events' seq), or why it cannot be read."""

    session_id: str
    parsed: ParsedSession | None = None
    problem: str | None = None


def is_database(source: str) -> bool:
    """A PostgreSQL DSN or an SQLite store file (not a session file)."""
    return is_dsn(source) or (Path(source).is_file() and is_sqlite_file(Path(source)))


def unreachable_type(source: str) -> type[Exception] | tuple[()]:
    """The error for a database that cannot be reached, for a DSN (its
    class needs the postgres extra); nothing for a file."""
    if not is_dsn(source):
        return ()
    from tickler.adapters.stores._postgres_schema import DatabaseUnreachable

    return DatabaseUnreachable


def describe(source: str, schema: str) -> str:
    """How a verdict names the store: an SQLite file by its path, a
    PostgreSQL schema by host, database and schema (never the password).
    ValueError for a DSN that does not parse."""
    if not is_dsn(source):
        return source
    from tickler.adapters._redact import redact
    from tickler.adapters.stores._postgres_schema import parse_dsn, server_address

    database = parse_dsn(source).get("dbname") or "postgres"
    return redact(f"postgresql {server_address(source)}/{database} schema {schema}", [source])


def _session(session_id: str, header: bytes, rows: list[Row]) -> DbSession:
    try:
        parsed_header = _HEADER.decode(header)
    except (msgspec.MsgspecError, RecursionError) as exc:
        return DbSession(session_id, problem=f"its stored header is not valid: {exc}")
    events: list[SessionEvent] = []
    for expected, (seq, kind, at, data) in enumerate(rows):
        if int(seq) != expected:
            return DbSession(session_id, problem=f"event {expected} is missing")
        events.append(event(str(kind), int(seq), int(at), bytes(data)))
    lines = tuple(e.seq for e in events)
    return DbSession(session_id, ParsedSession(parsed_header, tuple(events), lines, None))


def read_sessions(source: str, schema: str, session_id: str | None) -> Iterator[DbSession]:
    """Every session of the store (or ``session_id``), in id order. Raises
    StoreError when the store cannot be read at all (DatabaseUnreachable
    for a server that cannot be reached), ValueError for a bad DSN."""
    if is_dsn(source):
        yield from _postgres(source, schema, session_id)
    else:
        yield from _sqlite(Path(source), session_id)


def _sqlite(path: Path, session_id: str | None) -> Iterator[DbSession]:
    uri = path.absolute().as_uri() + "?mode=ro"
    require_sqlite_files(path)  # SQLite's open of a FIFO would wait for a writer
    try:
        with closing(sqlite3.connect(uri, uri=True, isolation_level=None)) as conn:
            if session_id is None:
                heads = conn.execute("SELECT id, header FROM sessions ORDER BY id")
            else:
                heads = conn.execute("SELECT id, header FROM sessions WHERE id = ?", (session_id,))
            for sid, header in heads.fetchall():
                rows = conn.execute(
                    "SELECT seq, type, time, data FROM events WHERE session_id = ? ORDER BY seq",
                    (sid,),
                ).fetchall()
                yield _session(str(sid), bytes(header), rows)
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: not a readable tickler SQLite store ({exc})") from None


def _postgres(dsn: str, schema: str, session_id: str | None) -> Iterator[DbSession]:
    import psycopg

    from tickler.adapters._redact import redact
    from tickler.adapters.stores._postgres_schema import (
        schema_name,
        unreachable,
        with_connect_timeout,
    )

    schema = schema_name(schema)
    try:
        conn = psycopg.connect(with_connect_timeout(dsn), autocommit=True)
    except psycopg.OperationalError as exc:
        raise unreachable(dsn, exc) from exc
    try:
        with conn:
            conn.read_only = True
            found = conn.execute("SELECT to_regclass(%s)", (f"{schema}.sessions",)).fetchone()
            if found is None or found[0] is None:
                raise StoreError(
                    f"the database has no tickler schema {schema!r} "
                    "(give --schema, or create it: tickler db migrate)"
                )
            where, params = ("", ()) if session_id is None else (" WHERE id = %s", (session_id,))
            heads = conn.execute(
                f"SELECT id, header FROM {schema}.sessions{where} ORDER BY id",  # noqa: S608 - a checked name
                params,
            ).fetchall()
            for sid, header in heads:
                rows = conn.execute(
                    f"SELECT seq, type, time, data FROM {schema}.events"  # noqa: S608 - a checked name
                    " WHERE session_id = %s ORDER BY seq",
                    (sid,),
                ).fetchall()
                yield _session(str(sid), bytes(header), rows)
    except psycopg.Error as exc:
        raise StoreError(f"PostgreSQL: {redact(' '.join(str(exc).split()), [dsn])}") from None
