"""``tickler ui`` in a real headless browser: the system's Chromium (the
Debian package ``make test`` installs where missing; never a browser
Playwright downloads) loads the page of a real SQLite store, after a
session made reminders through ``open_session``, and sees them with their
times in the zone given (``--tz``: a reminder's log keeps no zone) and in
UTC, markup in a prompt shown as text, the token rule and the page
reloading itself. The screenshot is kept under
tests/artifacts/."""

from __future__ import annotations

import asyncio
import os
import re
import selectors
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import Page, Route, sync_playwright

import tickler
from tickler import FollowUp, LocalTime, SqliteStore, delivery_target, open_session
from tickler.adapters._times import zone_named, zone_text
from tickler.core._instant import format_instant

CHROMIUM = Path(os.environ.get("TICKLER_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = Path(tickler.__file__).resolve().parent / "tests" / "artifacts"
TOKEN = "e2e-token-0123456789"
HOSTILE = "<img src=x onerror=\"document.title='pwned'\"><b>not bold</b> & more"
URL_LINE = re.compile(r"^tickler ui: (http://127\.0\.0\.1:\d+/) ")


async def _make_store(path: Path) -> tuple[int, int]:
    """A session that schedules a standup in Berlin a few hours from now, a
    prompt full of markup, and a one-second reminder it delivers; returns
    the standup's and the markup's due instants (ms)."""
    delivered = asyncio.Event()

    async def deliver(message: FollowUp, session: str) -> None:
        delivered.set()

    berlin = zone_named("Europe/Berlin")
    assert berlin is not None
    # A wall time read off a real instant exists (no DST gap to refuse).
    target = (datetime.now(UTC) + timedelta(hours=3)).astimezone(berlin)
    standup_at = LocalTime(
        target.date(), target.time().replace(second=0, microsecond=0), berlin.key
    )
    store = SqliteStore(path)
    try:
        async with open_session(store, "team-berlin", host=delivery_target(function=deliver)) as s:
            standup = await s.schedule("join the standup", at=standup_at)
            hostile = await s.schedule(HOSTILE, after=timedelta(hours=5))
            await s.schedule("stretch", after=timedelta(seconds=1))
            await asyncio.wait_for(delivered.wait(), timeout=15)
    finally:
        await store.close()
    return _ms(standup.due), _ms(hostile.due)


def _ms(moment: datetime) -> int:
    return round(moment.timestamp() * 1000)


@pytest.fixture
def dashboard(tmp_path: Path) -> Iterator[tuple[str, tuple[int, int]]]:
    """``tickler ui`` on a free loopback port over a fresh SQLite store
    (its URL, and the due instants :func:`_make_store` returned)."""
    path = tmp_path / "store.sqlite"
    dues = asyncio.run(_make_store(path))
    env = {**os.environ, "TICKLER_UI_TOKEN": TOKEN}
    # The log keeps an ``at``'s UTC target only: times show in --tz, and UTC.
    args = ["ui", "--store", str(path), "--port", "0", "--refresh", "1", "--tz", "Europe/Berlin"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tickler", *args], stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        yield _served_url(proc), dues
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err  # SIGTERM ends the serving, exit 0


def _served_url(proc: subprocess.Popen[str]) -> str:
    """The URL ``tickler ui`` prints once it listens (within 15 s)."""
    assert proc.stderr is not None
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stderr, selectors.EVENT_READ)
        deadline = time.monotonic() + 15
        seen = []
        while time.monotonic() < deadline and selector.select(deadline - time.monotonic()):
            line = proc.stderr.readline()
            if not line:
                break
            seen.append(line)
            if found := URL_LINE.match(line):
                return found.group(1)
    raise AssertionError(f"tickler ui printed no URL: {''.join(seen)!r} (exit {proc.poll()})")


def _screenshot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=True)
    print(f"dashboard screenshot: {path}")
    return path


def test_the_dashboard_in_a_real_browser(dashboard: tuple[str, tuple[int, int]]) -> None:
    url, (standup_ms, hostile_ms) = dashboard
    assert CHROMIUM.exists(), f"{CHROMIUM} is missing: make browser installs it"
    berlin = zone_named("Europe/Berlin")
    assert berlin is not None
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            refused = page.goto(url)
            assert refused is not None
            assert refused.status == 401
            assert "join the standup" not in page.content()

            # The page reloads every second: let the first request through
            # and hold the next, so the page read below stays the one
            # loaded, and the held request proves that it reloads by itself.
            requests: list[Route] = []

            def hold(route: Route) -> None:
                requests.append(route)
                if len(requests) == 1:
                    route.continue_()

            page.route(lambda address: address == f"{url}?token={TOKEN}", hold)
            shown = page.goto(f"{url}?token={TOKEN}")
            assert shown is not None
            assert shown.status == 200

            day = page.locator("#next-24-hours").inner_text()
            assert "join the standup" in day
            assert f"{zone_text(standup_ms, berlin)} (Europe/Berlin)" in day
            assert format_instant(standup_ms) in day
            # Markup in a prompt is text on the page: no image, no bold, no script ran.
            assert HOSTILE in day
            assert format_instant(hostile_ms) in day
            assert page.locator("img").count() == 0
            assert page.locator("#next-24-hours b").count() == 0
            assert page.title().startswith("tickler · ")  # the onerror never ran
            history = page.locator("#deliveries").inner_text()
            assert "team-berlin" in history
            assert "delivered" in history
            assert "team-berlin" in page.locator("#sessions").inner_text()
            assert page.locator('meta[http-equiv="refresh"]').get_attribute("content") == "1"
            _screenshot(page, "dashboard.png")

            for _ in range(50):  # the reload comes within a second or so
                if len(requests) > 1:
                    break
                page.wait_for_timeout(100)
            assert [route.request.url for route in requests[:2]] == [f"{url}?token={TOKEN}"] * 2
            with page.expect_event("load", timeout=10_000):
                requests[1].continue_()
            assert "join the standup" in page.locator("#next-24-hours").inner_text()
        finally:
            browser.close()
