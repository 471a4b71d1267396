"""The dashboard's operator actions over a real JSONL store: buttons only
with a token (and an operator), each action a POST from the dashboard's
own page (its Origin, its CSRF token) that first asks for a confirmation
naming the operator; the change is logged naming them and shows in the
session view."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tickler.adapters.dashboard._app import create_app
from tickler.adapters.operate._operate import Operator
from tickler.adapters.read._files import JsonlReadModel
from tickler.adapters.stores import JsonlStore
from tickler.core import UpdateChange, decode_change
from tickler.shell._clock import SystemClock
from tickler.shell._runtime import ScheduleRuntime

TOKEN = "s3cret-token"
ORIGIN = {"Origin": "http://testserver"}


class _NeverIdle:
    """A host that never takes a turn: the reminders only wait."""

    def followup(self, message: object) -> None:
        raise AssertionError("nothing is due in these tests")

    def claim_idle(self) -> object:
        return None

    async def when_idle(self) -> None:
        await asyncio.Event().wait()


async def _seed(directory: Path) -> None:
    store = JsonlStore(directory)
    log = await store.open("s1", created_at=SystemClock().now_ms())
    runtime = ScheduleRuntime(log, _NeverIdle(), SystemClock())  # type: ignore[arg-type]
    try:
        await runtime.start()
        for prompt in ("water the plants", "call mum"):
            answer = await runtime.call_tool(
                "schedule_create", {"prompt": prompt, "after_seconds": 3600}
            )
            assert '"state":"scheduled"' in answer
    finally:
        await runtime.dispose()
        await log.close()
        await store.close()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    directory = tmp_path / "sessions"
    asyncio.run(_seed(directory))
    return directory


def _client(store: Path, *, token: str | None = TOKEN, operator: bool = True) -> TestClient:
    app = create_app(
        JsonlReadModel(store),
        token=token,
        operator=Operator(str(store), default_by="ana") if operator else None,
        source=str(store),
        refresh_seconds=60,
    )
    return TestClient(app, base_url="http://testserver")


@pytest.fixture
def client(store: Path) -> Iterator[TestClient]:
    with _client(store) as found:
        yield found


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found is not None
    return found.group(1)


def _form(page: str, action: str = "pause", reminder_id: str = "schedule-1") -> dict[str, str]:
    return {"csrf": _csrf(page), "session": "s1", "id": reminder_id, "action": action}


def _changes(store: Path) -> list[object]:
    text = (store / "s1.jsonl").read_bytes().splitlines()[1:]
    events = [line for line in text if b'"schedule/change"' in line]
    return [decode_change(json.dumps(json.loads(e)["data"])) for e in events]


def test_without_a_token_there_are_no_buttons_and_no_action_routes(store: Path) -> None:
    client = TestClient(
        create_app(JsonlReadModel(store), operator=Operator(str(store)), source=str(store)),
        base_url="http://127.0.0.1:8765",
    )
    page = client.get("/")
    assert page.status_code == 200
    assert "water the plants" in page.text
    assert "<form" not in page.text
    assert "form-action 'none'" in page.headers["content-security-policy"]
    assert client.post("/confirm", data={}, headers=ORIGIN).status_code in (404, 405)
    assert client.post("/act", data={}, headers=ORIGIN).status_code in (404, 405)


def test_read_only_with_a_token_has_no_buttons(store: Path) -> None:
    page = _client(store, operator=False).get(f"/?token={TOKEN}")
    assert "<form" not in page.text
    assert _client(store, operator=False).post(f"/act?token={TOKEN}").status_code in (404, 405)


def test_with_a_token_each_reminder_has_buttons(client: TestClient) -> None:
    page = client.get(f"/?token={TOKEN}")
    assert page.status_code == 200
    for action in ("pause", "deliver-now", "snooze", "cancel"):
        assert f'data-action="{action}" data-id="schedule-1"' in page.text
    assert 'method="post"' in page.text
    assert f'action="/confirm?token={TOKEN}"' in page.text
    assert "form-action 'self'" in page.headers["content-security-policy"]
    assert page.headers["referrer-policy"] == "same-origin"


@pytest.mark.parametrize(
    ("headers", "change", "status"),
    [
        ({}, {}, 403),  # no Origin: not from a page of ours
        ({"Origin": "http://evil.example"}, {}, 403),
        ({"Origin": "null"}, {}, 403),
        ({"Origin": "http://testserver.evil.example"}, {}, 403),
        ({"Origin": "http://testserver:8080"}, {}, 403),
        (ORIGIN, {"csrf": "forged"}, 403),
        (ORIGIN, {"csrf": ""}, 403),
        (ORIGIN, {"action": "explode"}, 400),
        (ORIGIN, {"session": ""}, 400),
    ],
)
def test_an_action_not_from_the_dashboard_page_is_refused(
    client: TestClient, store: Path, headers: dict[str, str], change: dict[str, str], status: int
) -> None:
    form = {**_form(client.get(f"/?token={TOKEN}").text), **change}
    for path in ("/confirm", "/act"):
        refused = client.post(f"{path}?token={TOKEN}", data=form, headers=headers)
        assert refused.status_code == status
    assert len(_changes(store)) == 2  # the creates only


def test_an_action_needs_the_token_too(client: TestClient, store: Path) -> None:
    form = _form(client.get(f"/?token={TOKEN}").text)
    assert client.post("/act", data=form, headers=ORIGIN).status_code == 401
    assert len(_changes(store)) == 2


def test_an_action_is_confirmed_then_logged_naming_the_operator(
    client: TestClient, store: Path
) -> None:
    form = _form(client.get(f"/?token={TOKEN}").text)
    asked = client.post(f"/confirm?token={TOKEN}", data=form, headers=ORIGIN)
    assert asked.status_code == 200
    assert "Pause reminder" in asked.text
    assert 'name="by" value="ana"' in asked.text
    assert len(_changes(store)) == 2  # asking changes nothing
    done = client.post(f"/act?token={TOKEN}", data={**form, "by": "bo"}, headers=ORIGIN)
    assert done.status_code == 200
    assert "by bo" in done.text
    *_, paused = _changes(store)
    assert paused == UpdateChange(id="schedule-1", paused=True, by="bo")
    # The main page shows it at once (its shared read was let go), and the
    # session view tells who did it.
    main = client.get(f"/?token={TOKEN}").text
    assert 'data-action="resume" data-id="schedule-1"' in main
    story = client.get(f"/session?id=s1&token={TOKEN}")
    assert story.status_code == 200
    assert re.search(r'<tr class="step paused">.*?<td class="by">bo</td>', story.text, re.S)


def test_snooze_and_cancel_from_the_dashboard(client: TestClient, store: Path) -> None:
    page = client.get(f"/?token={TOKEN}").text
    snooze = {**_form(page, "snooze", "schedule-2"), "snooze": "1d"}
    assert client.post(f"/act?token={TOKEN}", data=snooze, headers=ORIGIN).status_code == 200
    cancel = _form(page, "cancel", "schedule-1")
    assert client.post(f"/act?token={TOKEN}", data=cancel, headers=ORIGIN).status_code == 200
    snoozed, cancelled = _changes(store)[2:]
    assert isinstance(snoozed, UpdateChange)
    assert snoozed.by == "ana"  # the default operator when the form names none
    assert getattr(cancelled, "by", None) == "ana"
    story = client.get(f"/session?id=s1&token={TOKEN}").text
    assert "cancelled by operator ana" in story
    again = client.post(f"/act?token={TOKEN}", data=cancel, headers=ORIGIN)
    assert again.status_code == 409
    assert "is done" in again.text


def test_the_session_view_of_an_unknown_session_is_404(client: TestClient) -> None:
    assert client.get(f"/session?id=nope&token={TOKEN}").status_code == 404
    assert client.get(f"/session?id=../x&token={TOKEN}").status_code == 400


def test_a_tls_proxy_in_front_keeps_the_origin_check(client: TestClient) -> None:
    """Behind a TLS proxy the page's Origin is https, the request http."""
    form = _form(client.get(f"/?token={TOKEN}").text)
    asked = client.post(
        f"/confirm?token={TOKEN}", data=form, headers={"Origin": "https://testserver"}
    )
    assert asked.status_code == 200
