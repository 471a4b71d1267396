"""A framework's conversation kept in the session's own log.

The framework hosts record each turn's messages as events beside the
turn's ``tickler/turn`` record (in the same batch, see
:class:`~tickler.shell._reference_host.TurnReply`), in the framework's own
serialized form, and read them back when the session opens. What a turn
is given is a :class:`Window`: the newest whole turns, at most ``window``
messages, so long sessions stay cheap and a history never starts inside a
turn (with a tool result whose call was cut off).

:class:`LogList` is the part the OpenAI Agents SDK session and the
LangChain chat history share: JSON items added, popped and cleared by
appending events (the log is never rewritten), written at once when used
on their own, or staged into the batch of a host's turn.

This module imports no agent framework.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, Generic, TypeVar

import msgspec

from tickler.core import SessionEvent
from tickler.shell import Clock, NewEvent, SessionLog, SystemClock

__all__ = ["DEFAULT_WINDOW", "LogList", "Window", "check_window", "json_bytes", "json_value"]

DEFAULT_WINDOW: Final = 100
"""Messages (items) a framework host gives a turn of the conversation so
far, at most: the newest whole turns that fit."""

T = TypeVar("T")
EventPair = tuple[str, bytes]
"""An event for a turn's batch: its type and its ``data`` (one JSON line)."""


def check_window(window: int | None) -> int | None:
    """``window`` when it is a positive int or None (everything); raises
    ValueError otherwise."""
    if window is not None and (type(window) is not int or window < 1):
        raise ValueError(f"window must be a positive number of messages or None, not {window!r}")
    return window


def json_bytes(value: object) -> bytes:
    """``value`` as one line of compact JSON (UTF-8; a lone surrogate, which
    UTF-8 cannot hold, is written as its ``\\u`` escape)."""
    try:
        return msgspec.json.encode(value)
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":")).encode()


def json_value(data: bytes | msgspec.Raw) -> Any:
    """The JSON ``data`` of an event as Python values (``json_bytes``' inverse)."""
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError:  # msgspec refuses lone-surrogate escapes; the stdlib reads them
        return json.loads(bytes(data))


class Window(Generic[T]):
    """The newest whole turns of a conversation: at most ``size`` items
    (None: all), starting at an item for which ``starts_turn`` holds.

    Older items are dropped as the conversation grows (when it holds twice
    ``size``, so adding costs constant time on average). The same events
    applied in the same order give the same window, whether live or read
    back from the log."""

    def __init__(
        self, size: int | None, starts_turn: Callable[[T], bool], items: Iterable[T] = ()
    ) -> None:
        self._size = check_window(size)
        self._starts_turn = starts_turn
        self._items: list[T] = list(items)
        self._trim()

    @property
    def items(self) -> list[T]:
        """The window: whole turns only; empty when the newest turn alone
        holds more than ``size`` items."""
        return self._items[self._start() :]

    @property
    def newest(self) -> T | None:
        return self._items[-1] if self._items else None

    def copy(self) -> Window[T]:
        return Window(self._size, self._starts_turn, self._items)

    def extend(self, items: Iterable[T]) -> None:
        self._items.extend(items)
        self._trim()

    def pop(self) -> T | None:
        """Remove and return the newest item (None when there is none)."""
        return self._items.pop() if self._items else None

    def clear(self) -> None:
        self._items.clear()

    def _start(self) -> int:
        if self._size is None:
            return 0
        for index in range(max(0, len(self._items) - self._size), len(self._items)):
            if self._starts_turn(self._items[index]):
                return index
        return len(self._items)

    def _trim(self) -> None:
        if self._size is not None and len(self._items) > 2 * self._size:
            del self._items[: self._start()]


class LogList:
    """A conversation of JSON items in a session log.

    Adding writes ``{"<key>": [items]}`` as an ``added`` event; popping
    the newest item writes a ``popped`` event (where there is one) and
    clearing a ``cleared`` one: nothing is ever rewritten. What the log
    holds is read once, here, from the session's own part of the log
    (``header.owned_from``); after that the window is kept in memory.

    On its own, each change is appended at once (the caller flushes). A
    host stages a turn's changes instead (:meth:`begin`): they show at once
    in :attr:`items`, and go into the log with the turn's record
    (:meth:`take`), or are dropped if the turn is not recorded.
    """

    def __init__(
        self,
        log: SessionLog,
        *,
        added: str,
        popped: str | None,
        cleared: str,
        key: str,
        window: int | None,
        starts_turn: Callable[[Any], bool],
        clock: Clock | None = None,
    ) -> None:
        self._log = log
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._added, self._popped, self._cleared, self._key = added, popped, cleared, key
        self._window: Window[Any] = Window(window, starts_turn)
        self._staged: list[tuple[str, list[Any] | None]] | None = None  # (type, added items)
        self._saved: Window[Any] | None = None  # the window before an unrecorded turn
        self.version = 0  # bumped by every change: lets a reader cache what it built
        for event in log.events(log.header.owned_from):
            self._replay(event)

    @property
    def items(self) -> list[Any]:
        return self._window.items

    def seed(self, items: Sequence[Any]) -> None:
        """Start from ``items`` (a caller's own history), in memory only."""
        self._window.clear()
        self._window.extend(items)
        self.version += 1

    # -- changes ------------------------------------------------------------

    def add(self, items: Sequence[Any]) -> None:
        if not items:
            return
        added = json_value(json_bytes(list(items)))  # as they will read back
        last = self._staged[-1][1] if self._staged else None
        if self._staged is None:
            now = self._clock.now_ms()
            self._log.append([NewEvent(*self._added_pair(added), now)])
        elif last is not None:
            last.extend(added)  # one event for the items a turn adds in a row
        else:
            self._staged.append((self._added, added))
        self._window.extend(added)
        self.version += 1

    def pop(self) -> Any | None:
        item = self._window.newest
        if item is None:
            return None
        if self._popped is None:
            raise TypeError("this conversation has no pop event")
        self._write(self._popped)
        self._window.pop()
        self.version += 1
        return item

    def clear(self) -> None:
        self._write(self._cleared)
        self._window.clear()
        self.version += 1

    async def flush(self) -> None:
        """Make the changes durable (none to flush while a turn stages them)."""
        if self._staged is None:
            await self._log.flush()

    def _write(self, kind: str) -> None:
        """A pop or a clear (their data is ``{}``)."""
        if self._staged is not None:
            self._staged.append((kind, None))
        else:
            self._log.append([NewEvent(kind, b"{}", self._clock.now_ms())])

    def _added_pair(self, items: list[Any]) -> EventPair:
        return self._added, b'{"%s":%s}' % (self._key.encode(), json_bytes(items))

    # -- a host's turn ------------------------------------------------------

    def begin(self) -> None:
        """A host's turn starts: later changes are staged for its batch."""
        self.rollback()
        self._saved = self._window.copy()
        self._staged = []

    def take(self) -> tuple[list[EventPair], Callable[[], None]]:
        """The turn's staged events (the items added in a row as one
        event), and the call that keeps its changes once they are appended
        (until then, the next :meth:`begin` or a :meth:`rollback` drops
        them)."""
        staged, self._staged = self._staged or [], None
        events = [
            (kind, b"{}") if items is None else self._added_pair(items) for kind, items in staged
        ]
        return events, self._commit

    def rollback(self) -> None:
        """Drop the changes of a turn that was not recorded."""
        if self._saved is not None:
            self._window = self._saved
            self.version += 1
        self._saved = None
        self._staged = None

    def _commit(self) -> None:
        self._saved = None

    # -- reading back -------------------------------------------------------

    def _replay(self, event: SessionEvent) -> None:
        if event.type == self._added:
            value = json_value(event.data)
            items = value.get(self._key) if isinstance(value, dict) else None
            if not isinstance(items, list):
                raise ValueError(
                    f"session log event {event.seq}: malformed {event.type} record "
                    f"(no {self._key!r} list)"
                )
            self._window.extend(items)
        elif event.type == self._popped and self._popped is not None:
            self._window.pop()
        elif event.type == self._cleared:
            self._window.clear()
