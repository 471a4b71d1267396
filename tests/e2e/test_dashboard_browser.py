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
import json
import os
import re
import selectors
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import Page, Route, sync_playwright

import tickler
from tickler import FollowUp, LocalTime, SqliteStore, delivery_target, open_session
from tickler.adapters._times import zone_named, zone_text
from tickler.core.timing._instant import format_instant

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


TARGET = """
import os
from pathlib import Path

def record(message, session):
    with Path(os.environ["OUT"]).open("a") as out:
        out.write(f"{session} {message.key}\\n")
        out.flush()
        os.fsync(out.fileno())
"""
OPERATOR = "e2e-operator"


async def _three_reminders(path: Path) -> None:
    """Session ``ops``: three reminders an hour away."""

    async def deliver(message: FollowUp, session: str) -> None:
        raise AssertionError("nothing is due yet")

    store = SqliteStore(path)
    try:
        async with open_session(store, "ops", host=delivery_target(function=deliver)) as s:
            for prompt in ("stand up", "stretch", "drink water"):
                await s.schedule(prompt, after=timedelta(hours=1))
    finally:
        await store.close()


def _wait_for(condition: Callable[[], bool], bound_s: float, what: str) -> None:
    """Poll for observed progress, with a generous bound (no timing claim)."""
    deadline = time.monotonic() + bound_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting {bound_s:g} s for {what}")
        time.sleep(0.05)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    """A worker serving a fresh SQLite store (``tickler worker --store``),
    and ``tickler ui`` with a token over it: the page's URL, the store and
    the file the worker's target writes each delivery to."""
    path = tmp_path / "store.sqlite"
    asyncio.run(_three_reminders(path))
    app = tmp_path / "app"
    app.mkdir()
    (app / "app_target.py").write_text(TARGET)
    out = tmp_path / "calls.txt"
    env = {k: v for k, v in os.environ.items() if k not in ("TICKLER_DSN", "PYTHONPATH")}
    worker = subprocess.Popen(
        [
            *(sys.executable, "-m", "tickler", "worker", "--store", str(path)),
            *("--deliver", "app_target:record", "--poll", "0.2"),
        ],
        cwd=app,
        env={**env, "OUT": str(out)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    ui = subprocess.Popen(
        [
            *(sys.executable, "-m", "tickler", "ui", "--store", str(path), "--port", "0"),
            *("--refresh", "60", "--by", "nobody-default"),
        ],
        stderr=subprocess.PIPE,
        text=True,
        env={**env, "TICKLER_UI_TOKEN": TOKEN},
    )
    try:
        yield _served_url(ui), path, out
    finally:
        for process in (ui, worker):
            process.terminate()
        _, ui_err = ui.communicate(timeout=30)
        _, worker_err = worker.communicate(timeout=60)
    assert ui.returncode == 0, ui_err
    assert worker.returncode == 0, worker_err
    assert "Traceback" not in worker_err


def _act(page: Page, action: str, reminder_id: str) -> str:
    """Click ``action`` for ``reminder_id`` on the dashboard, confirm it
    naming the operator, and return the outcome's text."""
    page.click(f'#next-24-hours button[data-action="{action}"][data-id="{reminder_id}"]')
    page.wait_for_selector("#question")
    assert reminder_id in page.inner_text("#question")
    page.fill('input[name="by"]', OPERATOR)
    page.click("#confirm")
    page.wait_for_selector("#outcome")
    outcome = page.inner_text("#outcome")
    page.click("#back")
    page.wait_for_selector("#next-24-hours")
    return outcome


def test_an_operator_pauses_and_cancels_by_clicking_while_a_worker_serves(
    served: tuple[str, Path, Path],
) -> None:
    url, path, out = served
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            shown = page.goto(f"{url}?token={TOKEN}")
            assert shown is not None
            assert shown.status == 200
            assert f"pause: reminder schedule-1 of session ops, by {OPERATOR}" in _act(
                page, "pause", "schedule-1"
            )
            assert f"by {OPERATOR}" in _act(page, "cancel", "schedule-2")
            assert "schedule-2" not in page.inner_text("#next-24-hours")
            assert "stand up" in page.inner_text("#paused")

            # The paused reminder falls due (an operator's snooze, from the
            # CLI), and the third is delivered now, by clicking: the worker
            # delivers the third only.
            snoozed = subprocess.run(
                [
                    *(sys.executable, "-m", "tickler", "snooze", str(path), "ops", "schedule-1"),
                    *("1s", "--by", OPERATOR, "--json"),
                ],
                capture_output=True,
                text=True,
                timeout=60,
                check=True,
            )
            due = datetime.fromisoformat(json.loads(snoozed.stdout)["nextDue"])
            _wait_for(lambda: datetime.now(UTC) > due, 30, "schedule-1 to fall due, paused")
            assert f"by {OPERATOR}" in _act(page, "deliver-now", "schedule-3")

            def lines() -> list[str]:
                return out.read_text().splitlines() if out.exists() else []

            _wait_for(lambda: len(lines()) >= 1, 60, "the worker's delivery")
            (call,) = lines()
            assert call.startswith("ops schedule-3@")

            # The session's story names the operator for each action.
            page.click('#sessions a:has-text("ops")')
            page.wait_for_selector("#story")
            story = page.inner_text("#story")
            assert f"paused (by operator {OPERATOR})" in story
            assert f"cancelled by operator {OPERATOR}" in story
            assert f"made due now (by operator {OPERATOR})" in story
            _screenshot(page, "dashboard-operator.png")
            _wait_for(lambda: "delivered" in _reload_story(page), 60, "the delivery in the story")
            assert lines() == [call]
        finally:
            browser.close()


def _reload_story(page: Page) -> str:
    page.reload()
    return page.inner_text("#story")
