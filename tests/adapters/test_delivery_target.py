"""One ``delivery_target`` for every program: explicit kinds (``command=``,
``url=``, ``function=``) or the worker's one-string form, checked when it is
made; the factory builds the target for a session, with its id, and a
function target gets the session's tools."""

from __future__ import annotations

import asyncio
import json
import operator
from datetime import timedelta

import pytest

from tickler.adapters import delivery_target
from tickler.adapters.delivery._callable import DeliverCallable
from tickler.adapters.delivery._hosts import DeliverCommand, DeliverUrl
from tickler.adapters.delivery._target import target_kind, target_timeout
from tickler.adapters.stores._memory import MemoryStore
from tickler.shell._clock import SystemClock, VirtualClock
from tickler.shell._host import FollowUp
from tickler.shell._session import Session, SessionTools, open_session
from tickler.shell._timers import TimerHeap

T0 = 1_785_931_200_000


def a_session(session_id: str = "agent-7") -> Session:
    async def opened() -> Session:
        return Session(await MemoryStore().open(session_id, created_at=T0), SystemClock())

    return asyncio.run(opened())


def deliver(message: FollowUp, session: str) -> None:
    """A two-argument target (never called here)."""


class NeverIdleHost:
    """A host that takes nothing (never run here)."""

    def claim_idle(self) -> None:
        return None

    async def when_idle(self) -> None:
        await asyncio.Event().wait()

    async def followup(self, message: FollowUp) -> None:
        raise AssertionError(message.key)


@pytest.mark.parametrize(
    ("target", "kind", "timeout"),
    [
        ("https://example.org/hook", "url", 10.0),
        ("http://127.0.0.1:9/", "url", 10.0),
        ("myapp.reminders:deliver", "function", 30.0),
        ("json:dumps", "function", 30.0),
        ("notify-agent --session desk", "command", 30.0),
        ("python3 -c 'a:b'", "command", 30.0),
    ],
)
def test_the_one_string_form_names_its_kind(target: str, kind: str, timeout: float) -> None:
    assert target_kind(target) == kind
    assert target_timeout(target) == timeout
    assert target_timeout(target, 2.5) == 2.5


def test_a_function_of_one_parameter_is_a_host_factory() -> None:
    """``module:function`` of one positional parameter is the factory a live
    process gives ``open_session(host=...)``: the worker builds the session's
    host with it (its agent runs the reminder's turn)."""
    session = a_session()
    built: list[object] = []

    def host(session: Session) -> NeverIdleHost:
        built.append(session)
        return NeverIdleHost()

    made = delivery_target(function=host)(session)
    assert isinstance(made, NeverIdleHost)
    assert built == [session]
    assert not isinstance(delivery_target(function=deliver)(session), NeverIdleHost)


def test_each_kind_builds_its_target_for_the_session() -> None:
    session = a_session()
    url = delivery_target(url="http://127.0.0.1:9/hook", timeout=3)(session)
    assert isinstance(url, DeliverUrl)
    assert (url.session, url.url, url.timeout) == ("agent-7", "http://127.0.0.1:9/hook", 3)
    command = delivery_target(command="true --to 'a b'")(session)
    assert isinstance(command, DeliverCommand)
    assert (command.session, command.argv, command.timeout) == (
        "agent-7",
        ("true", "--to", "a b"),
        30.0,
    )
    function = delivery_target(function=deliver)(session)
    assert isinstance(function, DeliverCallable)
    assert (function.session, function.timeout, function.name) == ("agent-7", 30.0, "deliver")
    assert isinstance(function.tools, SessionTools)
    assert function.tools is session.tools
    named = delivery_target("operator:add")(session)  # two positional parameters
    assert isinstance(named, DeliverCallable)
    assert (named.function, named.name) == (operator.add, "operator:add")
    one_string = delivery_target("http://127.0.0.1:9/other")(session)
    assert isinstance(one_string, DeliverUrl)
    assert one_string.timeout == 10.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "give exactly one delivery target"),
        ({"command": "true", "url": "http://127.0.0.1:9/"}, "give exactly one delivery target"),
        ({"target": "true", "function": deliver}, "give exactly one delivery target"),
        ({"command": "  "}, "the delivery command is empty"),
        ({"command": "no-such-tickler-cmd"}, "delivery command not found"),
        ({"url": "ftp://example.org/hook"}, "must be an http"),
        ({"function": deliver, "timeout": 0.0}, "timeout must be positive"),
        ({"url": "http://127.0.0.1:9/", "timeout": float("nan")}, "timeout must be positive"),
        ({"target": "no_such_tickler_module:deliver"}, "cannot import no_such_tickler_module"),
        ({"function": "json:no_such_thing"}, "json has no no_such_thing"),
    ],
)
def test_a_bad_target_is_refused_when_it_is_made(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        delivery_target(**kwargs)  # type: ignore[arg-type]


def test_a_function_target_gets_the_sessions_tools_in_open_session() -> None:
    seen: list[tuple[str, str, list[str]]] = []
    resumed = asyncio.Event()

    async def resume(message: FollowUp, session: str, tools: SessionTools) -> None:
        listed = json.loads(await tools.call_tool("schedule_list", {}))
        seen.append((session, message.occurrences[0].prompt, [r["prompt"] for r in listed]))
        resumed.set()

    async def scenario() -> None:
        clock = VirtualClock(T0)
        timers = TimerHeap(clock)
        host = delivery_target(function=resume)
        async with open_session(
            MemoryStore(), "user-42", host=host, clock=clock, timers=timers
        ) as session:
            await session.schedule("stretch", after=timedelta(seconds=10))
            await session.schedule("water", every=timedelta(hours=1))
            await clock.advance(11_000, step_ms=1_000)
            await asyncio.wait_for(resumed.wait(), 10)
        await timers.close()

    asyncio.run(scenario())
    # The turn the target resumes sees the session as it is: stretch dispatched.
    assert seen == [("user-42", "stretch", ["water"])]
