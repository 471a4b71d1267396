"""The reference host: a small, real ``AgentHost`` that runs turns through a
pluggable model callable and records them in the session's own log.

Events it writes (beside the runtime's):

* ``tickler/turn-input`` ``{"n", "source", "text"[, "key"]}`` - a message
  taken as a future turn (a user message, or a reminder follow-up with its
  key). Flushed before ``followup`` returns, so it is the durable
  acknowledgement: a repeat of a key already taken is dropped.
* ``tickler/turn-start`` ``{"input"}`` and ``tickler/turn`` ``{"input",
  "reply"}`` - a turn began, and finished with the model's reply.

After a restart, inputs without a finished turn run again, so every taken
reminder becomes exactly one turn input, and each input gets its turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Final, Literal

import msgspec

from tickler.shell.clock import Clock, SystemClock
from tickler.shell.host import FollowUp, IdleClaim, ReleaseOnce
from tickler.shell.ports import NewEvent, SessionLog

logger = logging.getLogger("tickler.host")

TURN_INPUT: Final = "tickler/turn-input"
TURN_START: Final = "tickler/turn-start"
TURN: Final = "tickler/turn"

Source = Literal["user", "reminder"]


class TurnInput(msgspec.Struct, frozen=True, omit_defaults=True):
    n: int
    source: Source
    text: str
    key: str | None = None


class _TurnRef(msgspec.Struct, frozen=True):
    input: int


class TurnRecord(msgspec.Struct, frozen=True):
    input: int
    reply: str


Model = Callable[[TurnInput], Awaitable[str]]
"""Given the turn's input, produce the assistant's reply. A framework agent
plugs in here (and calls the schedule tools through the runtime itself)."""

_INPUT: Final = msgspec.json.Decoder(TurnInput)
_TURN: Final = msgspec.json.Decoder(TurnRecord)


class ReferenceHost:
    """Runs one turn at a time; a claim or a running turn makes it busy."""

    def __init__(
        self,
        log: SessionLog,
        model: Model,
        clock: Clock | None = None,
        *,
        on_reply: Callable[[TurnInput, str], None] | None = None,
    ) -> None:
        self._log = log
        self._model = model
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._on_reply = on_reply
        self._taken: set[str] = set()
        self._pending: dict[int, TurnInput] = {}
        self._next_input = 0
        self._claimed = False
        self._running = False
        self._idle = asyncio.Event()
        self._idle.set()
        self._runner: asyncio.Task[None] | None = None
        self._closed = False
        self._load()

    def _load(self) -> None:
        for event in self._log.events(self._log.header.owned_from):
            if event.type == TURN_INPUT:
                item = _INPUT.decode(event.data)
                self._pending[item.n] = item
                self._next_input = max(self._next_input, item.n + 1)
                if item.key is not None:
                    self._taken.add(item.key)
            elif event.type == TURN:
                self._pending.pop(_TURN.decode(event.data).input, None)

    # -- AgentHost ----------------------------------------------------------

    def claim_idle(self) -> IdleClaim | None:
        if self._claimed or self._running or self._closed:
            return None
        self._claimed = True
        self._idle.clear()
        return ReleaseOnce(self._release)

    async def when_idle(self) -> None:
        await self._idle.wait()

    async def followup(self, message: FollowUp) -> None:
        if message.key in self._taken:
            return
        await self._take("reminder", message.text, message.key)

    # -- beyond the port ------------------------------------------------------

    @property
    def pending_turns(self) -> int:
        return len(self._pending)

    @property
    def busy(self) -> bool:
        return self._claimed or self._running

    def start(self) -> None:
        """Run the turns left over from before a restart."""
        self._kick()

    async def send(self, text: str) -> None:
        """A user message, taken as a turn."""
        await self._take("user", text, None)

    async def close(self) -> None:
        self._closed = True
        if self._runner is not None:
            await asyncio.gather(self._runner, return_exceptions=True)

    # -- internals ----------------------------------------------------------

    async def _take(self, source: Source, text: str, key: str | None) -> None:
        item = TurnInput(self._next_input, source, text, key)
        event = NewEvent(TURN_INPUT, msgspec.json.encode(item), self._clock.now_ms())
        await self._log.append([event])
        self._next_input += 1
        self._pending[item.n] = item
        if key is not None:
            self._taken.add(key)
        await self._log.flush()  # raising here means "not taken": it will come again
        self._kick()

    def _release(self) -> None:
        self._claimed = False
        self._kick()
        self._update_idle()

    def _update_idle(self) -> None:
        if self._claimed or self._running or (self._pending and not self._closed):
            self._idle.clear()
        else:
            self._idle.set()

    def _kick(self) -> None:
        self._update_idle()
        if self._claimed or self._closed or not self._pending:
            return
        if self._runner is None or self._runner.done():
            self._runner = asyncio.get_running_loop().create_task(self._run_turns())

    async def _run_turns(self) -> None:
        while self._pending and not self._claimed and not self._closed:
            item = self._pending[min(self._pending)]
            self._running = True
            self._idle.clear()
            try:
                await self._turn(item)
            except Exception:
                logger.exception("reference host: turn %d failed; it runs again later", item.n)
                await self._clock.sleep(1.0)
            finally:
                self._running = False
        self._update_idle()

    async def _turn(self, item: TurnInput) -> None:
        now = self._clock.now_ms()
        await self._log.append([NewEvent(TURN_START, msgspec.json.encode(_TurnRef(item.n)), now)])
        reply = str(await self._model(item))  # a str subclass (LangChain's) would not encode
        record = TurnRecord(item.n, reply)
        await self._log.append([NewEvent(TURN, msgspec.json.encode(record), self._clock.now_ms())])
        await self._log.flush()
        self._pending.pop(item.n, None)
        if self._on_reply is not None:
            self._on_reply(item, reply)
