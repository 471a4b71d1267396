"""Many sessions for the embedded stores (a JSONL directory, an SQLite
file), written straight to disk as the stores would write them, with their
wake index rows: for bench/dashboard.py.

Each session is driven by the core's decisions and the runtime's record
encoders (``bench/reminder_rows.py``) into a capturing log; its rows are
then written as the JSONL store writes a session file (the header line, one
line per event) or as the SQLite store inserts them, and its wake index row
as a store writes it at close (the wake the runtime gave, the failure
count, and for JSONL the file's size). The first sessions are also written
through the real ``JsonlStore`` and ``SqliteStore``, and the bench stops
unless their files, rows and wake rows are equal to the generated ones.

The mix, for ``reminders`` over ``sessions``: most sessions hold one-shots
due within 30 days and a third an every (some delivered once, so there is a
delivery history); 1 in 5 paused one of them; 1 in 50 paused all of them
(no wake); 1 in 50 hold one overdue, never dispatched; 1 in 100 a follow-up
whose hand-over keeps failing, 1 in 100 one still waiting; 1 in 100 hold
nothing (their reminders deleted).
"""

from __future__ import annotations

import random
import sqlite3
import sys
import tempfile
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any, Final

from bench.reminder_rows import MIN, Capture, _Writer
from tickler.adapters.stores import JsonlStore, SqliteStore
from tickler.adapters.stores import _sqlite_db as db
from tickler.adapters.stores import _wakes as wakes
from tickler.adapters.stores._lines import encode_batch, header_line
from tickler.adapters.stores._wake_file import FILE_NAME
from tickler.core import SessionHeader
from tickler.shell._ports import NewEvent, SessionLog, SessionStore

HOUR: Final = 60 * MIN
CHECKED: Final = 40
"""Sessions also written through the real stores, to check the files."""


def session_id(n: int) -> str:
    return f"user-{n:06d}"


def spread(total: int, parts: int) -> list[int]:
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


async def write_mixed(log: SessionLog, count: int, rng: random.Random, t0: int) -> None:
    """``count`` reminders in one session, as of ``t0`` (see the module
    docstring for the mix)."""
    writer = _Writer(log)
    start = t0 - 2 * HOUR
    roll = rng.random()
    if count == 0:  # held reminders once, all deleted since
        await writer.tool({"prompt": "gone", "after_seconds": 600}, start)
        gone = writer.state.active[0].id
        await writer.tool({"id": gone}, start + MIN, "schedule_delete")
        return
    left = count
    if roll < 0.01:  # a follow-up whose hand-over keeps failing
        await writer.tool({"prompt": "send the invoice", "after_seconds": 60}, start)
        await writer.dispatch(start + MIN)
        for attempt in range(1, rng.randint(2, 9)):
            await writer.fail(attempt, start + MIN + attempt * 1000)
        left -= 1
    elif roll < 0.02:  # a follow-up waiting for its hand-over
        await writer.tool({"prompt": "renew the domain", "after_seconds": 60}, start)
        await writer.dispatch(start + MIN)
        left -= 1
    elif roll < 0.04:  # due, never dispatched: no process ran the session
        await writer.tool({"prompt": "water the plants", "after_seconds": 60}, start)
        left -= 1
    if left and rng.random() < 1 / 3:
        every = rng.choice([3600, 86_400])
        delivered = rng.random() < 0.5  # once, half an hour ago
        created = t0 - 30 * MIN - (every * 1000 if delivered else 0)
        await writer.tool({"prompt": "stand up and stretch", "every_seconds": every}, created)
        if delivered:
            due = created + every * 1000
            await writer.dispatch(due)
            await writer.deliver(due + rng.randint(0, 10_000))
        left -= 1
    for n in range(left):
        after = rng.randint(3600, 30 * 86_400)
        await writer.tool({"prompt": f"follow up #{n}", "after_seconds": after}, t0 - MIN)
    paused = [r.id for r in writer.state.active if r.prompt.startswith("follow up")]
    pause_all = roll > 0.98
    pause_one = not pause_all and roll > 0.78
    for n, reminder_id in enumerate(paused if pause_all else paused[:1] if pause_one else []):
        await writer.tool({"id": reminder_id, "paused": True}, t0 - MIN + n + 1, "schedule_update")


def plans(sessions: int, reminders: int, seed: int) -> list[tuple[str, int, int]]:
    """(session id, reminders, seed) per session: 1 in 100 hold none, the
    others share ``reminders``."""
    rng = random.Random(seed)
    empty = {n for n in range(sessions) if rng.random() < 0.01}
    counts = iter(spread(reminders, sessions - len(empty)))
    return [
        (session_id(n), 0 if n in empty else next(counts), rng.randrange(2**32))
        for n in range(sessions)
    ]


async def captured(plan: Sequence[tuple[str, int, int]], t0: int) -> list[Capture]:
    logs = []
    for sid, count, seed in plan:
        log = Capture(SessionHeader(id=sid, created_at=t0 - 3 * HOUR))
        await write_mixed(log, count, random.Random(seed), t0)
        logs.append(log)
    return logs


def file_bytes(log: Capture) -> bytes:
    """The session file the JSONL store writes for ``log``."""
    batch = [NewEvent(e.type, bytes(e.data), e.time) for e in log.rows]
    return header_line(log.session) + b"".join(encode_batch(0, batch)[1])


def wake_row(log: Capture, size: int | None) -> tuple[Any, ...]:
    return (log.session.id, log.wake, None, log.failures, size, None)


def write_jsonl(directory: Path, logs: Sequence[Capture]) -> None:
    """The session files and ``.wake.db``, as the JSONL store leaves them."""
    directory.mkdir(parents=True, exist_ok=True)
    rows = []
    for log in logs:
        data = file_bytes(log)
        (directory / f"{log.session.id}.jsonl").write_bytes(data)
        rows.append(wake_row(log, len(data)))
    with closing(sqlite3.connect(directory / FILE_NAME, isolation_level=None)) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        with db.transaction(conn):
            wakes.create(conn)
            conn.executemany("INSERT INTO wakes VALUES (?, ?, ?, ?, ?, ?)", rows)


def write_sqlite(path: Path, logs: Sequence[Capture]) -> None:
    """The sessions' rows and wake rows, as the SQLite store leaves them."""
    with closing(db.connect(path, "NORMAL", 10.0)) as conn, db.transaction(conn):
        conn.executemany(
            "INSERT INTO sessions (id, header) VALUES (?, ?)",
            [(log.session.id, header_line(log.session)[:-1]) for log in logs],
        )
        conn.executemany(
            "INSERT INTO events (session_id, seq, type, time, data) VALUES (?, ?, ?, ?, ?)",
            [
                (log.session.id, e.seq, e.type, e.time, bytes(e.data))
                for log in logs
                for e in log.rows
            ],
        )
        conn.executemany(
            "INSERT INTO wakes VALUES (?, ?, ?, ?, ?, ?)", [wake_row(log, None) for log in logs]
        )


def _index_rows(path: Path) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute("SELECT * FROM wakes ORDER BY session_id").fetchall()


def _sqlite_rows(path: Path) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(path)) as conn:
        return [
            *conn.execute("SELECT id, header FROM sessions ORDER BY id"),
            *conn.execute("SELECT * FROM events ORDER BY session_id, seq"),
            *conn.execute("SELECT * FROM wakes ORDER BY session_id"),
        ]


async def _through(store: SessionStore, plan: Sequence[tuple[str, int, int]], t0: int) -> None:
    try:
        for sid, count, seed in plan:
            log = await store.open(sid, created_at=t0 - 3 * HOUR)
            await write_mixed(log, count, random.Random(seed), t0)
            await log.close()
    finally:
        await store.close()


async def check_against_stores(plan: Sequence[tuple[str, int, int]], t0: int) -> None:
    """The first sessions through the real stores, against the generated
    files and rows; exits when they differ."""
    first = plan[:CHECKED]
    logs = await captured(first, t0)
    with tempfile.TemporaryDirectory(prefix="tickler-bench-check-") as tmp:
        real, made = Path(tmp) / "real", Path(tmp) / "made"
        await _through(JsonlStore(real), first, t0)
        write_jsonl(made, logs)
        for log in logs:
            name = f"{log.session.id}.jsonl"
            if (real / name).read_bytes() != (made / name).read_bytes():
                sys.exit(f"bench: {name} differs from the JSONL store's: fix {__file__}")
        if _index_rows(real / FILE_NAME) != _index_rows(made / FILE_NAME):
            sys.exit(f"bench: the JSONL wake rows differ from the store's: fix {__file__}")
        await _through(SqliteStore(Path(tmp) / "real.db"), first, t0)
        write_sqlite(Path(tmp) / "made.db", logs)
        if _sqlite_rows(Path(tmp) / "real.db") != _sqlite_rows(Path(tmp) / "made.db"):
            sys.exit(f"bench: the SQLite rows differ from the store's: fix {__file__}")
    print(f"generated files and rows equal to the real stores' for the first {CHECKED} sessions")
