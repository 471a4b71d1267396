# ruff: noqa: F811 - pytest fixtures imported by name are parameters too
"""``tickler worker`` as a process: SIGTERM finishes the delivery in flight
and exits 0; usage errors and a schema never migrated are one line, exit 2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from .pgsupport import DSN, PgSchema, pg_schema  # noqa: F401 - the fixture
from .worker_support import delivered_keys, followup_keys, seed, session_row, wait_until

HERE = Path(__file__).parent


def worker_env(**extra: str) -> dict[str, str]:
    path = os.environ.get("PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if k != "TICKLER_DSN"}
    return {**env, "PYTHONPATH": os.pathsep.join(p for p in (str(HERE), path) if p), **extra}


def tickler(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tickler.adapters.cli", *args],
        check=False,
        env=env or worker_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


async def test_sigterm_finishes_the_delivery_in_flight_and_exits_0(
    pg_schema: PgSchema, tmp_path: Path
) -> None:
    pg = pg_schema
    seeder = pg.store()
    await seed(seeder, {"s": [{"prompt": "slow", "after_seconds": 1}]})
    await seeder.close()
    out = tmp_path / "target.txt"
    out.touch()
    proc = subprocess.Popen(  # noqa: ASYNC220 - polled without blocking below
        [
            *(sys.executable, "-m", "tickler.adapters.cli", "worker", "--dsn", pg.dsn),
            *("--schema", pg.schema, "--deliver", "worker_targets:slow", "--poll", "0.1"),
        ],
        env=worker_env(WORKER_TARGET_OUT=str(out), WORKER_TARGET_SLEEP="2"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        await wait_until(lambda: "start" in out.read_text(), 60, "the delivery to start")
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    (key,) = {k for _, k in followup_keys(pg, "s")}
    assert out.read_text().split("\n") == [f"start s {key}", f"end s {key}", ""]
    assert proc.returncode == 0, stderr
    assert b"Traceback" not in stderr
    assert delivered_keys(pg, "s") == [("s", key)]  # finished and marked before exiting


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--deliver", "no/such/program"], "delivery command not found"),
        (["--deliver", "worker_no_such_module:deliver"], "cannot import worker_no_such_module"),
        (["--deliver", "worker_targets:missing"], "has no missing"),
        (["--deliver", "worker_targets:slow", "--lease", "2"], "--lease 2 is too short"),
        (["--deliver", "worker_targets:slow", "--concurrency", "0"], "--concurrency"),
    ],
)
def test_usage_error_is_one_line_exit_2(args: list[str], says: str) -> None:
    done = tickler("worker", "--dsn", DSN, "--schema", "nowhere", *args)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("tickler: error: ")
    assert says in lines[0]


def test_missing_dsn_is_one_line_exit_2() -> None:
    done = tickler("worker", "--deliver", "worker_targets:slow")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "tickler: error: give exactly one of --store PATH and --dsn DSN"
    ]


def test_schema_never_migrated_says_to_migrate() -> None:
    done = tickler("worker", "--dsn", DSN, "--schema", "never_migrated_x", "--deliver", "true")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("tickler: error: ")
    assert "tickler db migrate" in lines[0]


SCRIPT = Path(sys.executable).parent / "tickler"  # the console script, as a user runs it
APP = """
import os
from pathlib import Path


async def deliver(message, session):
    with Path(os.environ["WORKER_TARGET_OUT"]).open("a") as out:
        out.write(f"{session} {message.key}\\n")
"""


def newcomer_env(**extra: str) -> dict[str, str]:
    """No PYTHONPATH: only what the worker itself puts on the import path."""
    drop = {"TICKLER_DSN", "PYTHONPATH"}
    return {**{k: v for k, v in os.environ.items() if k not in drop}, **extra}


async def _deliver_once(
    pg: PgSchema, args: list[str], *, cwd: Path, env: dict[str, str], done: Callable[[], bool]
) -> tuple[int, str]:
    """Seed one due reminder, run the worker until ``done()``, SIGTERM it;
    its exit status and stderr."""
    seeder = pg.store()
    await seed(seeder, {"s": [{"prompt": "stretch", "after_seconds": 1}]})
    await seeder.close()
    command = [str(SCRIPT), "worker", "--dsn", pg.dsn, "--schema", pg.schema, "--poll", "0.1"]
    proc = subprocess.Popen(  # noqa: ASYNC220 - polled without blocking below
        [*command, *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        await wait_until(lambda: done() and len(delivered_keys(pg, "s")) == 1, 60, "a delivery")
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, stderr.decode()


async def test_a_worker_run_in_the_app_folder_imports_the_callable_from_it(
    pg_schema: PgSchema, tmp_path: Path
) -> None:
    """``tickler worker --deliver myapp.reminders:deliver`` run from the
    folder that holds ``myapp/``, with no PYTHONPATH, as uvicorn and Celery
    run an app from the working directory."""
    (tmp_path / "myapp").mkdir()
    (tmp_path / "myapp" / "reminders.py").write_text(APP)
    out = tmp_path / "delivered.txt"
    status, stderr = await _deliver_once(
        pg_schema,
        ["--deliver", "myapp.reminders:deliver"],
        cwd=tmp_path,
        env=newcomer_env(WORKER_TARGET_OUT=str(out)),
        done=out.exists,
    )
    assert status == 0, stderr
    ((session, key),) = delivered_keys(pg_schema, "s")
    assert out.read_text() == f"{session} {key}\n"


class _Hook(BaseHTTPRequestHandler):
    posts: ClassVar[list[bytes]] = []

    def do_POST(self) -> None:
        self.posts.append(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("level", ["INFO", "DEBUG"])
async def test_a_url_delivery_logs_no_httpx_line_below_debug(
    level: str, pg_schema: PgSchema, tmp_path: Path
) -> None:
    """httpx logs each request at INFO; the worker's log shows the libraries
    underneath from WARNING up, unless it is asked for DEBUG."""
    _Hook.posts = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/hook"
        status, stderr = await _deliver_once(
            pg_schema,
            ["--deliver", url, "--log-level", level],
            cwd=tmp_path,
            env=newcomer_env(),
            done=lambda: bool(_Hook.posts),
        )
    finally:
        server.shutdown()
        server.server_close()
    assert status == 0, stderr
    assert len(_Hook.posts) == 1
    httpx_lines = [line for line in stderr.splitlines() if " httpx: " in line]
    if level == "DEBUG":
        assert any("HTTP Request: POST" in line for line in httpx_lines), stderr
    else:
        assert httpx_lines == [], stderr


async def test_log_format_json_is_one_object_per_line_naming_the_session(
    pg_schema: PgSchema,
) -> None:
    pg = pg_schema
    seeder = pg.store()
    await seed(seeder, {"s": [{"prompt": "p", "after_seconds": 1}]})
    await seeder.close()
    proc = subprocess.Popen(  # noqa: ASYNC220 - polled without blocking below
        [
            *(sys.executable, "-m", "tickler.adapters.cli", "worker", "--dsn", pg.dsn),
            *("--schema", pg.schema, "--deliver", "false", "--poll", "0.1"),
            *("--log-format", "json"),
        ],
        env=worker_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        # The target fails: the session row counts the failed hand-over.
        def failed_or_exited() -> bool:
            return proc.poll() is not None or session_row(pg, "s")[1] >= 1

        await wait_until(failed_or_exited, 60, "a failed hand-over")
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr
    records = [json.loads(line) for line in stderr.decode().splitlines()]
    assert records, "nothing was logged"
    assert all(r.keys() >= {"time", "level", "logger", "message"} for r in records), records
    assert records[0]["logger"] == "tickler.worker"
    assert records[0]["message"].startswith("worker ")
    (key,) = {k for _, k in followup_keys(pg, "s")}
    failed = [r for r in records if "not taken" in r["message"]]
    assert failed, records
    assert all(r["tickler.session.id"] == "s" for r in failed)
    assert all(r["tickler.occurrence.key"] == key for r in failed)
