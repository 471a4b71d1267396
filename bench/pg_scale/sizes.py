"""The size on disk of each table of the store and of each index
(``pg_relation_size``: the table's heap alone; ``pg_indexes_size``: all its
indexes; ``pg_total_relation_size``: with TOAST and indexes too)."""

from __future__ import annotations

import psycopg

from .load import SCHEMA

TABLES = ("sessions", "events", "snapshots")
WAKE_INDEXES = ("sessions_next_due", "sessions_due_id")  # the worker's, the read model's


def sizes(dsn: str) -> dict[str, int]:
    """``<table> heap``, ``<table> indexes``, ``<table> total`` and
    ``index <name>``, in bytes."""
    found: dict[str, int] = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        for table in TABLES:
            name = f"{SCHEMA}.{table}"
            row = conn.execute(
                "SELECT pg_relation_size(%s), pg_indexes_size(%s), pg_total_relation_size(%s)",
                (name, name, name),
            ).fetchone()
            assert row is not None
            found[f"{table} heap"], found[f"{table} indexes"], found[f"{table} total"] = row
        for index, size in conn.execute(
            "SELECT c.relname, pg_relation_size(c.oid) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s AND c.relkind = 'i' ORDER BY c.relname",
            (SCHEMA,),
        ):
            found[f"index {index}"] = int(size)
    return found
