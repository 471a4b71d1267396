# ruff: noqa: F811 - pytest fixtures imported by name are parameters too
"""``tickler worker --health``: readiness follows the store. Over real HTTP,
a worker behind a fault proxy is not ready while PostgreSQL cannot be
reached for longer than its bound, ready again once it can, and not ready
while it drains after SIGTERM; liveness never asks the database. As a
process, on an SQLite store, it serves both and stops cleanly; a bad or
busy address is a usage error."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from pathlib import Path

import httpx

from tickler.adapters.stores._postgres import PostgresStore
from tickler.adapters.stores._sqlite import SqliteStore
from tickler.adapters.worker._health import HealthServer, Readiness
from tickler.adapters.worker._worker import Worker
from tickler.shell._host import FollowUp

from .net_support import proxied
from .pgsupport import PgSchema, pg_schema  # noqa: F401 - the fixture
from .worker_support import Recorder, seed, wait_until

BOUND_S = 1.0  # the readiness bound of the in-process worker (the CLI's: max(3 polls, 10 s))


async def until_status(http: httpx.AsyncClient, path: str, status: int) -> httpx.Response:
    """Ask until ``path`` answers ``status`` (observed, with a generous bound)."""
    answers: list[httpx.Response] = []

    async def ask() -> None:
        answers.append(await http.get(path))

    deadline = asyncio.get_running_loop().time() + 60
    while True:
        await ask()
        if answers[-1].status_code == status:
            return answers[-1]
        assert asyncio.get_running_loop().time() < deadline, f"{path}: {answers[-1].text}"
        await asyncio.sleep(0.05)


async def test_readiness_follows_the_database_and_the_drain(pg_schema: PgSchema) -> None:
    pg = pg_schema
    recorder = Recorder()
    in_target = asyncio.Event()
    release = asyncio.Event()

    async def hold(message: FollowUp, session: str) -> None:
        in_target.set()
        await release.wait()

    seeder = pg.store()
    async with proxied(pg) as proxy:
        store = PostgresStore(proxy.dsn(pg.dsn), schema=pg.schema, round_trip_s=1.0)
        worker = Worker(store, recorder.target("w", before=hold), poll_s=0.1, ready_bound_s=BOUND_S)
        server = HealthServer(worker.readiness)
        _, port = await server.start("127.0.0.1", 0)
        stop = asyncio.Event()
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
                answer = await http.get("/readyz")
                assert (answer.status_code, answer.text) == (503, "not ready: starting\n")
                running = asyncio.ensure_future(worker.run(stop))
                await until_status(http, "/readyz", 200)

                proxy.down()  # PostgreSQL cannot be reached: connections refused
                answer = await until_status(http, "/readyz", 503)
                assert answer.text.startswith("not ready: no successful store round trip for ")
                assert answer.text.endswith(f"(the bound is {BOUND_S:g} s)\n")
                assert (await http.get("/livez")).status_code == 200  # never the database's
                proxy.heal()
                await until_status(http, "/readyz", 200)

                # Draining: a delivery in flight when the worker is asked to stop.
                await seed(seeder, {"s": [{"prompt": "p", "after_seconds": 1}]})
                await asyncio.wait_for(in_target.wait(), 60)
                stop.set()
                answer = await http.get("/readyz")
                assert (answer.status_code, answer.text) == (
                    503,
                    "not ready: stopping (deliveries in flight finish)\n",
                )
                assert (await http.get("/livez")).status_code == 200
                release.set()
                await asyncio.wait_for(running, 60)
        finally:
            stop.set()
            release.set()
            await server.close()
            await store.close()
            await seeder.close()
    assert [c.session for c in recorder.calls] == ["s"]


TARGET = textwrap.dedent(
    """
    def deliver(message, session):
        pass
    """
)
LISTENING = re.compile(r"health on http://127\.0\.0\.1:(\d+)/livez")


def worker_process(store: Path, app: Path, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TICKLER_DSN", "PYTHONPATH")}
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "tickler", "worker", "--store", str(store)),
            *("--deliver", "app_target:deliver", "--poll", "0.2", "--log-level", "INFO"),
            *args,
        ],
        cwd=app,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


async def test_the_worker_process_serves_health_and_stops_on_sigterm(tmp_path: Path) -> None:
    store_file = tmp_path / "store.db"
    await SqliteStore(store_file).close()  # an empty store
    app = tmp_path / "app"
    app.mkdir()
    (app / "app_target.py").write_text(TARGET)
    proc = worker_process(store_file, app, "--health", "127.0.0.1:0")
    assert proc.stderr is not None
    try:
        line = await asyncio.to_thread(proc.stderr.readline)
        while LISTENING.search(line) is None:
            assert line, f"the worker ended before it listened (exit {proc.poll()})"
            line = await asyncio.to_thread(proc.stderr.readline)
        port = int(LISTENING.search(line)[1])  # type: ignore[index]
        assert await asyncio.to_thread(get, port, "/livez") == (200, "live\n")
        await wait_until(lambda: get(port, "/readyz") == (200, "ready\n"), 60, "ready")
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.to_thread(proc.communicate, timeout=60)
    assert proc.returncode == 0, err


async def test_a_bad_or_busy_health_address_is_a_usage_error(tmp_path: Path) -> None:
    store_file = tmp_path / "store.db"
    await SqliteStore(store_file).close()
    app = tmp_path / "app"
    app.mkdir()
    (app / "app_target.py").write_text(TARGET)
    bad = worker_process(store_file, app, "--health", "localhost:http")
    _, err = await asyncio.to_thread(bad.communicate, timeout=60)
    assert bad.returncode == 2
    assert err.strip().splitlines() == [
        "tickler: error: --health localhost:http: give PORT or HOST:PORT (such as 127.0.0.1:8080)"
    ]

    taken = HealthServer(lambda: Readiness(True, "ready"))
    _, port = await taken.start("127.0.0.1", 0)
    try:
        busy = worker_process(store_file, app, "--health", f"127.0.0.1:{port}")
        _, err = await asyncio.to_thread(busy.communicate, timeout=60)
    finally:
        await taken.close()
    assert busy.returncode == 2
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"tickler: error: --health 127.0.0.1:{port}: cannot listen: ")
    assert "Traceback" not in err
