"""The dashboard over real stores (JSONL, SQLite, PostgreSQL) through the
read model, at a fixed instant; and ``tickler ui`` as a user runs it: on
a PostgreSQL DSN, an unreachable database (exit 1), a missing store and a
busy port (exit 2), each refusal in one line."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tickler.adapters._dashboard_app import create_app
from tickler.adapters._read_model import open_read_model
from tickler.adapters._times import zone_named
from tickler.core.timing._instant import format_instant
from tickler.shell._ports import SessionStore

from .conftest import make_store, store_path
from .pgsupport import PgSchema, pg_schema
from .read_support import LATE_PROMPT, PAST, PAUSED_PROMPT, Scribe, write_paused_and_overdue

__all__ = ["pg_schema"]  # the fixture, imported for pytest

T0 = 1_800_000_000_000  # 2027-01-15T08:00:00Z
MIN = 60_000
HOUR = 60 * MIN
NOW = T0 + 6 * MIN
MARKUP = "<b>renew</b> the <script>passport</script>"
TICKLER = [sys.executable, "-m", "tickler", "ui"]
URL_LINE = re.compile(r"^tickler ui: (http://127\.0\.0\.1:\d+/)")
BERLIN = zone_named("Europe/Berlin")
assert BERLIN is not None


@pytest.fixture(params=["jsonl", "sqlite", "postgres"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def source(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> tuple[str, str]:
    """(source, schema) of a store of ``kind`` holding :func:`_write`'s sessions."""
    if kind == "postgres":
        pg: PgSchema = request.getfixturevalue("pg_schema")
        found = pg.dsn, pg.schema
        asyncio.run(_write(pg.store()))
    else:
        found = str(store_path(kind, tmp_path)), "tickler"
        asyncio.run(_write(make_store(kind, tmp_path)))
    return found


async def _write(store: SessionStore) -> None:
    """alpha: an after due in an hour, an every of 5 min delivered 5 s
    late; beta: a one-shot whose hand-over failed 3 times; gamma: markup in
    a prompt, due in two days."""
    try:
        alpha = Scribe(await store.open("alpha", created_at=T0))
        await alpha.tool("schedule_create", {"prompt": "call mum", "after_seconds": 3600}, T0)
        await alpha.tool("schedule_create", {"prompt": "stretch", "every_seconds": 300}, T0)
        await alpha.dispatch(T0 + 5 * MIN)
        await alpha.deliver(T0 + 5 * MIN + 5000)
        beta = Scribe(await store.open("beta", created_at=T0))
        await beta.tool("schedule_create", {"prompt": "pay rent", "after_seconds": 60}, T0)
        await beta.dispatch(T0 + MIN)
        for n in range(3):
            await beta.fail(T0 + MIN + 1000 * (n + 1))
        gamma = Scribe(await store.open("gamma", created_at=T0))
        await gamma.tool("schedule_create", {"prompt": MARKUP, "after_seconds": 2 * 86_400}, T0)
        for scribe in (alpha, beta, gamma):
            await scribe.log.close()
    finally:
        await store.close()


def _section(page: str, name: str) -> str:
    start = page.index(f'<section id="{name}">')
    return page[start : page.index("</section>", start)]


async def test_the_page_over_each_store(source: tuple[str, str]) -> None:
    async with open_read_model(source[0], schema=source[1]) as model:
        app = create_app(model, now=lambda: NOW, zone=BERLIN)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            response = await client.get("/")
    assert response.status_code == 200
    page = response.text
    day = _section(page, "next-24-hours")
    assert "call mum" in day
    assert format_instant(T0 + HOUR) in day
    assert "2027-01-15 10:00:00 CET (Europe/Berlin)" in day  # T0 + 1 h
    assert "stretch" in day  # its next occurrence, at T0 + 10 min
    assert format_instant(T0 + 10 * MIN) in day
    week = _section(page, "next-7-days")
    assert "&lt;b&gt;renew&lt;/b&gt; the &lt;script&gt;passport&lt;/script&gt;" in week
    assert "<script>" not in page
    trouble = _section(page, "trouble")
    assert "pay rent" in trouble
    assert "failing" in trouble
    assert re.search(r"[23] failed", trouble)  # PostgreSQL counts each; a log 1st, 2nd, 4th...
    history = _section(page, "deliveries")
    assert "5.0 s" in history  # stretch, delivered 5 s late
    assert "pay rent" not in history  # keys and ids, not prompts
    sessions = _section(page, "sessions")
    assert [name for name in ("alpha", "beta", "gamma") if name in sessions] == [
        "alpha",
        "beta",
        "gamma",
    ]


async def _page(source: str, schema: str, now: int) -> str:
    async with open_read_model(source, schema=schema) as model:
        app = create_app(model, now=lambda: now, zone=BERLIN)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            response = await client.get("/")
    assert response.status_code == 200
    return response.text


def _rows(section: str) -> list[str]:
    return re.findall(r"<tr class=\"(?:reminder|session)\">(.*?)</tr>", section, re.S)


async def test_paused_reminders_count_and_show_paused_and_overdue_ones_are_marked(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The session whose only reminder is paused counts it (it counted 0 on
    PostgreSQL) and the page lists it as paused, with no due time; a
    reminder past due shows as due, overdue by how much, then stuck."""
    if kind == "postgres":
        pg: PgSchema = request.getfixturevalue("pg_schema")
        source, schema = pg.dsn, pg.schema
    else:
        source, schema = str(store_path(kind, tmp_path)), "tickler"
    await write_paused_and_overdue(kind, source, schema)
    page = await _page(source, schema, PAST + 3 * MIN)
    (paws,) = [row for row in _rows(_section(page, "sessions")) if "paws" in row]
    assert re.findall(r"<td>(\d+)</td>", paws) == ["1", "1"]  # 1 reminder, 1 paused
    (paused,) = _rows(_section(page, "paused"))
    assert PAUSED_PROMPT in paused
    assert '<span class="tag paused">paused</span>' in paused
    assert '<span class="none">' in paused  # no due time
    day = _rows(_section(page, "next-24-hours"))
    (late,) = [row for row in day if "pay the" in row]
    assert '<span class="tag due">due</span>' in late
    assert "overdue 2 min 00 s" in late
    (stretch,) = [row for row in day if "stretch" in row]
    assert '<span class="tag scheduled">scheduled</span>' in stretch
    assert PAUSED_PROMPT not in _section(page, "trouble")
    later = await _page(source, schema, PAST + 20 * MIN)
    trouble = _rows(_section(later, "trouble"))
    assert len(trouble) == 2  # both due, nothing delivered them: stuck
    assert all("stuck" in row and '<span class="tag due">due</span>' in row for row in trouble)
    assert any(LATE_PROMPT.split("\x1b")[0] in row for row in trouble)
    assert "overdue 19 min 00 s" in later


def _served_url(proc: subprocess.Popen[str]) -> str:
    assert proc.stderr is not None
    first = proc.stderr.readline()
    found = URL_LINE.match(first)
    assert found is not None, f"{first!r} (exit {proc.poll()})"
    return found.group(1)


def test_tickler_ui_on_a_postgresql_dsn(pg_schema: PgSchema) -> None:
    asyncio.run(_write(pg_schema.store()))
    args = ["--dsn", pg_schema.dsn, "--schema", pg_schema.schema, "--port", "0"]
    proc = subprocess.Popen([*TICKLER, *args], stderr=subprocess.PIPE, text=True)
    try:
        url = _served_url(proc)
        response = httpx.get(url, timeout=30)
        assert response.status_code == 200
        assert "pay rent" in response.text
        assert "PostgreSQL 127.0.0.1:5432/test" in response.text
        assert httpx.post(url, timeout=30).status_code == 405
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "Traceback" not in err


def test_an_unreachable_database_is_one_line_and_exit_1() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # bound, never listening: refused
        done = subprocess.run(
            [*TICKLER, "--dsn", f"host=127.0.0.1 port={port} dbname=test", "--port", "0"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("tickler: error: ")
    assert f"127.0.0.1:{port}" in lines[0]


def test_a_missing_store_and_a_busy_port_are_usage_errors(tmp_path: Path) -> None:
    missing = subprocess.run(
        [*TICKLER, "--store", str(tmp_path / "nothing"), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert missing.returncode == 2
    assert missing.stderr.splitlines() == [
        f"tickler: error: {tmp_path / 'nothing'}: no such file or directory "
        "(nor a postgresql:// DSN)"
    ]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        taken = subprocess.run(
            [*TICKLER, "--store", str(tmp_path), "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert taken.returncode == 2
    assert len(taken.stderr.splitlines()) == 1, taken.stderr
    assert taken.stderr.startswith(f"tickler: error: cannot listen on 127.0.0.1:{port}: ")


def test_on_every_address_with_a_token(tmp_path: Path) -> None:
    store = tmp_path / "sessions"
    store.mkdir()
    env = {**os.environ, "TICKLER_UI_TOKEN": "a-long-enough-token"}
    args = ["--store", str(store), "--host", "0.0.0.0", "--port", "0"]
    proc = subprocess.Popen([*TICKLER, *args], stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.match(r"^tickler ui: http://0\.0\.0\.0:(\d+)/ \(add \?token=YOUR_TOKEN\)", line)
        assert found is not None, line
        url = f"http://127.0.0.1:{found.group(1)}/"
        assert httpx.get(url, timeout=30).status_code == 401
        assert httpx.get(f"{url}?token=wrong", timeout=30).status_code == 401
        bearer = {"Authorization": "Bearer a-long-enough-token"}
        shown = httpx.get(url, headers=bearer, timeout=30)
        assert shown.status_code == 200
        assert "No sessions in this store." in shown.text
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "a-long-enough-token" not in err  # the token is never printed
