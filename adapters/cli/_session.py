"""Wiring one live session for the CLI: store, reference host, runtime."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from tickler.shell._clock import Clock, SystemClock
from tickler.shell._ports import SessionLog, SessionStore
from tickler.shell._reference_host import Model, ReferenceHost, TurnInput
from tickler.shell._runtime import ScheduleRuntime


@dataclass
class LiveSession:
    log: SessionLog
    host: ReferenceHost
    runtime: ScheduleRuntime


def open_store(directory: str) -> SessionStore:
    from tickler.adapters.stores._jsonl import JsonlStore

    return JsonlStore(directory)


@asynccontextmanager
async def live_session(
    store: SessionStore,
    session_id: str,
    model_for: Callable[[ScheduleRuntime], Model],
    clock: Clock | None = None,
    *,
    on_reply: Callable[[TurnInput, str], None] | None = None,
) -> AsyncIterator[LiveSession]:
    """Open the session, start host and runtime; on exit stop both, save a
    snapshot and close the log (deleting nothing)."""
    clock = clock if clock is not None else SystemClock()
    log = await store.open(session_id, created_at=clock.now_ms())
    built: list[Model] = []  # the model needs the runtime, which needs the host

    async def model(turn: TurnInput) -> str:
        return await built[0](turn)

    host = ReferenceHost(log, model, clock, on_reply=on_reply)
    runtime = ScheduleRuntime(log, host, clock)
    built.append(model_for(runtime))  # once per session: it may hold a conversation
    try:
        await runtime.start()
        host.start()
        yield LiveSession(log, host, runtime)
    finally:
        await runtime.dispose()
        await host.close()
        await runtime.save_snapshot()
        await log.close()
