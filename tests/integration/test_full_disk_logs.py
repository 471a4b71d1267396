"""A full disk costs a few log lines, not one per retry: each component
logs one line when it starts failing (with the cause) and one when it works
again; the failures in between go to DEBUG.

The disk is made full for the JSONL store by making its writes fail with
ENOSPC (the journal's and the session files'), while the runtime retries
on the virtual clock for a long while and tool calls keep coming.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
from pathlib import Path

import pytest

from tickler.adapters.stores import _files as files
from tickler.adapters.stores._jsonl import JsonlStore
from tickler.shell._clock import VirtualClock
from tickler.shell._host import FollowUp, IdleClaim, ReleaseOnce
from tickler.shell._ports import NewEvent
from tickler.shell._runtime import ScheduleRuntime
from tickler.shell._timers import TimerHeap

T0 = 1_785_931_200_000
JOURNAL = "tickler.adapters.stores._journal"  # its writes: to the journal and the session files
MINUTE_MS = 60_000


class Disk:
    """Makes the store's writes fail with ENOSPC while ``full``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.full = False
        self.refused = 0
        real_write, real_pwrite = files.write_all, files.pwrite_all  # as the journal has them

        def write_all(fd: int, data: bytes) -> None:
            self._check()
            real_write(fd, data)

        def pwrite_all(fd: int, data: bytes, offset: int) -> None:
            self._check()
            real_pwrite(fd, data, offset)

        monkeypatch.setattr(f"{JOURNAL}.write_all", write_all)
        monkeypatch.setattr(f"{JOURNAL}.pwrite_all", pwrite_all)

    def _check(self) -> None:
        if self.full:
            self.refused += 1
            raise OSError(errno.ENOSPC, "No space left on device")


class Taker:
    """A host that takes every follow-up at once."""

    def __init__(self) -> None:
        self.keys: list[str] = []

    def claim_idle(self) -> IdleClaim | None:
        return ReleaseOnce(lambda: None)

    async def when_idle(self) -> None:
        return None

    async def followup(self, message: FollowUp) -> None:
        self.keys.append(message.key)


def loud(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_a_full_disk_logs_one_line_when_it_starts_and_one_when_it_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="tickler")
    disk = Disk(monkeypatch)
    store = JsonlStore(tmp_path / "sessions")
    clock = VirtualClock(T0)
    timers = TimerHeap(clock)
    log = await store.open("s1", created_at=T0)
    host = Taker()
    runtime = ScheduleRuntime(log, host, clock, timers=timers)
    try:
        await runtime.start()
        answer = await runtime.call_tool("schedule_create", {"prompt": "p", "after_seconds": 60})
        assert json.loads(answer)["id"] == "schedule-1"
        caplog.clear()

        disk.full = True
        for _ in range(20):  # the model keeps calling tools
            answer = await runtime.call_tool(
                "schedule_create", {"prompt": "q", "after_seconds": 600}
            )
            assert json.loads(answer)["code"] == "persistence_uncertain"
            await clock.advance(MINUTE_MS // 4)
        await clock.advance(30 * MINUTE_MS, step_ms=1_000)  # the reminder falls due
        assert host.keys == []
        assert disk.refused >= 50  # every commit round tried, and failed
        failing = loud(caplog)
        assert [r.name for r in failing] == ["tickler.runtime"]
        assert "No space left on device" in failing[0].getMessage()
        assert failing[0].exc_info is None  # no traceback at WARNING

        disk.full = False
        for _ in range(3_000):  # a bound on progress: the syncs run on a thread
            if len(host.keys) == 2:
                break
            await clock.advance(1_000)
            await asyncio.sleep(0.001)
        # Due meanwhile: the first reminder, and the one whose barrier
        # failed (its change stayed in the live log, as the tool said).
        assert host.keys == [
            "schedule-1@2026-08-05T12:01:00.000Z",
            "schedule-2@2026-08-05T12:10:00.000Z",
        ]
        recovered = loud(caplog)[len(failing) :]
        assert len(recovered) == len(failing)
        assert "works again" in recovered[0].getMessage()
    finally:
        await runtime.dispose()
        await log.close()
        await store.close()
        await timers.close()


async def test_session_files_that_cannot_be_written_are_reported_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # The journal still takes the records (it writes over zeros written
    # ahead), so flushes succeed; the session files lag behind, and every
    # commit round tries them again.
    caplog.set_level(logging.DEBUG, logger="tickler")
    store = JsonlStore(tmp_path / "sessions")
    logs = [await store.open(f"s{i}", created_at=T0) for i in range(3)]
    for log in logs:
        log.append([NewEvent("note", b"{}", T0)])
    await logs[0].flush()
    failures = 0

    def session_file_full(fd: int, data: bytes) -> None:
        nonlocal failures
        failures += 1
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(f"{JOURNAL}.write_all", session_file_full)
    caplog.clear()
    for round_ in range(40):
        log = logs[round_ % 3]
        log.append([NewEvent("note", b"{}", T0)])
        await log.flush()
    assert failures >= 40
    errors = loud(caplog)
    assert [(r.levelname, r.name) for r in errors] == [("ERROR", "tickler.store")]
    assert "No space left on device" in errors[0].getMessage()

    monkeypatch.setattr(f"{JOURNAL}.write_all", files.write_all)
    logs[0].append([NewEvent("note", b"{}", T0)])
    await logs[0].flush()
    recovered = loud(caplog)[1:]
    assert [(r.levelname, r.name) for r in recovered] == [("WARNING", "tickler.store")]
    assert "written again" in recovered[0].getMessage()
    for log in logs:
        await log.close()
    await store.close()
    reopened = JsonlStore(tmp_path / "sessions")
    again = await reopened.open("s0", created_at=T0)
    assert again.length == 1 + 14 + 1  # nothing was lost meanwhile
    await again.close()
    await reopened.close()
