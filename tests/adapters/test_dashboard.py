"""The dashboard page over a stand-in read model: what each section lists,
every time in the reminder's zone (else the viewer's) and in UTC, markup
in user text shown as text, the token rule, and GET only."""

from __future__ import annotations

import importlib.resources
import tomllib
from html.parser import HTMLParser
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from starlette.types import ASGIApp

import tickler
from tickler.adapters._times import UTC_ZONE, zone_named
from tickler.adapters.dashboard import _view as dashboard_view
from tickler.adapters.dashboard._app import create_app
from tickler.adapters.dashboard._view import span_text
from tickler.shell._ports import StoreError

from .dashboard_support import ListedModel, delivery, reminder

ROOT = Path(tickler.__file__).resolve().parent
NOW = 1_930_608_000_000  # 2031-03-07T00:00:00Z
HOUR = 3_600_000
BERLIN_9AM = 1_930_636_800_000  # 2031-03-07T08:00:00Z, 09:00 CET
NEW_YORK = 1_930_923_000_000  # 2031-03-10T15:30:00Z, 11:30 EDT (DST began on the 9th)
VIEWER = zone_named("America/Sao_Paulo")  # -03 all year since 2019
assert VIEWER is not None
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)> & "quoted" \'single\''
PAGE_TAGS = {
    "html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "p", "span",
    "div", "b", "section", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip


def _model() -> ListedModel:
    return ListedModel(
        listed=[
            reminder("alice", "schedule-1", "join the standup", BERLIN_9AM, "at", "Europe/Berlin"),
            reminder("bob", "schedule-2", "call mum", NEW_YORK, "at", "America/New_York"),
            reminder("bob", "schedule-3", "water the plants", NOW + 10 * 24 * HOUR, "every"),
            reminder("carol", "schedule-1", "nobody ran me", NOW - HOUR, "after", outbox="pending"),
            reminder(
                "carol",
                "schedule-2",
                "the hook is down",
                NOW + 2 * HOUR,
                "every",
                "Asia/Tokyo",
                outbox="failing",
                failures=3,
            ),
        ],
        delivered=[
            delivery(
                "alice", "schedule-1@1", BERLIN_9AM - 24 * HOUR, BERLIN_9AM - 24 * HOUR + 1_500
            ),
            delivery("dave", "schedule-9@1", NOW - 2 * HOUR, None, status="failing", failures=2),
        ],
    )


def _local(app: ASGIApp) -> TestClient:
    """A client that asks for the page as a browser on this machine does
    (without a token the page answers only a loopback ``Host``)."""
    return TestClient(app, base_url="http://127.0.0.1:8765")


def _page(model: ListedModel | None = None) -> str:
    app = create_app(model or _model(), now=lambda: NOW, zone=VIEWER, title="test store")
    client = _local(app)
    response = client.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    return response.text


def _section(page: str, name: str) -> str:
    start = page.index(f'<section id="{name}">')
    return page[start : page.index("</section>", start)]


class _Parsed(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(html: str) -> _Parsed:
    parsed = _Parsed()
    parsed.feed(html)
    return parsed


def test_the_next_24_hours_show_each_time_in_the_reminders_zone_and_in_utc() -> None:
    day = _section(_page(), "next-24-hours")
    assert "join the standup" in day
    assert "2031-03-07 09:00:00 CET (Europe/Berlin)" in day
    assert "2031-03-07T08:00:00.000Z" in day
    assert "in 8 h 00 min" in day
    assert "the hook is down" in day
    assert "2031-03-07 11:00:00 JST (Asia/Tokyo)" in day
    assert "call mum" not in day


def test_one_to_seven_days_follow_in_their_own_table() -> None:
    week = _section(_page(), "next-7-days")
    assert "call mum" in week
    assert "2031-03-10 11:30:00 EDT (America/New_York)" in week
    assert "2031-03-10T15:30:00.000Z" in week
    assert "join the standup" not in week
    assert "water the plants" not in week  # ten days away


def test_failing_and_stuck_follow_ups_are_listed_together() -> None:
    trouble = _section(_page(), "trouble")
    assert "the hook is down" in trouble
    assert "3 failed" in trouble
    assert "nobody ran me" in trouble  # an hour past due, never fired
    assert '<span class="tag stuck">stuck</span>' in trouble
    assert "1 h 00 min ago" in trouble
    # It keeps no zone of its own: the viewer's zone, and UTC.
    assert "2031-03-06 20:00:00 -03 (America/Sao_Paulo)" in trouble
    assert "2031-03-06T23:00:00.000Z" in trouble
    assert "join the standup" not in trouble


def test_a_viewer_in_utc_gets_each_time_once() -> None:
    model = ListedModel(listed=[reminder("s", "schedule-1", "stretch", NOW + HOUR, "after")])
    page = _local(create_app(model, now=lambda: NOW, zone=UTC_ZONE)).get("/").text
    day = _section(page, "next-24-hours")
    assert "2031-03-07T01:00:00.000Z" in day
    assert "(UTC)" not in day
    assert "times in each reminder's own zone and in UTC" in page


def test_a_reminder_just_due_is_not_stuck_yet() -> None:
    model = ListedModel(listed=[reminder("s", "schedule-1", "firing now", NOW - 60_000)])
    page = _page(model)
    assert "Nothing failing, nothing stuck." in _section(page, "trouble")
    assert "stuck</span>" not in page


def test_the_delivery_history_shows_lateness_and_failures() -> None:
    history = _section(_page(), "deliveries")
    assert "schedule-1@1" in history
    assert "1.5 s" in history
    # The reminder is still active: its zone is known for its past delivery.
    assert "2031-03-06 09:00:01 CET (Europe/Berlin)" in history
    assert "2031-03-06T08:00:01.500Z" in history
    assert "schedule-9@1" in history
    assert "2 failed" in history
    assert "failing" in history


def test_the_sessions_table_counts_each_sessions_reminders() -> None:
    model = _model()
    model.extra_sessions.append("erin")
    sessions = _section(_page(model), "sessions")
    rows = sessions.split('<tr class="session">')[1:]
    assert [row.split("</td>")[0].rsplit(">", 1)[1] for row in rows] == [
        "alice", "bob", "carol", "dave", "erin",
    ]  # fmt: skip
    bob = rows[1]
    assert "<td>2</td>" in bob
    assert "2031-03-10T15:30:00.000Z" in bob  # bob's earliest
    carol = rows[2]
    assert '<td class="fail">1</td>' in carol


def test_sessions_the_read_model_cannot_read_are_named() -> None:
    model = _model()
    model.unreadable.append(("broken", "CorruptScheduleLog: line 3: bad delete"))
    trouble = _section(_page(model), "trouble")
    assert "Sessions that cannot be read" in trouble
    assert "broken" in trouble
    assert "CorruptScheduleLog: line 3: bad delete" in trouble
    assert "Sessions that cannot be read" not in _page()


def test_the_page_refreshes_itself_and_loads_nothing_from_outside() -> None:
    client = _local(create_app(_model(), now=lambda: NOW, zone=VIEWER, refresh_seconds=7))
    response = client.get("/")
    assert '<meta http-equiv="refresh" content="7">' in response.text
    assert "http://" not in response.text
    assert "https://" not in response.text
    assert "<script" not in response.text
    assert "<link" not in response.text
    csp = response.headers["content-security-policy"]
    assert "default-src 'none'" in csp
    assert response.headers["referrer-policy"] == "no-referrer"


def test_markup_in_prompts_ids_and_keys_is_shown_as_text() -> None:
    model = ListedModel(
        listed=[
            reminder(HOSTILE, HOSTILE, HOSTILE, NOW + HOUR, HOSTILE, outbox=HOSTILE, failures=1)
        ],
        delivered=[delivery(HOSTILE, f"{HOSTILE}@1", NOW - HOUR, None, status=HOSTILE)],
        unreadable=[(f"{HOSTILE}-2", HOSTILE)],
    )
    page = _page(model)
    assert "<script>" not in page
    assert "<img" not in page
    assert "&lt;script&gt;" in page
    parsed = _parse(page)
    assert parsed.tags <= PAGE_TAGS
    text = "".join(parsed.text)
    assert text.count(HOSTILE) >= 6  # prompt, ids, session, key, ... shown as written


@pytest.mark.parametrize(
    ("headers", "query", "status"),
    [
        ({}, "", 401),
        ({"Authorization": "Bearer wrong"}, "", 401),
        ({}, "?token=wrong", 401),
        ({}, "?token=s3cret-token", 200),
        ({"Authorization": "Bearer s3cret-token"}, "", 200),
        ({"Authorization": "bearer s3cret-token"}, "", 200),
    ],
)
def test_with_a_token_every_request_must_carry_it(
    headers: dict[str, str], query: str, status: int
) -> None:
    app = create_app(_model(), token="s3cret-token", now=lambda: NOW, zone=VIEWER)
    response = TestClient(app).get(f"/{query}", headers=headers)
    assert response.status_code == status
    if status == 401:
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert "join the standup" not in response.text
    else:
        assert "join the standup" in response.text


def test_without_the_token_even_a_missing_page_is_401() -> None:
    client = TestClient(create_app(_model(), token="s3cret-token", now=lambda: NOW, zone=VIEWER))
    assert client.get("/nothing-here").status_code == 401
    assert client.get("/nothing-here?token=s3cret-token").status_code == 404


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "127.0.0.1:8765",
        "127.3.4.5:80",
        "localhost",
        "LOCALHOST:8765",
        "[::1]",
        "[::1]:8765",
    ],
)
def test_without_a_token_a_loopback_host_gets_the_page(host: str) -> None:
    client = TestClient(create_app(_model(), now=lambda: NOW, zone=VIEWER))
    response = client.get("/", headers={"host": host})
    assert response.status_code == 200
    assert "join the standup" in response.text


@pytest.mark.parametrize(
    "host",
    [
        "attacker.example",
        "attacker.example:8765",
        "localhost.attacker.example:8765",
        "127.0.0.1.nip.io:8765",
        "10.0.0.1:8765",
        "::1",
        "[::2]:8765",
        "127.0.0.1:port",
        "127.0.0.1:8765@attacker.example",
        "",
    ],
)
def test_without_a_token_any_other_host_is_421(host: str) -> None:
    model = _model()
    client = TestClient(create_app(model, now=lambda: NOW, zone=VIEWER))
    for path in ("/", "/nothing-here"):
        response = client.get(path, headers={"host": host})
        assert response.status_code == 421
        assert response.text.startswith("421: without a token this dashboard answers only at ")
        assert "join the standup" not in response.text
    assert model.calls == 0  # nothing was read


def test_with_a_token_any_host_carrying_it_gets_the_page() -> None:
    app = create_app(_model(), token="s3cret-token", now=lambda: NOW, zone=VIEWER)
    client = TestClient(app, base_url="http://dashboard.example.org")
    assert "join the standup" in client.get("/?token=s3cret-token").text
    assert client.get("/").status_code == 401


def test_an_empty_token_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        create_app(_model(), token="  ")


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_the_page_is_read_only(method: str) -> None:
    model = _model()
    client = _local(create_app(model, now=lambda: NOW, zone=VIEWER))
    response = client.request(method, "/")
    assert response.status_code == 405
    assert model.calls == 0  # nothing was read, let alone written
    assert client.head("/").status_code == 200


def test_a_page_after_the_refresh_interval_reads_the_clock_again() -> None:
    clock = [NOW]
    client = _local(create_app(_model(), now=lambda: clock[0], zone=VIEWER))
    assert "join the standup" in _section(client.get("/").text, "next-24-hours")
    clock[0] = NOW + 9 * HOUR
    later = client.get("/").text
    assert "join the standup" not in _section(later, "next-24-hours")
    assert "2031-03-07T09:00:00.000Z" in later


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (0, "0 ms"),
        (850, "850 ms"),
        (12_345, "12.3 s"),
        (245_000, "4 min 05 s"),
        (7_500_000, "2 h 05 min"),
        (273_600_000, "3 d 04 h"),
        (-1_500, "1.5 s"),
    ],
)
def test_durations_read_as_people_say_them(ms: int, text: str) -> None:
    assert span_text(ms) == text


def test_the_template_ships_in_the_package() -> None:
    # The strict editable install (make install) maps only what pyproject
    # declares, as a wheel would hold it: the page comes from there.
    shipped = importlib.resources.files("tickler.adapters.dashboard._templates")
    assert (shipped / "dashboard.html").is_file()
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "tickler.adapters.dashboard._templates" in setuptools["packages"]
    assert setuptools["package-data"]["tickler.adapters.dashboard._templates"] == ["*.html"]


def test_past_the_scan_failing_ones_are_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dashboard_view, "SCAN", 1)
    model = _model()  # five reminders; the failing one is second by due time
    trouble = _section(_page(model), "trouble")
    assert "the hook is down" in trouble
    assert "Counts are of the reminders due first" in _page(model)


def test_a_store_that_cannot_be_read_now_is_503() -> None:
    class Down(ListedModel):
        async def sessions(self) -> list[str]:
            raise StoreError("cannot reach PostgreSQL at 127.0.0.1:5432: connection refused")

    response = _local(create_app(Down(), now=lambda: NOW, zone=VIEWER)).get("/")
    assert response.status_code == 503
    assert response.text == (
        "503: cannot read the store: cannot reach PostgreSQL at 127.0.0.1:5432: "
        "connection refused\n"
    )
    assert response.headers["retry-after"] == "10"


def test_the_ui_extra_is_in_all() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert {name.split(">")[0] for name in extras["ui"]} == {"starlette", "uvicorn", "jinja2"}
    assert set(extras["ui"]) <= set(extras["all"])
