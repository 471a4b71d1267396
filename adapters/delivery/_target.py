"""Which delivery target a worker or a session uses: one factory,
:func:`delivery_target`, over the three kinds (a command, a URL, a Python
function). It sits above the kinds' modules, so that none of them imports
another to choose."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal, TypeAlias, cast

from tickler.adapters.delivery._callable import (
    CALLABLE_NAME,
    DEFAULT_CALLABLE_TIMEOUT_S,
    DeliverCallable,
    DeliverFunction,
    is_host_factory,
    load_callable,
)
from tickler.adapters.delivery._hosts import (
    DEFAULT_COMMAND_TIMEOUT_S,
    DEFAULT_URL_TIMEOUT_S,
    DeliverCommand,
    DeliverUrl,
    _positive,
)
from tickler.shell import AgentHost

if TYPE_CHECKING:
    from tickler.shell import Session


TargetKind: TypeAlias = Literal["command", "url", "function"]
TargetFactory: TypeAlias = Callable[["Session"], AgentHost]
"""Builds a session's delivery target (``open_session(..., host=...)``)."""


def target_kind(target: str) -> TargetKind:
    """The kind of a target given as one string (``tickler worker --deliver
    TARGET``): an ``http(s)://`` URL, a ``module:function`` name, or else a
    command."""
    if target.startswith(("http://", "https://")):
        return "url"
    if CALLABLE_NAME.fullmatch(target):
        return "function"
    return "command"


def default_timeout(kind: TargetKind) -> float:
    """The total deadline of one attempt when none is given."""
    if kind == "url":
        return DEFAULT_URL_TIMEOUT_S
    return DEFAULT_CALLABLE_TIMEOUT_S if kind == "function" else DEFAULT_COMMAND_TIMEOUT_S


def target_timeout(target: str, timeout: float | None = None) -> float:
    """The total deadline of one attempt for the one-string ``target``:
    ``timeout``, or the default of the target's kind."""
    return timeout if timeout is not None else default_timeout(target_kind(target))


def delivery_target(
    target: str | None = None,
    *,
    command: str | Sequence[str] | None = None,
    url: str | None = None,
    function: DeliverFunction | str | None = None,
    timeout: float | None = None,
    app_dir: str | None = None,
) -> TargetFactory:
    """The host factory of one delivery target, for
    ``open_session(store, id, host=delivery_target(...))``. Exactly one of:

    * ``command``: run it with the follow-up JSON on stdin
      (:class:`~tickler.adapters.delivery._hosts.DeliverCommand`; an argv,
      or a string split like a shell would, run without one);
    * ``url``: POST the follow-up JSON to it
      (:class:`~tickler.adapters.delivery._hosts.DeliverUrl`);
    * ``function``: call it (a callable, or a ``module:function`` name) as
      ``function(message, session)``, or ``function(message, session,
      tools)`` with the session's tools
      (:class:`~tickler.adapters.delivery._callable.DeliverCallable`);
    * ``target``: one of those as one string, as ``tickler worker
      --deliver`` takes it (see :func:`target_kind`).

    ``timeout`` is the total deadline of one attempt (default: 30 s for a
    command or a function, 10 s for a URL). A ``module:function`` name is
    imported with ``app_dir`` first on the import path, when given. All is
    checked now, not at the first reminder: ValueError for not exactly one
    target, a bad URL or timeout, a command not found, a name that does not
    import."""
    if sum(value is not None for value in (target, command, url, function)) != 1:
        raise ValueError("give exactly one delivery target: command, url, function or target")
    if target is not None:
        kind = target_kind(target)
        command = target if kind == "command" else None
        url = target if kind == "url" else None
        function = target if kind == "function" else None
    if command is not None:
        return _command_target(command, _timeout("command", timeout))
    if url is not None:
        return _url_target(url, _timeout("url", timeout))
    assert function is not None
    return _function_target(function, _timeout("function", timeout), app_dir)


def _timeout(kind: TargetKind, timeout: float | None) -> float:
    return _positive(default_timeout(kind) if timeout is None else timeout)


def _command_target(command: str | Sequence[str], seconds: float) -> TargetFactory:
    DeliverCommand(command, session="-", timeout=seconds)  # checks the program now
    return lambda session: DeliverCommand(command, session=session.id, timeout=seconds)


def _url_target(url: str, seconds: float) -> TargetFactory:
    DeliverUrl(url, session="-", timeout=seconds)  # checks the URL now
    return lambda session: DeliverUrl(url, session=session.id, timeout=seconds)


def _function_target(
    function: DeliverFunction | str, seconds: float, app_dir: str | None
) -> TargetFactory:
    name = function if isinstance(function, str) else None
    found = load_callable(function, app_dir=app_dir) if isinstance(function, str) else function
    if is_host_factory(found):
        return cast("TargetFactory", found)
    return lambda session: DeliverCallable(
        found, session=session.id, timeout=seconds, name=name, tools=session.tools
    )
