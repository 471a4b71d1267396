"""One timer heap per process for all live runtimes.

Each runtime has at most one entry: its next wake (the earliest target of
its active reminders). A single task sleeps until the earliest entry, but
never longer than ``max_wait_s``, and re-reads the wall clock on every wake:
a rolled-back clock makes nothing early, a forward jump is noticed within
``max_wait_s``. Waking a runtime only asks it to look; it decides.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import weakref
from collections import deque
from collections.abc import Callable
from typing import Final

from tickler.shell._clock import Clock
from tickler.shell._handbacks import HAND_BACKS, HandBacks

DEFAULT_MAX_WAIT_S: Final = 1.0
# A sleep ends late: the event loop waits in whole milliseconds, rounded up
# (epoll), and the machine takes a while to run a thread that slept (on a
# virtual machine often more than a millisecond, longer the longer it
# slept). So on the real clock the heap sleeps short of the target by a
# margin and yields to the loop for the rest. The margin is learned: what
# the heap's recent sleeps overran on the monotonic clock (the second
# largest of the last OVERRUN_SAMPLES: one outlier is ignored), plus
# OVERRUN_PAD_S, within FINAL_YIELD_S and MAX_MARGIN_S. The cap bounds what
# one wake may spend yielding: the loop's thread then holds the GIL, and
# another thread's hand-off back to the loop (a store's sync) may wait.
# So while another thread holds a job for the loop (HAND_BACKS: a store's
# sync), the heap also pauses its thread between yields for PAUSE_S, where
# the clock can (SystemClock.pause): a thread that releases the GIL only
# to take it straight back starves a thread waiting for it (CPython hands
# the GIL over on request only after its 5 ms switch interval), and the
# store's round would wait for the whole yield. Only then, and not in the
# last 2 * PAUSE_S before the target (a pause ends late, and stops the
# whole loop while it lasts).
FINAL_YIELD_S: Final = 0.001
PAUSE_S: Final = 0.0001
MAX_MARGIN_S: Final = 0.003
OVERRUN_SAMPLES: Final = 16
OVERRUN_PAD_S: Final = 0.0002


def _owner(cls: type, name: str) -> type | None:
    """The class in ``cls``'s MRO that defines ``name``."""
    return next((base for base in cls.__mro__ if name in vars(base)), None)


def _same_reader(cls: type) -> bool:
    """Whether ``now_ns`` and ``now_ms`` come from one class (one clock)."""
    owner = _owner(cls, "now_ns")
    return owner is not None and owner is _owner(cls, "now_ms")


class TimerHeap:
    def __init__(
        self,
        clock: Clock,
        *,
        max_wait_s: float = DEFAULT_MAX_WAIT_S,
        hand_backs: HandBacks = HAND_BACKS,
    ) -> None:
        self._clock = clock
        self._hand_backs = hand_backs
        # The wall clock in nanoseconds when the clock reads it (SystemClock):
        # a sleep computed from whole milliseconds ends up to 1 ms past the
        # target (now_ms rounds down), on top of the event loop's own
        # rounding of its timeout up to the millisecond.
        # Only when the class that reads the nanoseconds also reads the
        # milliseconds: a subclass that moves now_ms (a shifted or frozen
        # clock) would otherwise be judged by one clock and slept by another.
        self._now_ns: Callable[[], int] | None = (
            getattr(clock, "now_ns", None) if _same_reader(type(clock)) else None
        )
        # What a sleep's overrun is measured on: the clock sleeps run on (a
        # wall clock stepped meanwhile is no overrun).
        self._monotonic_ns: Callable[[], int] | None = getattr(clock, "monotonic_ns", None)
        # How the heap lets other threads run while it yields (see PAUSE_S).
        self._pause: Callable[[float], None] | None = getattr(clock, "pause", None)
        self._max_wait_s = max_wait_s
        self._overruns: deque[float] = deque(maxlen=OVERRUN_SAMPLES)
        self.margin_s = FINAL_YIELD_S  # how far short of a target the heap sleeps
        self._heap: list[tuple[int, int, object]] = []
        self._armed: dict[object, tuple[int, int, Callable[[], None]]] = {}
        self._counter = 0
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._armed)

    def arm(self, owner: object, at_ms: int, wake: Callable[[], None]) -> None:
        """Call ``wake()`` once the wall clock reaches ``at_ms`` (replacing
        ``owner``'s previous entry)."""
        previous = self._armed.get(owner)
        if previous is not None and previous[0] == at_ms:
            self._armed[owner] = (at_ms, previous[1], wake)
            return
        self._counter += 1
        self._armed[owner] = (at_ms, self._counter, wake)
        heapq.heappush(self._heap, (at_ms, self._counter, owner))
        if self._heap[0][1] == self._counter:
            self._changed.set()
        self._ensure_running()

    def cancel(self, owner: object) -> None:
        self._armed.pop(owner, None)  # its heap entry is dropped lazily

    def deadline(self, owner: object) -> int | None:
        entry = self._armed.get(owner)
        return None if entry is None else entry[0]

    def _ensure_running(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name="tickler-timers")

    def _pop_due(self, now: int) -> list[Callable[[], None]]:
        due: list[Callable[[], None]] = []
        while self._heap and self._heap[0][0] <= now:
            _at_ms, counter, owner = heapq.heappop(self._heap)
            entry = self._armed.get(owner)
            if entry is not None and entry[1] == counter:
                del self._armed[owner]
                due.append(entry[2])
        while self._heap and self._armed.get(self._heap[0][2], (0, -1))[1] != self._heap[0][1]:
            heapq.heappop(self._heap)  # stale entries at the top
        return due

    async def _run(self) -> None:
        while self._armed:
            for wake in self._pop_due(self._clock.now_ms()):
                wake()
            if not self._heap:
                break
            delay_s = self._until_s(self._heap[0][0])
            self._changed.clear()
            if self._now_ns is None:
                await self._sleep_or_change(min(self._max_wait_s, max(0.0, delay_s)))
                continue
            # The real clock: see FINAL_YIELD_S.
            if delay_s <= self.margin_s:
                if self._pause is not None and delay_s > 2 * PAUSE_S and self._hand_backs:
                    self._pause(PAUSE_S)  # a thread holding a job for the loop takes the GIL
                await asyncio.sleep(0)  # other work runs meanwhile
                continue
            seconds = min(self._max_wait_s, delay_s - self.margin_s)
            elapsed_ns = self._monotonic_ns or self._now_ns
            began = elapsed_ns()
            if await self._sleep_or_change(seconds):
                self._note_overrun((elapsed_ns() - began) / 1e9 - seconds)

    def _note_overrun(self, overrun_s: float) -> None:
        """Learn the margin from how late a whole sleep ended."""
        overruns = self._overruns
        overruns.append(overrun_s)
        if len(overruns) >= 2:  # the second largest needs two
            usual = sorted(overruns)[-2] + OVERRUN_PAD_S
            self.margin_s = min(MAX_MARGIN_S, max(FINAL_YIELD_S, usual))

    def _until_s(self, at_ms: int) -> float:
        """Seconds from now until the wall clock reaches ``at_ms``."""
        if self._now_ns is not None:
            return (at_ms * 1_000_000 - self._now_ns()) / 1e9
        return (at_ms - self._clock.now_ms()) / 1000

    async def _sleep_or_change(self, seconds: float) -> bool:
        """Whether the sleep ran to its end (no arm moved the first wake)."""
        sleep = asyncio.ensure_future(self._clock.sleep(seconds))
        changed = asyncio.ensure_future(self._changed.wait())
        try:
            done, _ = await asyncio.wait((sleep, changed), return_when=asyncio.FIRST_COMPLETED)
            return changed not in done
        finally:
            sleep.cancel()
            changed.cancel()

    async def release(self) -> None:
        """Stop the heap's task when no wake is armed (it sleeps up to
        ``max_wait_s`` before it notices by itself), so a closed session
        leaves no task behind; the next ``arm`` starts a new one."""
        task = self._task
        if self._armed or task is None:
            return
        self._task = None  # an arm meanwhile starts its own task
        task.cancel()
        await asyncio.wait((task,))

    async def close(self) -> None:
        self._armed.clear()
        self._heap.clear()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


_SHARED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, TimerHeap]] = (
    weakref.WeakKeyDictionary()
)


def shared_timers(clock: Clock) -> TimerHeap:
    """The process's timer heap for this event loop and clock."""
    per_loop = _SHARED.setdefault(asyncio.get_running_loop(), {})
    heap = per_loop.get(id(clock))
    if heap is None or heap._clock is not clock:
        heap = per_loop[id(clock)] = TimerHeap(clock)
    return heap
