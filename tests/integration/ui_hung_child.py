"""A child process for the dashboard's Ctrl-C test (run as a script, not
collected): the dashboard served as ``tickler ui`` serves it, over a
JSONL store whose every session read hangs in the read model's thread
(it opens a FIFO nobody writes, as a hung file system would never
answer).

ui_hung_child.py STORE FIFO  print "serving PORT" on stdout, serve until
                             SIGINT or SIGTERM, then exit 0
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tickler.adapters.dashboard._app import create_app
from tickler.adapters.dashboard._serve import listen, serve
from tickler.adapters.read._files import JsonlReadModel, Stamp
from tickler.adapters.read._views import Summary


class HungReads(JsonlReadModel):
    def __init__(self, directory: Path, fifo: Path) -> None:
        super().__init__(directory)
        self.fifo = fifo

    def summary(self, session_id: str, stamp: Stamp | None = None, failures: int = 0) -> Summary:
        with self.fifo.open("rb") as never:  # blocks until a writer comes, then on the read
            never.read()
        raise AssertionError("the FIFO was written to")


def main(store: str, fifo: str) -> None:
    sock = listen("127.0.0.1", 0)
    print(f"serving {sock.getsockname()[1]}", flush=True)
    app = create_app(HungReads(Path(store), Path(fifo)))
    asyncio.run(serve(app, sock))


if __name__ == "__main__":
    main(*sys.argv[1:])
