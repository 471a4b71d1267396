"""The dashboard as an ASGI app (Starlette): one page, rendered on the
server from a template shipped in the package, that reloads itself, a
view per session, and, with a token and an operator, buttons for the
operator's actions (:mod:`~tickler.adapters.dashboard._actions`).

Needs the ``ui`` extra (Starlette, Jinja2; uvicorn serves it). Only GET
(and HEAD) are answered, and POST for the actions; any other method is 405. With a token, every
request must carry it (``Authorization: Bearer TOKEN`` or ``?token=TOKEN``,
which the page's own refresh keeps), else 401. Without one, only a request
whose ``Host`` names this machine is answered, else 421: a web page whose
own name is made to resolve to 127.0.0.1 (DNS rebinding) is sent with that
name, and so never reads the page through its visitor's browser.
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import Callable
from typing import Final
from urllib.parse import quote
from zoneinfo import ZoneInfo

from tickler.adapters._extras import missing_extra
from tickler.adapters._times import local_zone
from tickler.adapters.dashboard._actions import Actions, forms_for
from tickler.adapters.dashboard._cache import SharedRead
from tickler.adapters.dashboard._loopback import is_loopback_host_header
from tickler.adapters.dashboard._view import gather
from tickler.adapters.operate._operate import Operator
from tickler.adapters.read._model import ReadModel
from tickler.shell import StoreError, SystemClock

try:
    import jinja2
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, PlainTextResponse, Response
    from starlette.routing import Route
    from starlette.types import ASGIApp, Receive, Scope, Send
except ImportError as exc:
    raise missing_extra("dashboard", "ui") from exc

TEMPLATES: Final = "tickler.adapters.dashboard._templates"
_SYSTEM: Final = SystemClock()
# The page runs no script and loads nothing: inline styles only, no frames,
# and the URL (which may hold the token) is never sent on as a referrer.
HEADERS: Final = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def templates() -> jinja2.Environment:
    """The page's templates, read from the installed package; every value
    is escaped unless a template says otherwise (none does)."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader(TEMPLATES, "."),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )


class _TokenGate:
    """401 for every request that does not carry ``token``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._token = token.encode()

    def _carried(self, scope: Scope) -> bool:
        request = Request(scope)
        header = request.headers.get("authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer":
            given = request.query_params.get("token", "")
        return hmac.compare_digest(given.strip().encode(), self._token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._carried(scope):
            response = PlainTextResponse(
                "401: this dashboard needs its token (?token=... or Authorization: Bearer ...)\n",
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="tickler"', **HEADERS},
            )
            await response(scope, receive, send)
            return
        await self._app(scope, receive, send)


class _LoopbackHostGate:
    """421 for every request whose ``Host`` is not a loopback name (see
    :func:`~tickler.adapters.dashboard._loopback.is_loopback_host_header`)."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not is_loopback_host_header(
            Request(scope).headers.get("host")
        ):
            response = PlainTextResponse(
                "421: without a token this dashboard answers only at 127.0.0.1, localhost "
                "or [::1] (the request's Host header names another)\n",
                status_code=421,
                headers=HEADERS,
            )
            await response(scope, receive, send)
            return
        await self._app(scope, receive, send)


def _with_actions(headers: dict[str, str]) -> dict[str, str]:
    """The headers of a dashboard with buttons: its forms post to itself,
    and a browser sends their ``Origin`` (which a ``no-referrer`` policy
    would blank); the URL, which may hold the token, still goes nowhere
    else."""
    policy = headers["Content-Security-Policy"].replace("form-action 'none'", "form-action 'self'")
    return {**headers, "Content-Security-Policy": policy, "Referrer-Policy": "same-origin"}


def create_app(
    model: ReadModel,
    *,
    token: str | None = None,
    now: Callable[[], int] = _SYSTEM.now_ms,
    zone: ZoneInfo | None = None,
    title: str = "dashboard",
    refresh_seconds: int = 10,
    operator: Operator | None = None,
    source: str | None = None,
    schema: str = "tickler",
) -> ASGIApp:
    """The dashboard over ``model`` (a store's read model); ``now`` gives
    epoch milliseconds. Times are shown in UTC and in each reminder's own
    zone, else in ``zone`` (default: this machine's). ``title`` names the
    store on the page (never a password). With ``token`` every request must
    carry it; without, its ``Host`` must be a loopback name (127.0.0.1,
    localhost, [::1], with any port). The store is read at most once per
    ``refresh_seconds``, and that read is shared by every request meanwhile
    (see SharedRead). ``source`` (the store's path or DSN, and its
    ``schema``) adds the session view; ``operator`` adds the operator's
    buttons, but only with a token (see
    :mod:`~tickler.adapters.dashboard._actions`)."""
    viewer = local_zone() if zone is None else zone
    if token is not None and not token.strip():
        raise ValueError("the dashboard token is empty")
    pages = templates()
    page = pages.get_template("dashboard.html")
    forms = None if token is None or operator is None else forms_for(token.strip(), operator)
    headers = HEADERS if forms is None else _with_actions(HEADERS)
    link_query = None
    if source is not None:
        link_query = "" if token is None else f"&token={quote(token.strip(), safe='')}"

    async def read(now_ms: int) -> str:
        view = await gather(model, now_ms, viewer)
        return await asyncio.to_thread(
            page.render,
            page=view,
            title=title,
            refresh=refresh_seconds,
            forms=forms,
            link_query=link_query,
        )

    shared = SharedRead(read, now, refresh_seconds * 1000)
    actions = Actions(
        operator if forms is not None else None,
        forms,
        model,
        pages,
        headers,
        now,
        viewer,
        title,
        schema,
        source,
        shared.forget,
    )

    async def dashboard(request: Request) -> Response:
        try:
            html = await shared.get()
        except StoreError as exc:  # the database went away: say so, and retry on reload
            return PlainTextResponse(
                f"503: cannot read the store: {exc}\n",
                status_code=503,
                headers={"Retry-After": str(refresh_seconds), **HEADERS},
            )
        return HTMLResponse(html, headers=headers)

    async def not_found(request: Request, exc: Exception) -> Response:
        return PlainTextResponse("404: the dashboard is at /\n", status_code=404, headers=HEADERS)

    routes = [Route("/", dashboard, methods=["GET"])]
    if source is not None:
        routes.append(Route("/session", actions.session, methods=["GET"]))
    if forms is not None:
        routes.append(Route("/confirm", actions.confirm, methods=["POST"]))
        routes.append(Route("/act", actions.act, methods=["POST"]))
    app: ASGIApp = Starlette(routes=routes, exception_handlers={404: not_found})
    return _LoopbackHostGate(app) if token is None else _TokenGate(app, token.strip())
