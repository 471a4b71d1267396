"""The dashboard reads its store at most once per refresh interval: requests
that come together wait for one read, not one each; a page within the
interval is the latest read's, and says when that was; a read that failed
is not kept."""

from __future__ import annotations

import asyncio

import httpx
from starlette.types import ASGIApp, Receive, Scope, Send

from tickler.adapters._times import UTC_ZONE
from tickler.adapters.dashboard._app import create_app
from tickler.adapters.dashboard._cache import SharedRead
from tickler.shell._ports import StoreError

from .dashboard_support import ListedModel, reminder

NOW = 1_930_608_000_000  # 2031-03-07T00:00:00Z
SECOND = 1000
HANG_GUARD_S = 30


class Gated(ListedModel):
    """Each read of the store (it starts with the session ids) waits until
    ``release`` is set; ``reads`` counts them."""

    def __init__(self) -> None:
        super().__init__(listed=[reminder("alice", "schedule-1", "join the standup", NOW + 60_000)])
        self.release = asyncio.Event()
        self.reads = 0
        self.fail_next = False

    async def sessions(self) -> list[str]:
        self.reads += 1
        await self.release.wait()
        if self.fail_next:
            self.fail_next = False
            raise StoreError("the disk went away")
        return await super().sessions()


class Arrivals:
    """Sets ``all_in`` once ``expected`` requests reached the app."""

    def __init__(self, app: ASGIApp, expected: int) -> None:
        self.app = app
        self.count = 0
        self.expected = expected
        self.all_in = asyncio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.count += 1
        if self.count == self.expected:
            self.all_in.set()
        await self.app(scope, receive, send)


async def test_requests_that_come_together_share_one_read() -> None:
    model = Gated()
    arrivals = Arrivals(create_app(model, now=lambda: NOW, zone=UTC_ZONE), 5)
    transport = httpx.ASGITransport(app=arrivals)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        pages = [asyncio.create_task(client.get("/")) for _ in range(5)]
        await asyncio.wait_for(arrivals.all_in.wait(), HANG_GUARD_S)
        await asyncio.sleep(0)  # the last one reaches the shared read too
        model.release.set()
        responses = await asyncio.gather(*pages)
    assert model.reads == 1
    assert model.calls == 3  # that read's queries: sessions, reminders, deliveries
    assert [r.status_code for r in responses] == [200] * 5
    assert len({r.text for r in responses}) == 1
    assert "join the standup" in responses[0].text


async def test_a_page_within_the_interval_is_the_last_reads_and_says_when() -> None:
    clock = [NOW]
    model = Gated()
    model.release.set()
    app = create_app(model, now=lambda: clock[0], zone=UTC_ZONE, refresh_seconds=10)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        first = (await client.get("/")).text
        clock[0] = NOW + 9 * SECOND
        again = (await client.get("/")).text
        clock[0] = NOW + 10 * SECOND
        later = (await client.get("/")).text
        clock[0] = NOW  # the clock went back: read again
        back = (await client.get("/")).text
    assert model.reads == 3
    assert again == first
    assert 'as of <span class="utc">2031-03-07T00:00:00.000Z</span>' in again
    assert 'as of <span class="utc">2031-03-07T00:00:10.000Z</span>' in later
    assert "2031-03-07T00:00:00.000Z" in back


async def test_the_interval_runs_from_the_end_of_a_read() -> None:
    """A read slower than the interval is not started again at once."""
    clock = [NOW]
    reads: list[int] = []

    async def read(now_ms: int) -> str:
        reads.append(now_ms)
        clock[0] += 30 * SECOND  # the read took 30 s
        return f"page of {now_ms}"

    shared = SharedRead(read, lambda: clock[0], 10 * SECOND)
    assert await shared.get() == f"page of {NOW}"
    clock[0] += 9 * SECOND
    assert await shared.get() == f"page of {NOW}"
    clock[0] += SECOND
    assert await shared.get() == f"page of {NOW + 40 * SECOND}"
    assert reads == [NOW, NOW + 40 * SECOND]


async def test_a_read_that_failed_is_not_kept() -> None:
    model = Gated()
    model.release.set()
    model.fail_next = True
    app = create_app(model, now=lambda: NOW, zone=UTC_ZONE)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        down = await client.get("/")
        up = await client.get("/")
    assert (down.status_code, up.status_code) == (503, 200)
    assert down.text == "503: cannot read the store: the disk went away\n"
    assert model.reads == 2


async def test_a_caller_that_goes_away_leaves_the_read_to_the_others() -> None:
    release = asyncio.Event()
    started = asyncio.Event()
    reads: list[int] = []

    async def read(now_ms: int) -> str:
        reads.append(now_ms)
        started.set()
        await release.wait()
        return f"page of {now_ms}"

    shared = SharedRead(read, lambda: NOW, 10 * SECOND)
    gone = asyncio.create_task(shared.get())
    stays = asyncio.create_task(shared.get())
    await asyncio.wait_for(started.wait(), HANG_GUARD_S)
    gone.cancel()
    await asyncio.sleep(0)
    release.set()
    assert await asyncio.wait_for(stays, HANG_GUARD_S) == f"page of {NOW}"
    assert gone.cancelled()
    assert await shared.get() == f"page of {NOW}"  # kept for the interval
    assert reads == [NOW]
