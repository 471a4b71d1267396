"""The dashboard's operator actions and session view over each store (a
JSONL directory, an SQLite file, a PostgreSQL schema): a confirmed pause
and cancel are logged naming the operator, through the session's lock or
lease, and the session view, which reads the session's whole log, tells
who did them."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import httpx
import pytest

from tickler.adapters.dashboard._app import create_app
from tickler.adapters.dashboard._session_history import read_session
from tickler.adapters.operate._operate import Operator
from tickler.adapters.read._model import open_read_model
from tickler.core import SCHEDULE_CHANGE, ScheduleChange, decode_change
from tickler.core._model import DeleteChangeV2, UpdateChange
from tickler.shell._ports import SessionStore

from .conftest import make_store, store_path
from .pgsupport import PgSchema, pg_schema
from .read_support import T0, Scribe

__all__ = ["pg_schema"]  # the fixture, imported for pytest

TOKEN = "t0ken"
ORIGIN = {"Origin": "http://127.0.0.1"}


async def _seed(store: SessionStore) -> None:
    log = await store.open("s1", created_at=T0)
    scribe = Scribe(log)
    for prompt in ("one", "two"):
        await scribe.tool("schedule_create", {"prompt": prompt, "after_seconds": 3600}, T0)
    await log.close()
    await store.close()


@pytest.fixture(params=["jsonl", "sqlite", "postgres"])
def source(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """The store's source (a path or DSN) and schema, its session written."""
    kind = str(request.param)
    if kind == "postgres":
        pg: PgSchema = request.getfixturevalue("pg_schema")
        asyncio.run(_seed(pg.store()))
        return pg.dsn, pg.schema
    asyncio.run(_seed(make_store(kind, tmp_path)))
    return str(store_path(kind, tmp_path)), "tickler"


def _changes(source: str, schema: str) -> list[ScheduleChange]:
    parsed = read_session(source, schema, "s1")
    assert parsed is not None
    return [decode_change(e.data) for e in parsed.events if e.type == SCHEDULE_CHANGE]


async def test_confirmed_actions_over_each_store(source: tuple[str, str]) -> None:
    path, schema = source
    async with open_read_model(path, schema=schema) as model:
        app = create_app(
            model,
            token=TOKEN,
            operator=Operator(path, schema, default_by="ana"),
            source=path,
            schema=schema,
        )
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            # Due in 2096: beyond the main page's week, in the session view.
            page = (await client.get(f"/session?id=s1&token={TOKEN}")).text
            assert 'data-action="pause" data-id="schedule-1"' in page
            found = re.search(r'name="csrf" value="([^"]+)"', page)
            assert found is not None
            for action, reminder_id in (("pause", "schedule-1"), ("cancel", "schedule-2")):
                form = {"csrf": found.group(1), "session": "s1", "id": reminder_id}
                form |= {"action": action, "by": "bo"}
                asked = await client.post(f"/confirm?token={TOKEN}", data=form, headers=ORIGIN)
                assert asked.status_code == 200
                done = await client.post(f"/act?token={TOKEN}", data=form, headers=ORIGIN)
                assert done.status_code == 200, done.text
            story = await client.get(f"/session?id=s1&token={TOKEN}")
    assert story.status_code == 200
    assert "paused (by operator bo)" in story.text
    assert "cancelled by operator bo" in story.text
    assert _changes(path, schema)[2:] == [
        UpdateChange(id="schedule-1", paused=True, by="bo"),
        DeleteChangeV2(id="schedule-2", by="bo"),
    ]
