"""A delivery target that is a Python callable, named ``module:function``.

The callable is called as ``function(message, session)`` with the
:class:`~tickler.shell._host.FollowUp` (``key``, ``text``, ``occurrences``)
and the session id; it may be ``async def`` or a plain function (run in a
thread, so it does not hold the event loop). Returning means delivered;
raising means not delivered (the follow-up stays in the outbox and comes
again with backoff). Each attempt has a total deadline: an async callable is
cancelled at it; a plain function's thread cannot be stopped, so it runs on,
but the attempt counts as failed.

A typical callable resumes the user's agent: it loads the conversation for
``session`` and runs one turn with ``message.text`` as the user message (with
the PydanticAI or OpenAI Agents adapter), keeping ``message.key`` so a repeat
after a crash is dropped.

A callable that declares a third parameter, ``function(message, session,
tools)``, also gets the session's tools (``session.tools``: ``call_tool``,
e.g. for ``schedule_toolset(tools)``), so the resumed turn can create, list
and delete reminders while the worker holds the session: the hand-over runs
outside the session's queue, so those calls never wait on the delivery.
:func:`~tickler.adapters.delivery._target.delivery_target` (``function=``) makes
the host factory that passes them.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import inspect
import re
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final, cast

from tickler.adapters.delivery._hosts import DeliveryFailed, DeliveryHost, _positive
from tickler.adapters.frameworks._tools import ToolCaller
from tickler.shell import FollowUp

DEFAULT_CALLABLE_TIMEOUT_S: Final = 30.0
CALLABLE_NAME: Final = re.compile(
    r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_]\w*)*"
)

DeliverFunction = Callable[..., Awaitable[object] | object]
"""``function(message, session)`` or ``function(message, session, tools)``."""


@functools.lru_cache(maxsize=256)  # asked per session a worker claims: inspect once
def _positional(function: DeliverFunction) -> tuple[int, bool] | None:
    """How many positional parameters ``function`` takes, and whether it
    takes ``*args``; None when it has no signature (a builtin)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional), any(p.kind == p.VAR_POSITIONAL for p in parameters)


def _wants_tools(function: DeliverFunction) -> bool:
    """Whether ``function`` takes a third positional argument."""
    found = _positional(function)
    return found is not None and (found[0] >= 3 or found[1])


def is_host_factory(function: DeliverFunction) -> bool:
    """Whether ``function`` takes exactly one positional argument: then it is
    a host factory, ``function(session)`` building the session's host (the
    same factory a live process gives ``open_session(..., host=...)``: its
    agent runs the reminder's turn with the session's conversation), not a
    delivery callable."""
    found = _positional(function)
    return found is not None and found == (1, False)


def load_callable(name: str, *, app_dir: str | None = None) -> DeliverFunction:
    """The object ``module:attr.attr`` names; ValueError when it cannot be
    imported or is not callable (said now, not at the first reminder).

    ``app_dir`` (a folder) is put first on ``sys.path`` before importing, as
    ``python -m`` does with the working directory and ``uvicorn --app-dir``
    with its folder: a console script has only its own folder there. A
    module not found names the path searched and how to extend it."""
    if CALLABLE_NAME.fullmatch(name) is None:
        raise ValueError(f"not a module:function name: {name!r}")
    module_name, _, path = name.partition(":")
    if app_dir is not None:
        folder = str(Path(app_dir).absolute())
        if sys.path[:1] != [folder]:
            sys.path.insert(0, folder)
    try:
        found: object = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not (module_name + ".").startswith(exc.name + "."):
            raise ValueError(f"cannot import {module_name}: {type(exc).__name__}: {exc}") from exc
        raise ValueError(_not_found(module_name, exc.name)) from exc
    except Exception as exc:
        raise ValueError(f"cannot import {module_name}: {type(exc).__name__}: {exc}") from exc
    for part in path.split("."):
        if not hasattr(found, part):
            raise ValueError(f"{module_name} has no {path}")
        found = getattr(found, part)
    if not callable(found):
        raise ValueError(f"{name} is not callable")
    return cast("DeliverFunction", found)


def _not_found(module_name: str, missing: str) -> str:
    """Why ``module_name`` was not found (``missing`` is it or a package
    above it): the folders searched, and the fix."""
    parent, _, _ = missing.rpartition(".")
    if parent:  # the package is there, the module in it is not
        package = sys.modules.get(parent)
        folders = list(getattr(package, "__path__", []))
        return (
            f"cannot import {module_name}: package {parent} ({', '.join(folders)}) "
            f"has no module {missing.rpartition('.')[2]}"
        )
    searched = ", ".join(entry or str(Path.cwd()) for entry in sys.path)
    return (
        f"cannot import {module_name}: no module {missing} in the import path ({searched}); "
        f"run the worker in the folder that holds {missing}, or name that folder "
        f"with --app-dir DIR or PYTHONPATH=DIR"
    )


class DeliverCallable(DeliveryHost):
    """Deliver by calling ``function(message, session)``; see the module."""

    def __init__(
        self,
        function: DeliverFunction,
        *,
        session: str,
        timeout: float = DEFAULT_CALLABLE_TIMEOUT_S,
        name: str | None = None,
        tools: ToolCaller | None = None,
    ) -> None:
        super().__init__(session)
        self.function = function
        self.timeout = _positive(timeout)
        self.name = name or getattr(function, "__qualname__", repr(function))
        self._async = inspect.iscoroutinefunction(function)
        self._wants_tools = _wants_tools(function)
        self.tools = tools
        """The session's tools (``session.tools``), passed as ``tools`` to a
        function that takes them."""

    async def _deliver(self, message: FollowUp) -> None:
        try:
            async with asyncio.timeout(self.timeout):
                args: tuple[object, ...] = (message, self.session)
                if self._wants_tools:
                    args = (*args, self.tools)
                if self._async:
                    await cast("Awaitable[object]", self.function(*args))
                else:
                    await asyncio.to_thread(self.function, *args)
        except TimeoutError:
            raise DeliveryFailed(
                f"{self.name} did not return within {self.timeout:g} s for {message.key}"
            ) from None
        except Exception as exc:
            raise DeliveryFailed(
                f"{self.name} raised {type(exc).__name__}: {exc} for {message.key}"
            ) from exc

    async def _send(self, key: str, payload: bytes) -> None:  # pragma: no cover - unused
        raise AssertionError("DeliverCallable delivers the message itself")
