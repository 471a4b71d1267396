"""Figure 4's tickler side, in a fresh process: what a worker asks its wake
index each round, per call, on stores of many cold sessions: the due
sessions (``wakes.due``: none are due) and the earliest wake
(``wakes.next_due``), through the store's ``index_read`` as the worker runs
them (a thread hop each); the same queries on a bare connection (the
index's own cost); and one idle round of the store's worker API
(``claim_due`` + ``next_due``, with its sweep of held rows every 2 s). The
stores of each size are open at once and timed in alternating blocks."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Awaitable, Callable
from contextlib import ExitStack, closing
from pathlib import Path
from typing import Any, Final

from bench.runtime.common import Record, log, measuring, wall_ms
from bench.runtime.report import Row, better, status
from bench.runtime.workers import Worker, tickler_worker

from . import peer
from .data import far_run
from .plan import T_FLAT, Cold, ratio
from .timing import interleaved_async_us, interleaved_us

LIMIT: Final = 16  # the worker's default concurrency: what one claim asks for


class IndexParams(Record, frozen=True):
    paths: list[str]  # JSONL directories or SQLite store files of different sizes
    calls: int


class IndexCost(Record, frozen=True):
    rows: int
    due_us: float  # index_read(wakes.due, now, 16): median per call
    next_due_us: float  # index_read(wakes.next_due)
    bare_due_us: float  # the same queries on a connection of this thread
    bare_next_due_us: float
    round_us: float  # claim_due(16, now) + next_due(), nothing due


class IndexCosts(Record, frozen=True):
    stores: list[IndexCost]  # as the paths


async def index_cost(p: IndexParams) -> IndexCosts:
    from tickler.adapters.stores import JsonlStore, SqliteStore
    from tickler.adapters.stores import _wakes as wakes

    paths = [Path(path) for path in p.paths]
    jsonl = [path.is_dir() for path in paths]
    stores = [
        JsonlStore(path) if is_dir else SqliteStore(path)
        for path, is_dir in zip(paths, jsonl, strict=True)
    ]
    now = int(wall_ms())
    for path, store in zip(paths, stores, strict=True):
        if await store.index_read(wakes.due, now, LIMIT, set()):
            raise RuntimeError(f"a session of {path} is due: the measured query finds none")
        if await store.index_read(wakes.next_due, set()) is None:
            raise RuntimeError(f"no session of {path} has a wake")

    def due(store: Any) -> Callable[[], Awaitable[object]]:
        return lambda: store.index_read(wakes.due, now, LIMIT, set())

    def next_due(store: Any) -> Callable[[], Awaitable[object]]:
        return lambda: store.index_read(wakes.next_due, set())

    def idle_round(store: Any) -> Callable[[], Awaitable[object]]:
        async def round_() -> None:
            if await store.claim_due(LIMIT, int(wall_ms())):
                raise RuntimeError("a session was claimed: none should be due")
            await store.next_due()

        return round_

    measuring(True)
    due_us = await interleaved_async_us([due(s) for s in stores], p.calls)
    next_us = await interleaved_async_us([next_due(s) for s in stores], p.calls)
    round_us = await interleaved_async_us([idle_round(s) for s in stores], p.calls)
    measuring(False)
    with ExitStack() as stack:
        conns = [
            stack.enter_context(closing(sqlite3.connect(path / ".wake.db" if is_dir else path)))
            for path, is_dir in zip(paths, jsonl, strict=True)
        ]
        rows = [int(conn.execute("SELECT count(*) FROM wakes").fetchone()[0]) for conn in conns]
        bare_due = interleaved_us(
            [functools.partial(wakes.due, conn, now, LIMIT, set()) for conn in conns], p.calls
        )
        bare_next = interleaved_us(
            [functools.partial(wakes.next_due, conn, set()) for conn in conns], p.calls
        )
    for store in stores:
        await store.close()
    return IndexCosts(
        [
            IndexCost(
                rows=rows[i],
                due_us=due_us[i],
                next_due_us=next_us[i],
                bare_due_us=bare_due[i],
                bare_next_due_us=bare_next[i],
                round_us=round_us[i],
            )
            for i in range(len(stores))
        ]
    )


INDEX: Final = tickler_worker("index", IndexParams, IndexCosts, index_cost)
WORKERS: Final[tuple[Worker[Any, Any], ...]] = (INDEX,)


def us(value: float) -> str:
    return f"{value:,.1f} us"


def measure(cold: Cold) -> None:
    small, large = cold.sizes
    calls = cold.scale.calls
    found: dict[str, IndexCosts] = {}
    for kind in ("JSONL", "SQLite"):
        log(f"finding what is due: tickler ({kind}), {small:,} and {large:,} sessions")
        paths = []
        for sessions in (small, large):
            store = cold.stores[kind, sessions]
            store.replace_run(far_run(cold, sessions))  # nothing due, as between deliveries
            paths.append(str(store.path))
        found[kind] = cold.runner.run(INDEX, IndexParams(paths, calls))
    log(f"finding what is due: APScheduler, {small:,} and {large:,} jobs")
    for sessions in (small, large):
        cold.peers[sessions].replace_run(far_run(cold, sessions))
    peers = cold.runner.run(
        peer.INDEX,
        peer.ApsIndexParams([str(cold.peers[n].file) for n in (small, large)], calls),
    )
    a_small, a_large = peers.stores
    for kind in ("JSONL", "SQLite"):
        t_small, t_large = found[kind].stores
        for label, t_s, t_l, a_s, a_l in (
            (
                "next due (next_due / get_next_run_time)",
                t_small.next_due_us,
                t_large.next_due_us,
                a_small.next_run_us,
                a_large.next_run_us,
            ),
            (
                "due now (due / get_due_jobs), none due",
                t_small.due_us,
                t_large.due_us,
                a_small.due_us,
                a_large.due_us,
            ),
        ):
            flat = ratio(t_l, t_s)
            cold.rows[4] += [
                Row(f"4. {label} ({kind}), {large:,}", us(t_l), us(a_l), better(a_l / t_l)),
                Row(f"   at {small:,}", us(t_s), us(a_s), better(a_s / t_s)),
                Row(
                    f"   ratio {large:,} / {small:,}",
                    f"{flat:.2f}x",
                    f"{ratio(a_l, a_s):.2f}x",
                    "-",
                    f"<= {T_FLAT:g}x",
                    status(flat <= T_FLAT),
                ),
            ]
        cold.rows[4] += [
            Row(
                f"   the same queries on a bare connection ({kind}), {small:,} / {large:,}",
                f"{us(t_small.bare_next_due_us)} + {us(t_small.bare_due_us)} / "
                f"{us(t_large.bare_next_due_us)} + {us(t_large.bare_due_us)}",
            ),
            Row(
                f"   one idle round, claim_due + next_due ({kind}), {small:,} / {large:,}",
                f"{us(t_small.round_us)} / {us(t_large.round_us)}",
            ),
        ]
    cold.notes.append(
        f"figure 4: medians of {calls:,} calls each, both sizes in one fresh process per "
        "store kind, timed in alternating blocks; tickler's through the store's index_read "
        "(a thread hop, as the worker runs them)"
    )
