"""The first hour with tickler, as a newcomer meets it: every command the
demo suggests runs as printed; times read back in the viewer's zone; a
worker imports the callable from the folder it runs in, or says where it
looked and what to do; a database that cannot be reached is one line and
the same exit status for every command, at once."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import tickler

ROOT = Path(tickler.__file__).resolve().parent
SCRIPT = Path(sys.executable).parent / "tickler"  # the console script make install puts there
HEADER = b'{"type":"session","version":0,"id":"s1","createdAt":1785931200000}\n'
CREATE = (
    b'{"type":"schedule/change","seq":0,"time":1785931200000,"data":{"version":1,'
    b'"operation":"create","schedule":{"id":"schedule-1","kind":"after","prompt":"stretch",'
    b'"afterSeconds":30,"scheduledAt":"2026-08-05T12:00:30.000Z"}}}\n'
)
SUGGESTED = re.compile(r"^\s+\$ (.+)$", re.MULTILINE)
KEPT = re.compile(r"the session log stays at (\S+)\.$", re.MULTILINE)
DELIVER = "async def deliver(message, session):\n    pass\n"


def env(**extra: str) -> dict[str, str]:
    """A newcomer's environment: no model, no DSN, no PYTHONPATH."""
    drop = {"TICKLER_MODEL", "OPENAI_API_KEY", "TICKLER_DSN", "PYTHONPATH", "TZ"}
    return {**{k: v for k, v in os.environ.items() if k not in drop}, **extra}


def run(
    args: list[str], *, cwd: Path, stdin: str = "", timeout: float = 60, **extra: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        cwd=cwd,
        env=env(**extra),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def free_port() -> int:
    """A local port where nothing listens (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


# -- the demo's suggestions ---------------------------------------------------


def test_every_command_the_demo_suggests_runs_as_printed(tmp_path: Path) -> None:
    """``make demo`` runs ``.venv/bin/tickler demo`` in the repository; each
    command it then prints is run as a shell takes it, from another folder,
    with no virtual environment activated; so are the ones those print."""
    home = tmp_path / "home"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script = os.path.relpath(SCRIPT, ROOT)  # as make runs it: .venv/bin/tickler
    demo = run([script, "demo"], cwd=ROOT, timeout=180)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    todo = SUGGESTED.findall(demo.stdout)
    assert todo == [f"{SCRIPT} demo --keep", f"{SCRIPT} chat"]
    ran: list[str] = []
    kept: list[str] = []
    try:
        while todo:
            command = todo.pop(0)
            done = run(
                ["sh", "-c", command], cwd=elsewhere, stdin="exit\n", timeout=180,
                XDG_DATA_HOME=str(home),
            )  # fmt: skip
            assert done.returncode == 0, f"{command}\n{done.stdout}{done.stderr}"
            ran.append(command)
            kept += KEPT.findall(done.stdout)
            todo += [c for c in SUGGESTED.findall(done.stdout) if c not in ran + todo]
        (log,) = kept
        assert ran == [
            f"{SCRIPT} demo --keep",
            f"{SCRIPT} chat",
            f"{SCRIPT} inspect {log}",
            f"{SCRIPT} check {log}",
        ]
        assert (home / "tickler" / "chat.jsonl").is_file()  # chat ran and kept its session
    finally:
        for log in kept:
            shutil.rmtree(Path(log).parent)


# -- times in the viewer's zone -----------------------------------------------


def test_inspect_shows_targets_in_the_machines_zone_by_default(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(HEADER + CREATE)
    command = [str(SCRIPT), "inspect", str(path)]
    result = run([*command, "--json"], cwd=tmp_path, TZ="Asia/Tokyo")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["zone"] == "Asia/Tokyo"
    (active,) = report["active"]
    assert (active["scheduledAt"], active["local"]) == (
        "2026-08-05T12:00:30.000Z",
        "2026-08-05 21:00:30 JST",
    )
    text = run(command, cwd=tmp_path, TZ="Europe/Berlin").stdout
    assert "target (Europe/Berlin)" in text
    assert "2026-08-05 14:00:30 CEST" in text
    # --tz still chooses; an explicit UTC shows UTC.
    utc = run([*command, "--json", "--tz", "UTC"], cwd=tmp_path, TZ="Asia/Tokyo")
    assert json.loads(utc.stdout)["zone"] == "UTC"
    helped = run([str(SCRIPT), "inspect", "--help"], cwd=tmp_path).stdout
    assert "(default: this machine's zone: TZ, else /etc/localtime" in " ".join(helped.split())


def test_chat_says_a_reminders_time_in_the_local_zone_too(tmp_path: Path) -> None:
    """One message, one answer, then exit: the answer gives the time in UTC,
    in the zone the user named and in the machine's zone."""
    proc = subprocess.Popen(
        [str(SCRIPT), "chat", "--store", str(tmp_path)],
        cwd=tmp_path,
        env=env(TZ="Asia/Tokyo"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    watchdog = threading.Timer(120, proc.kill)  # never hang the suite
    watchdog.start()
    try:
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write("remind me at 09:00 Europe/Berlin on 2031-01-02 to call Anna\n")
        proc.stdin.flush()
        lines = []
        for line in proc.stdout:  # until the model has answered
            lines.append(line)
            if "assistant> " in line:
                break
        proc.stdin.write("exit\n")
        proc.stdin.flush()
        rest, stderr = proc.communicate(timeout=60)
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr
    assert "Times are shown in UTC and in Asia/Tokyo" in "".join(lines)
    assert lines[-1].split("assistant> ", 1)[1] == (
        "OK: schedule-1 (at) fires at 2031-01-02T08:00:00.000Z (2031-01-02 09:00:00 CET, "
        "Europe/Berlin; 2031-01-02 17:00:00 JST, Asia/Tokyo): call Anna\n"
    )
    assert "bye" in rest


# -- the worker's import path -------------------------------------------------


def test_a_worker_callable_that_is_not_found_says_where_it_looked_and_the_fix(
    tmp_path: Path,
) -> None:
    dsn = f"postgresql://postgres@127.0.0.1:{free_port()}/test"
    done = run(
        [str(SCRIPT), "worker", "--dsn", dsn, "--deliver", "myapp.reminders:deliver"],
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("tickler: error: cannot import myapp.reminders: no module myapp ")
    assert f"in the import path ({tmp_path}, " in line  # the folder it ran in, first
    assert "--app-dir DIR or PYTHONPATH=DIR" in line


def test_a_missing_module_inside_a_found_package_names_the_package(tmp_path: Path) -> None:
    (tmp_path / "myapp").mkdir()
    (tmp_path / "myapp" / "__init__.py").write_text("")
    dsn = f"postgresql://postgres@127.0.0.1:{free_port()}/test"
    done = run(
        [str(SCRIPT), "worker", "--dsn", dsn, "--deliver", "myapp.reminders:deliver"],
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"tickler: error: cannot import myapp.reminders: package myapp ({tmp_path / 'myapp'}) "
        "has no module reminders\n"
    )


def test_app_dir_names_the_folder_to_import_from(tmp_path: Path) -> None:
    """The callable resolves before the worker connects: with no server,
    the worker gets as far as the database (exit 1), not an import error."""
    app = tmp_path / "app"
    (app / "myapp").mkdir(parents=True)
    (app / "myapp" / "reminders.py").write_text(DELIVER)
    port = free_port()
    dsn = f"postgresql://postgres@127.0.0.1:{port}/test"
    args = [str(SCRIPT), "worker", "--dsn", dsn, "--deliver", "myapp.reminders:deliver"]
    from_cwd = run(args, cwd=app)
    from_app_dir = run([*args, "--app-dir", str(app)], cwd=tmp_path)
    unreachable = f"tickler: error: cannot connect to PostgreSQL at 127.0.0.1:{port}: "
    for done in (from_cwd, from_app_dir):
        assert done.returncode == 1, done.stderr
        assert done.stderr == unreachable + "connection refused\n"
    assert run(args, cwd=tmp_path).returncode == 2  # elsewhere, without --app-dir: not found


# -- a database that cannot be reached ----------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["db", "migrate"],
        ["worker", "--deliver", "true"],
        ["worker", "--deliver", "http://127.0.0.1:9/"],
    ],
    ids=["migrate", "worker", "worker-url"],
)
def test_an_unreachable_database_is_one_line_and_exit_1_at_once(
    command: list[str], tmp_path: Path
) -> None:
    """No retrying for seconds: the subprocess timeout only guards the
    suite; the test asserts the one line and the status."""
    port = free_port()
    for dsn in (
        f"postgresql://postgres@127.0.0.1:{port}/test",
        f"host=127.0.0.1 port={port} user=postgres dbname=test",
    ):
        done = run([str(SCRIPT), *command, "--dsn", dsn], cwd=tmp_path, timeout=20)
        assert done.returncode == 1, done.stderr
        assert done.stderr == (
            f"tickler: error: cannot connect to PostgreSQL at 127.0.0.1:{port}: "
            "connection refused\n"
        )


def test_a_dsn_that_does_not_parse_is_a_usage_error(tmp_path: Path) -> None:
    for command in (["db", "migrate"], ["worker", "--deliver", "true"]):
        done = run([str(SCRIPT), *command, "--dsn", "nonsense"], cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        (line,) = done.stderr.splitlines()
        assert line.startswith("tickler: error: invalid PostgreSQL DSN: ")


def test_the_store_says_the_same_in_code() -> None:
    """``PostgresStore`` fails its first use with ``DatabaseUnreachable`` (a
    ``StoreError``), naming where and why, instead of a pool timeout."""
    from tickler.adapters.stores._postgres import PostgresStore
    from tickler.adapters.stores._postgres_schema import DatabaseUnreachable

    port = free_port()

    async def scenario() -> DatabaseUnreachable:
        store = PostgresStore(f"host=127.0.0.1 port={port} user=postgres dbname=test")
        try:
            with pytest.raises(DatabaseUnreachable) as raised:
                await store.open("s", created_at=0)
        finally:
            await store.close()
        return raised.value

    error = asyncio.run(scenario())
    assert (error.where, error.cause) == (f"127.0.0.1:{port}", "connection refused")
    assert str(error) == f"cannot connect to PostgreSQL at 127.0.0.1:{port}: connection refused"


@pytest.mark.parametrize(
    ("dsn", "where"),
    [
        ("postgresql://app@db:5433/app", "db:5433"),
        ("postgresql://app@db/app", "db:5432"),
        ("host=/var/run/postgresql dbname=x", "/var/run/postgresql/.s.PGSQL.5432"),
        ("host=::1 port=6000", "[::1]:6000"),
        ("host=a,b port=1,2", "a:1, b:2"),
        ("host=a,b port=7", "a:7, b:7"),
        ("dbname=x", "the local socket (port 5432)"),
    ],
)
def test_where_is_read_from_the_dsn(dsn: str, where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from tickler.adapters.stores._postgres_schema import server_address

    monkeypatch.delenv("PGHOST", raising=False)
    monkeypatch.delenv("PGPORT", raising=False)
    assert server_address(dsn) == where


@pytest.mark.parametrize(
    ("message", "cause"),
    [
        (
            'connection failed: connection to server at "127.0.0.1", port 1 failed: '
            "Connection refused\n\tIs the server running on that host?",
            "connection refused",
        ),
        (
            'connection failed: connection to server at "127.0.0.1", port 5432 failed: '
            'FATAL:  database "nosuch" does not exist',
            'database "nosuch" does not exist',
        ),
        (
            'connection is bad: connection to server on socket "/x/.s.PGSQL.5432" failed: '
            "No such file or directory\n\tIs the server running locally?",
            "no such file or directory",
        ),
        ("connection timeout expired", "connection timeout expired"),
        ("", "OperationalError"),
    ],
)
def test_the_cause_is_libpqs_reason_without_its_hints(message: str, cause: str) -> None:
    import psycopg

    from tickler.adapters.stores._postgres_schema import unreachable

    error = unreachable("host=h port=1", psycopg.OperationalError(message))
    assert (error.where, error.cause) == ("h:1", cause)
