"""``session_file``: events as a session file, for ``tickler check``, a
store's import, or :func:`tickler.core.parse_session_jsonl`."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from tickler.core import SessionEvent, SessionHeader


def session_file(
    events: Iterable[SessionEvent],
    seed_length: int = 0,
    *,
    session_id: str = "session",
    created_at: int = 0,
) -> bytes:
    """The session file (the reference harness's layout) holding ``events``:
    the header line (with ``seedLength`` when there is a seed prefix), then
    one ``{"type","seq","time","data"}`` line per event, each ending in a
    newline."""
    header = SessionHeader(id=session_id, created_at=created_at)
    if seed_length:
        header = msgspec.structs.replace(header, seed_length=seed_length)
    lines = [msgspec.json.encode(header), *(msgspec.json.encode(e) for e in events)]
    return b"".join(line + b"\n" for line in lines)
