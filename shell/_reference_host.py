"""The reference host: a small, real ``AgentHost`` that runs turns through a
pluggable model callable and records them in the session's own log.

Events it writes (beside the runtime's):

* ``tickler/turn-input`` ``{"n", "source", "text"[, "key"]}`` - a message
  taken as a future turn (a user message, or a reminder follow-up with its
  key). Flushed before ``followup`` returns, so it is the durable
  acknowledgement: a repeat of a key already taken is dropped.
* ``tickler/turn-start`` ``{"input"}`` and ``tickler/turn`` ``{"input",
  "reply"}`` - a turn began, and finished with the model's reply. A model
  that returns a :class:`TurnReply` adds events of its own (a framework's
  messages) to the batch of the ``tickler/turn`` record: one atomic append,
  then one flush, so they are durable together with the record or not at
  all.
* ``tickler/turn-failed`` ``{"input", "attempt", "error"}`` - the model call
  raised, or did not return within the turn's deadline (``error`` is
  ``"<ExcType>: <message>"``, bounded, no traceback).
* ``tickler/turn-cut`` ``{"input", "attempt", "reason"}`` - the turn was
  stopped before it ended because its session closed: ``"timeout"`` (the
  drain timeout or ``close()`` grace ran out), ``"cancelled"`` (the drain
  or close was cancelled), or ``"session-closed"`` (a tool call raised
  :class:`~tickler.shell._host.SessionClosed`: the runtime stopped under
  it). Not answered: the input runs again when the session next runs.
* ``tickler/turn-abandoned`` ``{"input", "attempts"}`` - the input was given
  up, so later inputs get their turns.

After a restart, inputs without a finished turn run again, so every taken
reminder becomes exactly one turn input, and each input gets its turn. A
poison input (a model call that keeps raising, that never returns, or that
kills the process) is retried with exponential backoff and given up after
``max_attempts`` failed turn starts, counted from the log, so never retried
forever across restarts. A cut is not the model's failure and is not
counted as one, but an input cut ``max_attempts`` times is given up too.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, Literal, NamedTuple

import msgspec

from tickler.shell._clock import Clock, SystemClock
from tickler.shell._host import DRAIN_TIMEOUT_S, FollowUp, IdleClaim, ReleaseOnce, SessionClosed
from tickler.shell._ports import NewEvent, SessionLog
from tickler.shell._records import error_text
from tickler.shell._retry import Backoff, Outage

logger = logging.getLogger("tickler.host")

TURN_INPUT: Final = "tickler/turn-input"
TURN_START: Final = "tickler/turn-start"
TURN: Final = "tickler/turn"
TURN_FAILED: Final = "tickler/turn-failed"
TURN_ABANDONED: Final = "tickler/turn-abandoned"
TURN_CUT: Final = "tickler/turn-cut"
MAX_ATTEMPTS: Final = 5
TURN_TIMEOUT_S: Final = 300.0  # a model call's deadline: a failed attempt after it
CLOSE_GRACE_S: Final = DRAIN_TIMEOUT_S  # how long ``close()`` lets a turn in flight finish

Source = Literal["user", "reminder"]
CutReason = Literal["timeout", "cancelled", "session-closed"]


class TurnInput(msgspec.Struct, frozen=True, omit_defaults=True):
    n: int
    source: Source
    text: str
    key: str | None = None


class TurnRef(msgspec.Struct, frozen=True):
    input: int


class TurnRecord(msgspec.Struct, frozen=True):
    input: int
    reply: str


class TurnFailed(msgspec.Struct, frozen=True):
    input: int
    attempt: int  # the turn starts of this input so far, this one included
    error: str


class TurnAbandoned(msgspec.Struct, frozen=True):
    input: int
    attempts: int


class TurnCut(msgspec.Struct, frozen=True):
    input: int
    attempt: int  # the turn starts of this input so far, this one included
    reason: CutReason


class TurnReply(NamedTuple):
    """A model's reply with events of its own, recorded in the same batch as
    the turn's ``tickler/turn`` record (before it): a framework host keeps
    its turn's messages so, and they become durable with the turn or not at
    all. ``events`` are ``(type, data)`` pairs, ``data`` one line of JSON;
    the host stamps them with its clock. ``on_recorded`` is called once the
    batch is appended (not yet flushed); a turn that fails, is cut, or whose
    batch is refused never calls it."""

    text: str
    events: Sequence[tuple[str, bytes]] = ()
    on_recorded: Callable[[], None] | None = None


Model = Callable[[TurnInput], Awaitable[str | TurnReply]]
"""Given the turn's input, produce the assistant's reply: its text, or a
:class:`TurnReply` carrying events to record with it. A framework agent
plugs in here (and calls the schedule tools through the runtime itself)."""

_INPUT: Final = msgspec.json.Decoder(TurnInput)
_TURN: Final = msgspec.json.Decoder(TurnRecord)
_CUT: Final = msgspec.json.Decoder(TurnCut)
TURN_REF: Final = msgspec.json.Decoder(TurnRef)


class TurnTimeout(Exception):
    """A model call did not return within the turn's deadline."""


class TurnCancelled(Exception):
    """A model call raised ``asyncio.CancelledError`` of its own (this host
    was not cancelled): a failed attempt like any other."""


def retry_delay(attempt: int, first_s: float, most_s: float) -> float:
    """The pause after the ``attempt``-th failed start: doubling, capped."""
    return min(most_s, first_s * 2.0 ** min(attempt - 1, 64))


class ReferenceHost:
    """Runs one turn at a time; a claim or a running turn makes it busy.

    A model call that raises (``asyncio.CancelledError`` included, when it
    is not this host's own cancellation), or that has not returned after
    ``turn_timeout_s`` (None: no deadline), is a failed attempt. It is
    retried after ``retry_first_s``, doubling up to ``retry_most_s`` (waits
    and deadlines on the injected clock); after ``max_attempts`` failed
    starts (or ``max_attempts`` cuts, see :meth:`drain`) the input is
    abandoned and the next one runs.
    """

    def __init__(
        self,
        log: SessionLog,
        model: Model,
        clock: Clock | None = None,
        *,
        on_reply: Callable[[TurnInput, str], None] | None = None,
        max_attempts: int = MAX_ATTEMPTS,
        retry_first_s: float = 1.0,
        retry_most_s: float = 60.0,
        turn_timeout_s: float | None = TURN_TIMEOUT_S,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if turn_timeout_s is not None and not turn_timeout_s > 0:
            raise ValueError("turn_timeout_s must be positive (or None)")
        self._log = log
        self._model = model
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._on_reply = on_reply
        self._max_attempts = max_attempts
        self._retry_first_s = retry_first_s
        self._retry_most_s = retry_most_s
        self._turn_timeout_s = turn_timeout_s
        self._log_backoff = Backoff(retry_first_s, 2.0, retry_most_s)
        self._log_outage = Outage(logger, "reference host: recording a turn")
        self._taken: set[str] = set()
        self._pending: dict[int, TurnInput] = {}
        self._starts: dict[int, int] = {}  # turn starts per pending input, from the log
        self._cuts: dict[int, int] = {}  # of which cut by a closing session
        self._turn: TurnInput | None = None  # started, no outcome recorded yet
        self._next_input = 0
        self._claimed = False
        self._running = False
        self._pausing = False
        self._idle = asyncio.Event()
        self._idle.set()
        self._changed = asyncio.Event()  # a claim, turn or pause moved: a drain looks again
        self._runner: asyncio.Task[None] | None = None
        self._draining = False  # no new claim; the inputs taken still run
        self._closed = False  # no new turn starts
        self._load()

    def _load(self) -> None:
        for event in self._log.events(self._log.header.owned_from):
            if event.type == TURN_INPUT:
                item = _INPUT.decode(event.data)
                self._pending[item.n] = item
                self._next_input = max(self._next_input, item.n + 1)
                if item.key is not None:
                    self._taken.add(item.key)
            elif event.type == TURN_START:
                n = TURN_REF.decode(event.data).input
                self._starts[n] = self._starts.get(n, 0) + 1
            elif event.type == TURN:
                self._settle(_TURN.decode(event.data).input)
            elif event.type == TURN_ABANDONED:
                self._settle(TURN_REF.decode(event.data).input)
            elif event.type == TURN_CUT:
                n = _CUT.decode(event.data).input
                self._cuts[n] = self._cuts.get(n, 0) + 1

    def _settle(self, n: int) -> None:
        self._pending.pop(n, None)
        self._starts.pop(n, None)
        self._cuts.pop(n, None)

    # -- AgentHost ----------------------------------------------------------

    def claim_idle(self) -> IdleClaim | None:
        if self._claimed or self._running or self._draining or self._closed:
            return None
        self._claimed = True
        self._idle.clear()
        return ReleaseOnce(self._release)

    async def when_idle(self) -> None:
        """Return once no turn runs, no input waits for its turn and no
        claim is held: every message sent (and every reminder taken) so far
        has had its turn. After :meth:`close` (or :meth:`drain`), inputs
        left for a later run do not count."""
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
        """Take ``text`` as a user message for a turn of its own. Returns
        once the input is durable in the log, without waiting for the turn:
        the turn runs next in this host's own task (after the turns taken
        before it), and ``on_reply`` or :meth:`when_idle` tell when it has
        been answered. Leaving ``open_session`` lets it run first (see
        :meth:`drain`); an input whose turn did not run or was cut runs
        when the session is next opened."""
        await self._take("user", text, None)

    async def drain(self, timeout_s: float = DRAIN_TIMEOUT_S) -> None:
        """Let the turns of the inputs taken so far run, for at most
        ``timeout_s`` (on the host's clock), then stop as :meth:`close`
        does. Meanwhile no claim is granted (no new hand-over starts), and
        an input whose turn failed is not retried (its retry waits for the
        next run). A turn still running at the end is cut and recorded as
        ``tickler/turn-cut`` (``"timeout"``), never as answered; cancelling
        this call cuts at once (``"cancelled"``). ``open_session`` calls
        it on the way out, before the runtime stops, so the turns' tool
        calls are still answered."""
        self._draining = True
        await self._finish(timeout_s)

    async def close(self, *, grace_s: float = CLOSE_GRACE_S) -> None:
        """Stop taking turns: no new turn starts and a retry pause ends at
        once; a turn in flight may finish within ``grace_s`` (on the host's
        clock), then it is cut and recorded as ``tickler/turn-cut`` (its
        input runs again when the session next runs). Cancelling this call
        cuts at once. Idempotent."""
        self._closed = True
        await self._finish(grace_s)

    # -- stopping -------------------------------------------------------------

    async def _finish(self, within_s: float) -> None:
        """Wait up to ``within_s`` for the runner to end (or pause), then
        cut it; the cut is recorded even when the caller is cancelled."""
        try:
            await self._settled_within(within_s)
        except asyncio.CancelledError:
            await asyncio.shield(self._cut("cancelled"))
            raise
        await asyncio.shield(self._cut("timeout"))

    async def _settled_within(self, within_s: float) -> None:
        """Until no turn runs (a retry pause counts as none) and no claim is
        held, for at most ``within_s``."""
        deadline = asyncio.ensure_future(self._clock.sleep(within_s))
        try:
            while not deadline.done():
                runner = self._runner
                working = runner is not None and not runner.done() and not self._pausing
                if not working and not self._claimed:
                    return
                self._changed.clear()
                changed = asyncio.ensure_future(self._changed.wait())
                waits: set[asyncio.Future[Any]] = {deadline, changed}
                if working and runner is not None:
                    waits.add(runner)
                try:
                    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    changed.cancel()
        finally:
            deadline.cancel()

    async def _cut(self, reason: CutReason) -> None:
        """Start no more turns; stop the runner, and record the turn it was
        in (if any) as cut."""
        self._closed = True
        runner = self._runner
        if runner is not None and not runner.done():
            runner.cancel()
            await asyncio.gather(runner, return_exceptions=True)
        turn, self._turn = self._turn, None
        if turn is not None:
            await self._record_cut(turn, reason)
        self._update_idle()

    async def _record_cut(self, item: TurnInput, reason: CutReason) -> None:
        attempt = self._starts.get(item.n, 0)
        self._cuts[item.n] = self._cuts.get(item.n, 0) + 1
        logger.warning(
            "reference host: turn %d cut (%s) before it ended; it runs again later", item.n, reason
        )
        cut = TurnCut(item.n, attempt, reason)
        try:
            self._log.append([NewEvent(TURN_CUT, msgspec.json.encode(cut), self._clock.now_ms())])
            await self._log.flush()
        except Exception:
            # Unrecorded, the start counts as a failed one (as after a crash).
            logger.warning("reference host: could not record turn %d as cut", item.n, exc_info=True)

    # -- internals ----------------------------------------------------------

    async def _take(self, source: Source, text: str, key: str | None) -> None:
        n, self._next_input = self._next_input, self._next_input + 1
        item = TurnInput(n, source, text, key)
        event = NewEvent(TURN_INPUT, msgspec.json.encode(item), self._clock.now_ms())
        # Shielded: a cancelled caller (a runtime disposing) must not leave
        # the log holding an input this host does not know of.
        await asyncio.shield(self._record_input(item, event))
        await self._log.flush()  # raising here means "not taken": it will come again
        self._kick()

    async def _record_input(self, item: TurnInput, event: NewEvent) -> None:
        self._log.append([event])
        self._pending[item.n] = item
        if item.key is not None:
            self._taken.add(item.key)

    def _release(self) -> None:
        self._claimed = False
        self._kick()
        self._update_idle()

    def _update_idle(self) -> None:
        self._changed.set()
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
        try:
            while self._pending and not self._claimed and not self._closed:
                item = self._pending[min(self._pending)]
                self._running = True
                self._idle.clear()
                try:
                    pause = await self._attempt(item)
                    self._log_outage.ok()
                except Exception as exc:  # noqa: BLE001 - the log failed: logged once per outage
                    self._log_outage.failed(exc)
                    pause = self._log_backoff.next_delay()
                try:
                    if pause is not None and not self._closed:
                        if self._draining:
                            break  # retried when the session next runs
                        self._pausing = True
                        self._changed.set()
                        await self._clock.sleep(pause)
                finally:
                    self._pausing = False
                    self._running = False
        finally:
            self._running = False  # cut by close(): never busy for good
            self._update_idle()

    async def _attempt(self, item: TurnInput) -> float | None:
        """One try at ``item``'s turn; the pause before the next try, if any."""
        starts = self._starts.get(item.n, 0)
        if self._spent(item, starts):  # started often enough before a restart
            await self._give_up(item, starts, [])
            return None
        now = self._clock.now_ms()
        self._log.append([NewEvent(TURN_START, msgspec.json.encode(TurnRef(item.n)), now)])
        starts = self._starts[item.n] = starts + 1
        self._turn = item  # a cut from here on is recorded as one
        try:
            answer = await self._call_model(item)
        except Exception as exc:  # noqa: BLE001 - any model failure is this turn's failure
            if _closed_under(exc):  # the runtime stopped under the turn: no failure of its own
                self._turn = None
                self._closed = True
                await self._record_cut(item, "session-closed")
                return None
            self._turn = None
            return await self._failed(item, starts, exc)
        self._turn = None
        reply = answer.text
        now = self._clock.now_ms()
        batch = [NewEvent(kind, data, now) for kind, data in answer.events]
        batch.append(NewEvent(TURN, msgspec.json.encode(TurnRecord(item.n, reply)), now))
        self._log.append(batch)  # the turn's own events and its record: all or nothing
        if answer.on_recorded is not None:
            try:
                answer.on_recorded()
            except Exception:  # the turn is recorded whatever a callback does
                logger.exception("reference host: on_recorded failed for turn %d", item.n)
        await self._log.flush()
        self._settle(item.n)
        self._log_backoff.reset()
        if self._on_reply is not None:
            try:
                self._on_reply(item, reply)
            except Exception:
                logger.exception("reference host: on_reply failed for turn %d", item.n)
        return None

    async def _call_model(self, item: TurnInput) -> TurnReply:
        """The model's reply, from a task of its own, so that neither a
        ``CancelledError`` it raises nor one it never returns can be taken
        for this host's own cancellation (``close()``): the first is raised
        here as a failure, the second is cut at the deadline. Raises
        :class:`TurnTimeout` at the deadline."""
        call = asyncio.ensure_future(self._model(item))
        if self._turn_timeout_s is None:
            waits: tuple[asyncio.Future[Any], ...] = (call,)
        else:
            waits = (call, asyncio.ensure_future(self._clock.sleep(self._turn_timeout_s)))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits[1:]:
                wait.cancel()
            if not call.done():  # past the deadline, or this host was cancelled
                call.cancel()
                call.add_done_callback(_retrieve)
        if not call.done():
            raise TurnTimeout(f"the model call did not return within {self._turn_timeout_s:g} s")
        try:
            answer = call.result()
        except asyncio.CancelledError as exc:  # the model's own, not this host's
            raise TurnCancelled(f"the model call raised {error_text(exc)}") from None
        if isinstance(answer, TurnReply):
            return answer._replace(text=str(answer.text))
        return TurnReply(str(answer))  # a str subclass (LangChain's) would not encode

    def _spent(self, item: TurnInput, starts: int) -> bool:
        """Whether ``item`` has had its attempts: ``max_attempts`` failed
        starts (a cut is none), or ``max_attempts`` cuts."""
        cuts = self._cuts.get(item.n, 0)
        return starts - cuts >= self._max_attempts or cuts >= self._max_attempts

    async def _failed(self, item: TurnInput, attempt: int, exc: Exception) -> float | None:
        """Record the failure; give the input up after the last attempt."""
        text = error_text(exc)
        logger.warning(
            "reference host: turn %d failed (attempt %d of %d): %s",
            item.n,
            attempt - self._cuts.get(item.n, 0),
            self._max_attempts,
            text,
        )
        logger.debug("reference host: turn %d traceback", item.n, exc_info=exc)
        failed = TurnFailed(item.n, attempt, text)
        batch = [NewEvent(TURN_FAILED, msgspec.json.encode(failed), self._clock.now_ms())]
        if self._spent(item, attempt):
            await self._give_up(item, attempt, batch)
            return None
        self._log.append(batch)
        await self._log.flush()
        return retry_delay(attempt, self._retry_first_s, self._retry_most_s)

    async def _give_up(self, item: TurnInput, attempts: int, batch: list[NewEvent]) -> None:
        logger.warning(
            "reference host: input %d abandoned after %d attempts; later inputs run",
            item.n,
            attempts,
        )
        gone = TurnAbandoned(item.n, attempts)
        now = self._clock.now_ms()
        self._log.append([*batch, NewEvent(TURN_ABANDONED, msgspec.json.encode(gone), now)])
        await self._log.flush()
        self._settle(item.n)


def _closed_under(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was caused by, a tool call on a closed session
    (a framework may wrap what a tool raised, or group it)."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        found = todo.pop()
        if id(found) in seen:
            continue
        seen.add(id(found))
        if isinstance(found, SessionClosed):
            return True
        if isinstance(found, BaseExceptionGroup):
            todo.extend(found.exceptions)
        todo.extend(e for e in (found.__cause__, found.__context__) if e is not None)
    return False


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Take the outcome of a model call cut at its deadline (nobody awaits it)."""
    if not task.cancelled():
        task.exception()
