"""A stand-in MCP server for the kill -9 test of delivery commands.

It hands one follow-up to a command (no deadline to speak of) that starts a
grandchild, writes ``"<its pid> <the grandchild's pid>"`` to the file PIDS
(atomically, by a rename) and waits. The test then kills this process with
SIGKILL and watches both pids.
"""

from __future__ import annotations

import asyncio
import sys

from tickler.adapters.delivery._hosts import DeliverCommand
from tickler.core import Occurrence
from tickler.shell._host import FollowUp

SCRIPT = 'sleep 1000 & echo "$$ $!" > "$1.tmp" && mv "$1.tmp" "$1"; wait'

MESSAGE = FollowUp(
    key="schedule-1@2026-08-05T12:00:00.000Z",
    text="[SCHEDULE REMINDER]",
    occurrences=(Occurrence("schedule-1", "2026-08-05T12:00:00.000Z", "ping"),),
)


async def main(pids: str) -> None:
    host = DeliverCommand(["sh", "-c", SCRIPT, "sh", pids], session="s", timeout=10_000)
    await host.followup(MESSAGE)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
