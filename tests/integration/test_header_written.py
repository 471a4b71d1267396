"""Every header tickler writes carries ``delegationDepth`` (0): the harness's
loader requires it, and would refuse a tickler session file without it."""

from __future__ import annotations

import json
import sqlite3

from tickler.adapters.stores._lines import header_line
from tickler.core import SessionHeader, parse_session_jsonl

from .conftest import Stores


def test_the_header_line_is_the_harness_header() -> None:
    line = header_line(SessionHeader(id="s1", created_at=5))
    assert line == (b'{"type":"session","version":0,"id":"s1","createdAt":5,"delegationDepth":0}\n')


def test_the_header_line_keeps_the_harness_key_order() -> None:
    header = SessionHeader(
        id="child",
        created_at=5,
        cwd="/work",
        parent_session="parent",
        seed_length=2,
        origin="subagent",
        delegation_depth=1,
        agent_preset="reviewer",
    )
    assert list(json.loads(header_line(header))) == [
        "type",
        "version",
        "id",
        "createdAt",
        "cwd",
        "parentSession",
        "seedLength",
        "origin",
        "delegationDepth",
        "agentPreset",
    ]
    assert parse_session_jsonl(header_line(header)).header == header


async def test_every_store_writes_and_reads_delegation_depth_zero(stores: Stores) -> None:
    store = stores.open()
    log = await store.open("s1", created_at=5)
    assert log.header.delegation_depth == 0
    await store.close()
    if stores.kind == "jsonl":
        first = (stores.path / "s1.jsonl").read_bytes().split(b"\n", 1)[0]
    elif stores.kind == "sqlite":
        with sqlite3.connect(stores.path) as conn:
            (first,) = conn.execute("SELECT header FROM sessions WHERE id = 's1'").fetchone()
    else:
        first = header_line(log.header)
    assert json.loads(first)["delegationDepth"] == 0
