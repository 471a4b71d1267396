"""The run's stores, generated once on disk: for each size, a JSONL
directory, an SQLite store file and APScheduler's job store holding the same
far-future sessions (the runs add theirs before each worker starts)."""

from __future__ import annotations

import time

from bench.runtime.common import log

from .plan import Cold
from .stores import (
    RUN,
    ApsCold,
    ColdStore,
    JsonlCold,
    Session,
    SqliteCold,
    far_session,
    far_sessions,
)


def far_run(cold: Cold, sessions: int, first: int = 0) -> list[Session]:
    """Sessions ``first`` on of a run in the store of ``sessions``, far ahead
    like the rest."""
    far = sessions - cold.run_size(sessions)
    return [
        far_session(f"{RUN}{i}", far + i, cold.now) for i in range(first, cold.run_size(sessions))
    ]


def generate(cold: Cold) -> None:
    for n in cold.sizes:
        far = n - cold.run_size(n)
        t0 = time.perf_counter()
        sessions = list(far_sessions(far, cold.now))
        log(f"{far:,} far-future sessions made in {time.perf_counter() - t0:.1f} s")
        tickler: tuple[ColdStore, ...] = (
            JsonlCold(cold.root / f"jsonl-{n}"),
            SqliteCold(cold.root / f"sqlite-{n}.db"),
        )
        for store in tickler:
            t0 = time.perf_counter()
            store.write(sessions)
            cold.stores[store.kind, n] = store
            log(f"  written to the {store.kind} store in {time.perf_counter() - t0:.1f} s")
        peer = ApsCold(cold.root / f"aps-{n}.sqlite")
        t0 = time.perf_counter()
        peer.write(sessions)
        cold.peers[n] = peer
        log(f"  and to APScheduler's job store in {time.perf_counter() - t0:.1f} s")
