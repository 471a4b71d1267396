"""The dashboard's operator actions and its session view.

Buttons are served only when the dashboard has a token (even on
loopback) and an :class:`~tickler.adapters.operate._operate.Operator`. Every
action is two POSTs: the button asks for a confirmation page, whose form
(naming the operator) does it. Each POST must come from the dashboard's
own pages: an ``Origin`` header naming the request's own ``Host`` (a
browser sends one with every POST; the pages' referrer policy keeps it),
and the form's CSRF token, besides the dashboard's token. The action
goes through the session's lock or lease, as ``tickler pause`` does.

The session view (``/session?id=...``) tells a session's story from its
whole log, every operator's change with their name.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Final, cast
from urllib.parse import quote
from zoneinfo import ZoneInfo

from tickler.adapters._extras import missing_extra
from tickler.adapters.dashboard._session_history import history, read_session
from tickler.adapters.dashboard._view import ReminderLine, moment, reminder_line
from tickler.adapters.operate._operate import ACTIONS, Action, Operator, OperatorError
from tickler.adapters.read._model import ReadModel
from tickler.core import CorruptScheduleLog
from tickler.shell import StoreError

try:
    import jinja2
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, PlainTextResponse, Response
except ImportError as exc:
    raise missing_extra("dashboard", "ui") from exc

SNOOZES: Final = {"15m": 900, "1h": 3600, "1d": 86_400}
"""The snoozes a button offers."""
_FIELDS: Final = ("session", "id", "action")


@dataclass(frozen=True)
class Forms:
    """What the templates need to draw the buttons: the query that carries
    the token, the CSRF token, the operator's default name."""

    query: str
    csrf: str
    default_by: str
    snoozes: tuple[str, ...] = tuple(SNOOZES)


def forms_for(token: str, operator: Operator) -> Forms:
    return Forms(f"?token={quote(token, safe='')}", secrets.token_urlsafe(32), operator.default_by)


def _same_origin(request: Request) -> bool:
    """The request comes from a page of this dashboard: its ``Origin``
    names the ``Host`` it was sent to (over http, or https when a TLS
    proxy is in front)."""
    origin, host = request.headers.get("origin"), request.headers.get("host")
    if origin is None or host is None:
        return False
    return origin in (f"http://{host}", f"https://{host}")


def _refused(status: int, text: str, headers: Mapping[str, str]) -> Response:
    return PlainTextResponse(f"{status}: {text}\n", status_code=status, headers=dict(headers))


@dataclass
class Actions:
    """The routes' handlers (see the module docstring)."""

    operator: Operator | None
    forms: Forms | None
    model: ReadModel
    pages: jinja2.Environment
    headers: Mapping[str, str]
    now: Callable[[], int]
    viewer: ZoneInfo
    title: str
    schema: str
    source: str | None
    changed: Callable[[], None]  # the main page's shared read is stale

    async def _form(self, request: Request) -> dict[str, str] | Response:
        """The POST's fields, after the same-origin and CSRF checks."""
        if self.operator is None or self.forms is None:
            return _refused(
                404, "this dashboard has no actions (start it with a token)", self.headers
            )
        if not _same_origin(request):
            return _refused(
                403, "the request does not come from this dashboard's page", self.headers
            )
        form = await request.form()
        fields = {key: value for key, value in form.items() if isinstance(value, str)}
        given = fields.get("csrf", "").encode()
        if not hmac.compare_digest(given, self.forms.csrf.encode()):
            return _refused(
                403, "the form's CSRF token is missing or wrong: reload the page", self.headers
            )
        if any(not fields.get(name) for name in _FIELDS) or fields["action"] not in ACTIONS:
            return _refused(400, "the form names no session, reminder or action", self.headers)
        if fields["action"] == "snooze" and fields.get("snooze") not in SNOOZES:
            return _refused(400, "the form names no snooze", self.headers)
        return fields

    async def confirm(self, request: Request) -> Response:
        fields = await self._form(request)
        if isinstance(fields, Response):
            return fields
        page = self.pages.get_template("confirm.html")
        html = page.render(title=self.title, fields=fields, forms=self.forms)
        return HTMLResponse(html, headers=dict(self.headers))

    async def act(self, request: Request) -> Response:
        fields = await self._form(request)
        if isinstance(fields, Response):
            return fields
        assert self.operator is not None
        by = fields.get("by", "").strip() or self.operator.default_by
        action = cast(Action, fields["action"])
        snooze = SNOOZES.get(fields.get("snooze", "")) if action == "snooze" else None
        try:
            done = await self.operator.act(fields["session"], action, fields["id"], by, snooze)
        except OperatorError as exc:
            page = self.pages.get_template("done.html")
            html = page.render(
                title=self.title, fields=fields, done=None, error=str(exc), forms=self.forms
            )
            return HTMLResponse(html, status_code=409, headers=dict(self.headers))
        self.changed()
        page = self.pages.get_template("done.html")
        html = page.render(title=self.title, fields=fields, done=done, error=None, forms=self.forms)
        return HTMLResponse(html, headers=dict(self.headers))

    async def session(self, request: Request) -> Response:
        session_id = request.query_params.get("id", "")
        if self.source is None:
            return _refused(404, "this dashboard has no session view", self.headers)
        now_ms = self.now()
        try:
            parsed = await asyncio.to_thread(read_session, self.source, self.schema, session_id)
            if parsed is None:
                return _refused(404, f"no session {session_id!r} in this store", self.headers)
            told = await asyncio.to_thread(history, parsed, now_ms)
            rows = await self.model.reminders(now_ms=now_ms, session_id=session_id)
        except (StoreError, ValueError, CorruptScheduleLog) as exc:
            # a bad id or a corrupt log is the request's; a store that fails, not
            status = 400 if isinstance(exc, ValueError | CorruptScheduleLog) else 503
            return _refused(status, f"cannot read the session: {exc}", self.headers)
        lines: list[ReminderLine] = [reminder_line(r, now_ms, self.viewer) for r in rows]
        page = self.pages.get_template("session.html")
        html = page.render(
            title=self.title,
            session_id=session_id,
            reminders=lines,
            steps=[(moment(s.at_ms, now_ms, self.viewer), s) for s in reversed(told.steps)],
            told=told.told,
            created=told.created,
            forms=self.forms,
            now=moment(now_ms, now_ms, self.viewer),
        )
        return HTMLResponse(html, headers=dict(self.headers))


Handler = Callable[[Request], Awaitable[Response]]
