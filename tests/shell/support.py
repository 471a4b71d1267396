"""Test doubles for the runtime tests.

* :class:`RecordingLog` wraps a ``MemoryLog``: it writes every ``flush``,
  ``append`` and ``snapshot`` into a shared call list (``"flush"``,
  ``"append(dispatch,followup)"``; a trailing ``!`` marks an injected
  failure), tracks how much of the log the last successful flush made
  durable, and can fail, hold (on an ``asyncio.Event``) or run a hook at
  chosen calls.
* :class:`ScriptedHost` is an ``AgentHost`` that writes ``claim``,
  ``claim-refused``, ``release``, ``when_idle`` and ``followup:<key>`` into
  the same list, and can be made busy, refuse claims, raise, or run a turn
  after each follow-up it takes.
* :func:`rig` wires both to a ``ScheduleRuntime`` on a ``VirtualClock`` with
  its own timer heap; nothing sleeps for real.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Final, Literal, ParamSpec

from tickler.adapters.stores._memory import MemoryLog
from tickler.core import (
    SCHEDULE_CHANGE,
    SessionEvent,
    SessionHeader,
    encode_change,
    fold,
    fold_changes,
    handle,
    parse_instant,
)
from tickler.core._profile import Profile
from tickler.core.wire._session import event
from tickler.shell._clock import VirtualClock, settle
from tickler.shell._host import FollowUp, IdleClaim
from tickler.shell._ports import NewEvent, Snapshot
from tickler.shell._records import FOLLOWUP, decode_followup
from tickler.shell._runtime import ScheduleRuntime
from tickler.shell._timers import TimerHeap

T0: Final = 1_785_931_200_000  # 2026-08-05T12:00:00.000Z
SECOND: Final = 1_000
MINUTE: Final = 60 * SECOND
HOUR: Final = 60 * MINUTE
DAY: Final = 24 * HOUR

Op = Literal["flush", "append", "snapshot"]
Labels = tuple[str, ...]
P = ParamSpec("P")


def async_test(fn: Callable[P, Coroutine[Any, Any, None]]) -> Callable[P, None]:
    """Run an ``async def`` test on a fresh event loop."""

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        asyncio.run(fn(*args, **kwargs))

    return run


class InjectedFault(Exception):
    """A failure a test asked for."""


def event_label(event_type: str, data: bytes) -> str:
    """``create``/``delete``/``dispatch`` for a schedule change, else the
    last part of the type (``followup``, ``delivered``, ``turn-input``)."""
    if event_type == SCHEDULE_CHANGE:
        try:
            value = json.loads(data)
        except ValueError:
            return "change?"
        operation = value.get("operation") if isinstance(value, dict) else None
        return operation if isinstance(operation, str) else "change?"
    return event_type.rsplit("/", 1)[-1]


def has(label: str) -> Callable[[Labels], bool]:
    """A call filter: an append whose batch holds an event ``label``."""
    return lambda labels: label in labels


@dataclass
class Gate:
    """Holds one call until :meth:`open`; ``entered`` is set once it waits."""

    entered: asyncio.Event = field(default_factory=asyncio.Event)
    opened: asyncio.Event = field(default_factory=asyncio.Event)

    def open(self) -> None:
        self.opened.set()


@dataclass
class _Rule:
    op: Op
    action: Literal["fail", "gate", "hook"]
    when: Callable[[Labels], bool] | None
    skip: int
    times: int | None  # None: every matching call
    gate: Gate | None = None
    hook: Callable[[], None] | None = None


class RecordingLog:
    """A ``SessionLog`` that records, and fails or holds on request."""

    def __init__(self, inner: MemoryLog, calls: list[str] | None = None) -> None:
        self.inner = inner
        self.calls: list[str] = calls if calls is not None else []
        self.durable = inner.length  # what was there before counts as durable
        self.reads: list[int] = []  # the ``start`` of every ``events()`` call
        self.attempts: dict[Op, int] = {"flush": 0, "append": 0, "snapshot": 0}
        self._rules: list[_Rule] = []

    # -- scripting ------------------------------------------------------------

    def fail(
        self,
        op: Op,
        *,
        when: Callable[[Labels], bool] | None = None,
        skip: int = 0,
        times: int | None = 1,
    ) -> None:
        """Make matching calls raise :class:`InjectedFault` (after ``skip``
        matching calls pass), ``times`` times (None: until :meth:`heal`)."""
        self._rules.append(_Rule(op, "fail", when, skip, times))

    def gate(self, op: Op, *, when: Callable[[Labels], bool] | None = None, skip: int = 0) -> Gate:
        """Hold the next matching call until the gate is opened."""
        gate = Gate()
        self._rules.append(_Rule(op, "gate", when, skip, 1, gate=gate))
        return gate

    def hook(
        self,
        op: Op,
        fn: Callable[[], None],
        *,
        when: Callable[[Labels], bool] | None = None,
        skip: int = 0,
        times: int | None = 1,
    ) -> None:
        """Run ``fn`` when a matching call starts."""
        self._rules.append(_Rule(op, "hook", when, skip, times, hook=fn))

    def heal(self) -> None:
        """Drop every rule and open every gate."""
        for rule in self._rules:
            if rule.gate is not None:
                rule.gate.open()
        self._rules.clear()

    async def _enter(self, op: Op, labels: Labels) -> bool:
        """Apply the rules for one call; True when it must fail."""
        gates: list[Gate] = []
        fail = self._apply(op, labels, gates)
        for gate in gates:
            gate.entered.set()
            await gate.opened.wait()
        return fail

    def _enter_now(self, op: Op, labels: Labels) -> bool:
        """The rules for a call that cannot wait (an append is synchronous)."""
        gates: list[Gate] = []
        fail = self._apply(op, labels, gates)
        if gates:
            raise AssertionError(f"{op} cannot be held by a gate: it never suspends")
        return fail

    def _apply(self, op: Op, labels: Labels, gates: list[Gate]) -> bool:
        self.attempts[op] += 1
        fail = False
        for rule in list(self._rules):
            if rule.op != op or (rule.when is not None and not rule.when(labels)):
                continue
            if rule.skip > 0:
                rule.skip -= 1
                continue
            if rule.times is not None:
                rule.times -= 1
                if rule.times <= 0:
                    self._rules.remove(rule)
            if rule.action == "fail":
                fail = True
            elif rule.action == "hook" and rule.hook is not None:
                rule.hook()
            elif rule.gate is not None:
                gates.append(rule.gate)
        return fail

    # -- SessionLog ----------------------------------------------------------

    @property
    def header(self) -> SessionHeader:
        return self.inner.header

    @property
    def length(self) -> int:
        return self.inner.length

    def events(self, start: int = 0) -> Iterator[SessionEvent]:
        self.reads.append(start)
        return self.inner.events(start)

    def append(self, batch: Sequence[NewEvent]) -> tuple[SessionEvent, ...]:
        labels = tuple(event_label(item.type, item.data) for item in batch)
        text = f"append({','.join(labels)})"
        if self._enter_now("append", labels):
            self.calls.append(text + "!")
            raise InjectedFault(text)
        self.calls.append(text)
        return self.inner.append(batch)

    async def flush(self) -> None:
        covered = self.inner.length
        if await self._enter("flush", ()):
            self.calls.append("flush!")
            raise InjectedFault("flush")
        self.calls.append("flush")
        self.durable = max(self.durable, covered)

    def load_snapshot(self) -> Snapshot | None:
        return self.inner.load_snapshot()

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        if await self._enter("snapshot", ()):
            self.calls.append("snapshot!")
            raise InjectedFault("snapshot")
        self.calls.append("snapshot")
        await self.inner.save_snapshot(snapshot)

    async def close(self) -> None:
        await self.inner.close()

    # -- inspection ----------------------------------------------------------

    def all_events(self) -> list[SessionEvent]:
        return list(self.inner.events())

    def labels(self) -> list[str]:
        return [event_label(e.type, bytes(e.data)) for e in self.inner.events()]

    def changes(self) -> list[dict[str, Any]]:
        return [json.loads(bytes(e.data)) for e in self.inner.events() if e.type == SCHEDULE_CHANGE]

    def count(self, label: str) -> int:
        return self.labels().count(label)

    def followup_seq(self, key: str) -> int | None:
        for e in self.inner.events():
            if e.type == FOLLOWUP and decode_followup(e.data).key == key:
                return e.seq
        return None

    async def crashed(self) -> MemoryLog:
        """A fresh log holding only what the last successful flush covered
        (what a crash would leave), without any snapshot."""
        copy = MemoryLog(self.inner.header)
        kept = list(self.inner.events())[: self.durable]
        copy.append([NewEvent(e.type, bytes(e.data), e.time) for e in kept])
        return copy


def new_memory_log(session_id: str = "s1", created_at: int = T0) -> MemoryLog:
    return MemoryLog(SessionHeader(id=session_id, created_at=created_at))


class HostFault(Exception):
    """A host failure a test asked for."""


class _Claim:
    def __init__(self, host: ScriptedHost) -> None:
        self._host: ScriptedHost | None = host

    def release(self) -> None:
        if self._host is not None:
            host, self._host = self._host, None
            host._released()


class ScriptedHost:
    """An ``AgentHost`` driven by the test.

    ``busy`` stands for a running turn: claims are refused and ``when_idle``
    waits. With ``turns=True`` every follow-up taken starts a turn that lasts
    until :meth:`end_turn`. ``refuse`` refuses claims even while idle;
    ``claim_errors``, ``idle_errors`` and ``followup_errors`` make that many
    calls raise :class:`HostFault`.
    """

    def __init__(
        self,
        calls: list[str],
        clock: VirtualClock,
        log: RecordingLog | None = None,
        *,
        turns: bool = False,
    ) -> None:
        self.calls = calls
        self.clock = clock
        self.log = log
        self.turns = turns
        self.refuse = False
        self.claim_errors = 0
        self.idle_errors = 0
        self.followup_errors = 0
        self.on_claim: Callable[[], None] | None = None
        self.followup_gate: Gate | None = None
        self.offered: list[FollowUp] = []  # every followup() call
        self.taken: list[FollowUp] = []  # first successful take per key
        self.taken_wall: list[int] = []  # wall clock when each was taken
        self.taken_mono: list[int] = []  # virtual monotonic time when taken
        self.durable_when_offered: list[bool] = []
        self.idle_waits = 0
        self._busy = False
        self._claimed = False
        self._idle = asyncio.Event()
        self._idle.set()

    # -- scripting -------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._busy

    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        self._update_idle()

    def end_turn(self) -> None:
        self.set_busy(False)

    @property
    def claimed(self) -> bool:
        return self._claimed

    @property
    def keys(self) -> list[str]:
        return [m.key for m in self.taken]

    def _update_idle(self) -> None:
        if self._busy or self._claimed:
            self._idle.clear()
        else:
            self._idle.set()

    def _released(self) -> None:
        self.calls.append("release")
        self._claimed = False
        self._update_idle()

    # -- AgentHost -------------------------------------------------------------

    def claim_idle(self) -> IdleClaim | None:
        if self.claim_errors > 0:
            self.claim_errors -= 1
            self.calls.append("claim!")
            raise HostFault("claim")
        if self._busy or self._claimed or self.refuse:
            self.calls.append("claim-refused")
            return None
        self.calls.append("claim")
        self._claimed = True
        self._update_idle()
        if self.on_claim is not None:
            self.on_claim()
        return _Claim(self)

    async def when_idle(self) -> None:
        self.calls.append("when_idle")
        self.idle_waits += 1
        if self.idle_errors > 0:
            self.idle_errors -= 1
            raise HostFault("when_idle")
        await self._idle.wait()

    async def followup(self, message: FollowUp) -> None:
        self.calls.append(f"followup:{message.key}")
        self.offered.append(message)
        if self.log is not None:
            seq = self.log.followup_seq(message.key)
            self.durable_when_offered.append(seq is not None and seq < self.log.durable)
        if self.followup_gate is not None:
            gate, self.followup_gate = self.followup_gate, None
            gate.entered.set()
            await gate.opened.wait()
        if self.followup_errors > 0:
            self.followup_errors -= 1
            raise HostFault("followup")
        if message.key in self.keys:
            return
        self.taken.append(message)
        self.taken_wall.append(self.clock.now_ms())
        self.taken_mono.append(self.clock.monotonic_ms)
        if self.turns:
            self._busy = True
            self._update_idle()


@dataclass
class Rig:
    clock: VirtualClock
    calls: list[str]
    log: RecordingLog
    host: ScriptedHost
    timers: TimerHeap
    runtime: ScheduleRuntime

    async def tool(self, name: str, args: object) -> Any:
        return json.loads(await self.runtime.call_tool(name, args))

    async def create(self, **args: object) -> Any:
        return await self.tool("schedule_create", {"prompt": "p", **args})

    async def views(self) -> Any:
        return await self.tool("schedule_list", {})

    async def delete(self, schedule_id: str) -> Any:
        return await self.tool("schedule_delete", {"id": schedule_id})

    async def advance(self, ms: int, step_ms: int | None = None) -> None:
        await self.clock.advance(ms, step_ms=step_ms)

    def jump(self, delta_ms: int) -> None:
        self.clock.set_wall(self.clock.now_ms() + delta_ms)

    def since(self, mark: int) -> list[str]:
        return self.calls[mark:]


@asynccontextmanager
async def rig(
    *,
    wall: int = T0,
    log: MemoryLog | None = None,
    turns: bool = False,
    start: bool = True,
    clock: VirtualClock | None = None,
    timers: TimerHeap | None = None,
    profile: Profile = "extended",
) -> AsyncIterator[Rig]:
    """A runtime on a recording log and a scripted host; on exit, every
    gate is opened and the runtime disposed."""
    the_clock = clock if clock is not None else VirtualClock(wall)
    calls: list[str] = []
    recording = RecordingLog(log if log is not None else new_memory_log(), calls)
    host = ScriptedHost(calls, the_clock, recording, turns=turns)
    heap = timers if timers is not None else TimerHeap(the_clock)
    runtime = ScheduleRuntime(recording, host, the_clock, timers=heap, profile=profile)
    the_rig = Rig(the_clock, calls, recording, host, heap, runtime)
    if start:
        await runtime.start()
        await settle()
    try:
        yield the_rig
    finally:
        recording.heal()
        if host.followup_gate is not None:
            host.followup_gate.open()
        await runtime.dispose()
        if timers is None:
            await heap.close()


def occurrence_ms(message: FollowUp) -> list[int]:
    return [parse_instant(o.occurrence_at) for o in message.occurrences]


def batch_items(message: FollowUp) -> list[dict[str, str]]:
    """The ``reminders_json`` array of a fixed-rate batch framing."""
    line = message.text.rsplit("\n", 1)[-1]
    assert line.startswith("reminders_json: ")
    items: list[dict[str, str]] = json.loads(line.removeprefix("reminders_json: "))
    return items


async def seed(log: MemoryLog, *creates: tuple[int, dict[str, object]]) -> None:
    """Append the create changes ``schedule_create(args)`` at ``now`` makes,
    for each ``(now, args)``, as a previous process would have."""
    state = fold(log.events(), log.header.owned_from)
    for now, args in creates:
        changes, output = handle(state, "schedule_create", args, now)
        assert changes, output
        state = fold_changes(changes, state)
        log.append([NewEvent(SCHEDULE_CHANGE, encode_change(c), now) for c in changes])


async def append_raw(log: MemoryLog, event_type: str, data: object, time: int = T0) -> None:
    """Append one event as given (``data`` JSON-encoded unless bytes). Bytes
    that are not JSON bypass the store's own check: they stand for a log
    damaged outside the store."""
    raw = data if isinstance(data, bytes) else json.dumps(data, separators=(",", ":")).encode()
    try:
        json.loads(raw)
    except ValueError:
        log._events.append(event(event_type, log.length, time, raw))
        return
    log.append([NewEvent(event_type, raw, time)])


__all__ = [
    "DAY",
    "HOUR",
    "MINUTE",
    "SECOND",
    "T0",
    "Gate",
    "HostFault",
    "InjectedFault",
    "RecordingLog",
    "Rig",
    "ScriptedHost",
    "append_raw",
    "async_test",
    "batch_items",
    "event_label",
    "has",
    "new_memory_log",
    "occurrence_ms",
    "rig",
    "seed",
    "settle",
]
