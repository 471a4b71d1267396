"""Helpers for the network-fault tests: a fault proxy per store, a store
that notes when it cut a connection, and the lease audit (triggers that
record every write a lease holder makes, with its lease as it stood)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator

import psycopg

from tickler.adapters.stores._postgres import PostgresStore
from tickler.adapters.stores._postgres_net import Cut

from .faultproxy import FaultProxy
from .pgsupport import PgSchema


class CutNotingStore(PostgresStore):
    """A real store that notes (monotonic time) each round trip it cut."""

    cuts: list[float]

    def _failure(self, exc: psycopg.Error, cut: Cut | None) -> Exception:  # type: ignore[override]
        if cut is not None and cut.fired:
            if not hasattr(self, "cuts"):
                self.cuts = []
            self.cuts.append(time.monotonic())
        return super()._failure(exc, cut)


@contextlib.asynccontextmanager
async def proxied(pg: PgSchema) -> AsyncIterator[FaultProxy]:
    proxy = await FaultProxy.for_dsn(pg.dsn).start()
    try:
        yield proxy
    finally:
        await proxy.close()


def install_lease_audit(pg: PgSchema) -> None:
    """Every write a lease holder makes is recorded with the lease it held
    at that moment: a session row it updates under its token (a commit, a
    renewal, a release: events are only ever inserted by the statement that
    updates their session's row, so a commit is audited there), and a
    snapshot. Grants (a new token) are not writes of a holder."""
    pg.query(
        """
CREATE TABLE {s}.lease_audit (
  session_id text NOT NULL, token bigint, owner text, what text NOT NULL,
  lease_until timestamptz, at timestamptz NOT NULL);
CREATE FUNCTION {s}.audit_session() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.lease_token = OLD.lease_token AND OLD.lease_owner IS NOT NULL THEN
    INSERT INTO {s}.lease_audit VALUES (OLD.id, OLD.lease_token, OLD.lease_owner,
      CASE WHEN NEW.length <> OLD.length THEN 'commit'
           WHEN NEW.lease_owner IS NULL THEN 'release' ELSE 'row' END,
      OLD.lease_until, now());
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER audit_session BEFORE UPDATE ON {s}.sessions
  FOR EACH ROW EXECUTE FUNCTION {s}.audit_session();
CREATE FUNCTION {s}.audit_child() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO {s}.lease_audit
    SELECT NEW.session_id, lease_token, lease_owner, TG_TABLE_NAME, lease_until, now()
      FROM {s}.sessions WHERE id = NEW.session_id;
  RETURN NEW;
END $$;
CREATE TRIGGER audit_snapshot BEFORE INSERT OR UPDATE ON {s}.snapshots
  FOR EACH ROW EXECUTE FUNCTION {s}.audit_child();
"""
    )


def writes_after_expiry(pg: PgSchema) -> list[tuple[object, ...]]:
    """Audited writes made while the writer's lease had expired."""
    return pg.query(
        "SELECT session_id, token, owner, what, lease_until, at FROM {s}.lease_audit"
        " WHERE owner IS NULL OR lease_until IS NULL OR lease_until < at ORDER BY at"
    )


def audited_writes(pg: PgSchema) -> int:
    return int(str(pg.query("SELECT count(*) FROM {s}.lease_audit")[0][0]))
