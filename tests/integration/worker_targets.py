"""Delivery targets for ``tickler worker`` processes started by the tests
(``--deliver worker_targets:slow``, with this folder on PYTHONPATH)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from tickler.shell._host import FollowUp


def _note(line: str) -> None:
    with Path(os.environ["WORKER_TARGET_OUT"]).open("a", encoding="utf-8") as out:
        out.write(line + "\n")
        out.flush()
        os.fsync(out.fileno())


async def slow(message: FollowUp, session: str) -> None:
    """Takes a while: notes the start, waits, notes the end (then returns:
    delivered)."""
    _note(f"start {session} {message.key}")
    await asyncio.sleep(float(os.environ.get("WORKER_TARGET_SLEEP", "2")))
    _note(f"end {session} {message.key}")


async def record(message: FollowUp, session: str) -> None:
    """Takes it at once, noting ``delivered <session> <key>``."""
    _note(f"delivered {session} {message.key}")
