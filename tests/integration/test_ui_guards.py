"""The read commands and ``tickler ui`` as a user runs them, against what
a hostile page or a hostile store directory can do: a request naming
another host (DNS rebinding) gets nothing without a token; a FIFO where a
store file belongs is reported and skipped, never waited on; and Ctrl-C
stops the dashboard while a page waits on a store that does not answer.

Every wait here is bounded only as a guard against a hang (a FIFO read
would wait forever): no test asserts how fast anything is. The time from
Ctrl-C to exit is recorded in the summary's figures."""

from __future__ import annotations

import asyncio
import errno
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tickler.adapters.stores._jsonl import JsonlStore

from .pgsupport import FIGURES, PgSchema, pg_schema
from .read_support import Scribe

__all__ = ["pg_schema"]  # the fixture, imported for pytest

TICKLER = [sys.executable, "-m", "tickler", "ui"]
URL_LINE = re.compile(r"^tickler ui: http://127\.0\.0\.1:(\d+)/")
SECRET_PROMPT = "the prompt only this user may read"
CLI = [sys.executable, "-m", "tickler"]
HUNG_CHILD = Path(__file__).with_name("ui_hung_child.py")
HANG_GUARD_S = 60.0  # far beyond any answer; only a hang reaches it


@contextmanager
def _served(args: list[str]) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """``tickler ui ARGS`` on a free port: the process and its port."""
    proc = subprocess.Popen([*TICKLER, *args, "--port", "0"], stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        found = URL_LINE.match(first)
        assert found is not None, f"{first!r} (exit {proc.poll()})"
        yield proc, int(found.group(1))
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            proc.kill()  # it did not stop: the test fails, and leaves no process behind
            proc.communicate()
            raise


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A JSONL store with one session holding one reminder, due in an hour."""

    async def write() -> None:
        sessions = JsonlStore(tmp_path / "sessions")
        now = time.time_ns() // 1_000_000
        try:
            scribe = Scribe(await sessions.open("alice", created_at=now))
            args = {"prompt": SECRET_PROMPT, "after_seconds": 3600}
            await scribe.tool("schedule_create", args, now)
            await scribe.log.close()
        finally:
            await sessions.close()

    asyncio.run(write())
    return tmp_path / "sessions"


def test_without_a_token_a_forged_host_gets_421(store: Path) -> None:
    with _served(["--store", str(store)]) as (proc, port):
        url = f"http://127.0.0.1:{port}/"
        for host in ("attacker.example", f"attacker.example:{port}", f"localhost.example:{port}"):
            forged = httpx.get(url, headers={"Host": host}, timeout=30)
            assert forged.status_code == 421, host
            assert SECRET_PROMPT not in forged.text
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", f"[::1]:{port}"):
            shown = httpx.get(url, headers={"Host": host}, timeout=30)
            assert shown.status_code == 200, host
            assert SECRET_PROMPT in shown.text
        assert proc.poll() is None


def test_with_a_token_any_host_that_carries_it_is_served(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TICKLER_UI_TOKEN", "a-long-enough-token")
    with _served(["--store", str(store)]) as (_, port):
        url = f"http://127.0.0.1:{port}/"
        forged = {"Host": f"dashboard.example:{port}"}
        assert httpx.get(url, headers=forged, timeout=30).status_code == 401
        carried = httpx.get(f"{url}?token=a-long-enough-token", headers=forged, timeout=30)
        assert carried.status_code == 200
        assert SECRET_PROMPT in carried.text


def _tickler(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=HANG_GUARD_S, check=False
    )


def _fifo_in(store: Path, name: str) -> Path:
    fifo = store / name
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    return fifo


def test_a_fifo_named_as_a_session_file_is_reported_and_skipped(store: Path) -> None:
    fifo = _fifo_in(store, "x.jsonl")
    why = f"{fifo}: a FIFO (named pipe), not a regular file"
    checked = _tickler("check", str(store))
    assert checked.returncode == 2, checked.stderr
    assert checked.stdout == f"{store / 'alice.jsonl'}: valid (1 events, 1 active)\n"
    assert checked.stderr == f"tickler: {why}\n"
    alone = _tickler("check", str(fifo))
    assert (alone.returncode, alone.stderr) == (2, f"tickler: {why}\n")
    inspected = _tickler("inspect", str(store))
    assert inspected.returncode == 2, inspected.stderr
    assert SECRET_PROMPT in inspected.stdout
    assert inspected.stderr == f"tickler: {why}\n"
    listed = _tickler("reminders", str(store))
    assert listed.returncode == 1, listed.stderr  # a session that cannot be read
    assert "alice" in listed.stdout
    assert listed.stderr == (
        f"tickler: session x cannot be read: NotRegularFile: {fifo} is a FIFO (named pipe), "
        "not a regular file: refused\n"
    )


def test_a_socket_named_as_a_session_file_is_reported_and_skipped(store: Path) -> None:
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(store / "x.jsonl"))  # its open fails (ENXIO): said as a socket
        checked = _tickler("check", str(store))
        listed = _tickler("reminders", str(store))
    assert checked.returncode == 2, checked.stderr
    assert checked.stderr == f"tickler: {store / 'x.jsonl'}: a socket, not a regular file\n"
    assert listed.returncode == 1, listed.stderr
    assert f"{store / 'x.jsonl'} is a socket, not a regular file: refused" in listed.stderr


def test_a_fifo_in_a_harness_root_is_reported_and_the_walk_goes_on(tmp_path: Path) -> None:
    valid = tmp_path / "_no-cwd" / "s2" / "session.jsonl"
    valid.parent.mkdir(parents=True)
    valid.write_text('{"type":"session","version":0,"id":"s2","createdAt":0}\n')
    fifo = tmp_path / "_no-cwd" / "s1" / "session.jsonl"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    checked = _tickler("check", str(tmp_path))
    assert checked.returncode == 2, checked.stderr
    assert checked.stdout == f'{valid} [session "s2"]: valid (0 events, 0 active)\n'
    assert (
        checked.stderr
        == f'tickler: {fifo} [session "s1"]: a FIFO (named pipe), not a regular file\n'
    )


@pytest.mark.parametrize("name", ["alice.snapshot", "alice.length", ".journal/0-dead.wal"])
def test_a_fifo_among_a_stores_other_files_is_reported(store: Path, name: str) -> None:
    fifo = _fifo_in(store, name)
    checked = _tickler("check", str(store))
    assert checked.returncode == 1, checked.stderr  # damage the store refuses to open
    assert checked.stderr == (
        f"tickler: {fifo}: a FIFO (named pipe), not a regular file: the store refuses to read it\n"
    )
    inspected = _tickler("inspect", str(store))
    assert inspected.returncode == 1, inspected.stderr
    listed = _tickler("reminders", str(store))  # reads the session files alone
    assert listed.returncode == 0, listed.stderr
    assert "alice" in listed.stdout


OPEN_PROGRAM = """
import asyncio, sys
from tickler.adapters.stores import JsonlStore, SqliteStore
from tickler.shell._ports import StoreError

async def main(kind, where, session):
    try:
        store = JsonlStore(where) if kind == "jsonl" else SqliteStore(where)
    except StoreError as exc:
        print(f"store refused: {type(exc).__name__}: {exc}")
        return
    try:
        await store.open(session, created_at=0)
        print("opened")
    except StoreError as exc:
        print(f"session refused: {type(exc).__name__}: {exc}")
    finally:
        await store.close()

asyncio.run(main(*sys.argv[1:]))
"""


@pytest.mark.parametrize(
    ("name", "session", "refused"),
    [
        ("x.jsonl", "x", "session"),
        ("alice.snapshot", "alice", "session"),
        ("alice.length", "alice", "session"),
        (".journal/0-dead.wal", "alice", "store"),
    ],
)
def test_the_store_refuses_a_fifo_at_once(
    store: Path, name: str, session: str, refused: str
) -> None:
    fifo = _fifo_in(store, name)
    done = subprocess.run(
        [sys.executable, "-c", OPEN_PROGRAM, "jsonl", str(store), session],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        check=True,
    )
    assert done.stdout == (
        f"{refused} refused: NotRegularFile: {fifo} is a FIFO (named pipe), "
        "not a regular file: refused\n"
    )


def test_an_sqlite_store_file_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "sessions.db"
    os.mkfifo(fifo)
    for command in (["check"], ["inspect"], ["reminders"]):
        done = _tickler(*command, str(fifo))
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.splitlines()) == 1, done.stderr
    opened = subprocess.run(
        [sys.executable, "-c", OPEN_PROGRAM, "sqlite", str(fifo), "s"],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        check=True,
    )
    why = f"{fifo} is a FIFO (named pipe), not a regular file: refused"
    assert opened.stdout == f"store refused: NotRegularFile: {why}\n"


def test_a_fifo_as_an_sqlite_journal_is_refused(tmp_path: Path) -> None:
    from tickler.adapters.stores import SqliteStore

    path = tmp_path / "sessions.db"

    async def write() -> None:
        sessions = SqliteStore(path)
        try:
            await (await sessions.open("alice", created_at=0)).close()
        finally:
            await sessions.close()

    asyncio.run(write())
    fifo = _fifo_in(tmp_path, "sessions.db-journal")  # SQLite reads a hot journal first
    why = f"{fifo} is a FIFO (named pipe), not a regular file: refused"
    listed = _tickler("reminders", str(path))
    assert (listed.returncode, listed.stderr) == (1, f"tickler: error: {why}\n")
    for command in ("check", "inspect"):
        done = _tickler(command, str(path))
        assert (done.returncode, done.stderr) == (2, f"tickler: {path}: {why}\n")


def test_the_dashboard_over_a_store_holding_a_fifo_shows_the_rest(store: Path) -> None:
    _fifo_in(store, "x.jsonl")
    with _served(["--store", str(store)]) as (_, port):
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=HANG_GUARD_S)
    assert page.status_code == 200
    assert SECRET_PROMPT in page.text
    assert "FIFO (named pipe), not a regular file" in page.text  # the session it cannot read


def _stopped_by_ctrl_c(proc: subprocess.Popen[str]) -> float:
    """SIGINT, then the seconds until the process exited (0 expected)."""
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=HANG_GUARD_S)
    return time.monotonic() - sent


def test_ctrl_c_stops_the_ui_while_a_page_waits_on_a_locked_table(pg_schema: PgSchema) -> None:
    import psycopg

    args = ["--dsn", pg_schema.dsn, "--schema", pg_schema.schema]
    with psycopg.connect(pg_schema.dsn) as locker, _served(args) as (proc, port):
        locker.execute(f"LOCK TABLE {pg_schema.schema}.sessions IN ACCESS EXCLUSIVE MODE")
        answers: list[httpx.Response | httpx.HTTPError] = []
        loading = threading.Thread(target=_get, args=(f"http://127.0.0.1:{port}/", answers))
        loading.start()
        _wait_for_lock_waiter(pg_schema)  # the page's read waits on the lock now
        elapsed = _stopped_by_ctrl_c(proc)
        loading.join(HANG_GUARD_S)
    assert proc.returncode == 0
    _assert_cut(answers)
    FIGURES["tickler ui: seconds from Ctrl-C to exit, a page waiting on a lock"] = elapsed


def _wait_for_lock_waiter(pg_schema: PgSchema) -> None:
    deadline = time.monotonic() + HANG_GUARD_S
    while not pg_schema.query(
        "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        " AND datname = current_database() AND query LIKE %s",
        (f"%{pg_schema.schema}.sessions%",),
    ):
        assert time.monotonic() < deadline, "the page never reached the locked table"
        time.sleep(0.05)


def test_ctrl_c_stops_the_dashboard_while_a_read_hangs_in_its_thread(store: Path) -> None:
    fifo = store.parent / "never-written"
    os.mkfifo(fifo)
    proc = subprocess.Popen(
        [sys.executable, str(HUNG_CHILD), str(store), str(fifo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().split()[1])
        answers: list[httpx.Response | httpx.HTTPError] = []
        loading = threading.Thread(target=_get, args=(f"http://127.0.0.1:{port}/", answers))
        loading.start()
        writer = _open_when_read(fifo)  # the page's read is in its thread, in the FIFO
        try:
            _stopped_by_ctrl_c(proc)
            loading.join(HANG_GUARD_S)
        finally:
            os.close(writer)
    finally:
        if proc.poll() is None:
            proc.kill()
        _, err = proc.communicate(timeout=HANG_GUARD_S)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    _assert_cut(answers)


def _assert_cut(answers: list[httpx.Response | httpx.HTTPError]) -> None:
    """The page in flight when Ctrl-C came was answered that it stops."""
    assert len(answers) == 1
    cut = answers[0]
    assert isinstance(cut, httpx.Response), cut
    assert (cut.status_code, cut.text) == (503, "503: the dashboard is stopping\n")


def _get(url: str, answers: list[httpx.Response | httpx.HTTPError]) -> None:
    try:
        answers.append(httpx.get(url, timeout=HANG_GUARD_S))
    except httpx.HTTPError as exc:
        answers.append(exc)


def _open_when_read(fifo: Path) -> int:
    """A writer's descriptor of ``fifo``, once a reader has opened it (an
    open without waiting fails, ENXIO, until then)."""
    deadline = time.monotonic() + HANG_GUARD_S
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise
        assert time.monotonic() < deadline, "the page never read the store"
        time.sleep(0.05)
