"""``tickler ui`` as a user runs it, against what a hostile page or a
hostile store directory can do: a request naming another host (DNS
rebinding) gets nothing without a token."""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tickler.adapters.stores._jsonl import JsonlStore

from .read_support import Scribe

TICKLER = [sys.executable, "-m", "tickler", "ui"]
URL_LINE = re.compile(r"^tickler ui: http://127\.0\.0\.1:(\d+)/")
SECRET_PROMPT = "the prompt only this user may read"


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
        proc.communicate(timeout=30)


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
