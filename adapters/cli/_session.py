"""One live session for the CLI: a reference host over ``open_session``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from tickler.core import DEFAULT_PROFILE, Profile
from tickler.shell import (
    Clock,
    Model,
    ReferenceHost,
    Session,
    SessionStore,
    SessionTools,
    TurnInput,
    open_session,
)


def open_store(directory: str) -> SessionStore:
    from tickler.adapters.stores._jsonl import JsonlStore

    return JsonlStore(directory)


@asynccontextmanager
async def live_session(
    store: SessionStore,
    session_id: str,
    model_for: Callable[[SessionTools], Model],
    clock: Clock | None = None,
    *,
    on_reply: Callable[[TurnInput, str], None] | None = None,
    profile: Profile = DEFAULT_PROFILE,
) -> AsyncIterator[Session[ReferenceHost]]:
    """The session, run by a reference host whose model ``model_for``
    builds from the session's tools (once per session: it may hold a
    conversation). On exit the session stops the runtime and the host,
    saves a snapshot and closes the log (deleting nothing)."""

    def host(session: Session[ReferenceHost]) -> ReferenceHost:
        return ReferenceHost(
            session.log, model_for(session.tools), session.clock, on_reply=on_reply
        )

    async with open_session(store, session_id, host=host, clock=clock, profile=profile) as session:
        yield session
