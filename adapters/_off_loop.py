"""Blocking reads run off the event loop in daemon threads, so that a
read that never returns (a file system that hangs, a file swapped for a
FIFO after it was checked) cannot keep the process alive once its loop
ends: a thread of asyncio's default executor (``asyncio.to_thread``) is
joined when the loop closes and again when the interpreter exits, so
Ctrl-C would wait for it."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def off_loop(work: Callable[[], T]) -> T:
    """``work()``'s result (or its exception), computed in a daemon thread
    of its own; cancelling the caller leaves the thread to finish alone."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if done.done():  # the caller was cancelled meanwhile
            return
        if error is None:
            done.set_result(result)  # type: ignore[arg-type]  # None only with an error
        else:
            done.set_exception(error)

    def run() -> None:
        try:
            outcome: tuple[T | None, BaseException | None] = (work(), None)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
            outcome = (None, exc)
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=run, name="tickler-read", daemon=True).start()
    return await done
