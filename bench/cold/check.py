"""The bench's correctness check, on a small store of each kind made by the
same generator: a worker started on it delivers every overdue occurrence
exactly once and nothing else, its start check finds every generated row
consistent (it looks at none again), and the sessions whose rows were marked
"look again" get back exactly the rows the generator wrote (the worker
computes each from the log: the generated wake and size are the exact ones)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence

from bench.runtime import harness
from bench.runtime.common import log, until, wall_ms

from .plan import SAMPLE_DUE, SAMPLE_FAR, SAMPLE_LOOK, Cold
from .process import CHANGED, Delivery, WorkerProcess
from .stores import ColdStore, JsonlCold, Session, SqliteCold, due_session, far_sessions

WAIT_S = 60.0


class CheckFailed(Exception):
    """The generated store or the worker on it is not what the figures assume."""


def expected_key(session: Session) -> str:
    """The follow-up key of a generated session's one reminder."""
    return f"schedule-1@{harness.instant_text(session.due_at)}"


def check_once(deliveries: Sequence[Delivery], expected: Sequence[Session], where: str) -> None:
    """Every expected occurrence delivered exactly once, and nothing else."""
    got = Counter((d.session, d.key) for d in deliveries)
    want = Counter((s.session_id, expected_key(s)) for s in expected)
    if got != want:
        missing = sorted((want - got).elements())[:3]
        extra = sorted((got - want).elements())[:3]
        raise CheckFailed(
            f"{where}: {sum(got.values())} deliveries for {sum(want.values())} expected "
            f"occurrences; missing {missing}, unexpected or repeated {extra}"
        )


def check_sample(cold: Cold) -> list[str]:
    """Run the check on a small store of each kind; its notes."""
    makers: tuple[Callable[[], ColdStore], ...] = (
        lambda: JsonlCold(cold.root / "sample-jsonl"),
        lambda: SqliteCold(cold.root / "sample.db"),
    )
    return [_check(make(), cold) for make in makers]


def _check(store: ColdStore, cold: Cold) -> str:
    now = int(wall_ms())
    far = list(far_sessions(SAMPLE_FAR, now))
    store.write(far)
    overdue = [due_session(f"x{i}", i, now - 60_000 + 10 * i) for i in range(SAMPLE_DUE)]
    store.replace_run(overdue)
    looked = [s.session_id for s in far[:SAMPLE_LOOK]]
    store.look_again(looked)
    worker = WorkerProcess(store.path, cold.root / "sample-notes")
    worker.start()
    try:
        delivered = worker.wait_for(SAMPLE_DUE, WAIT_S)
        settled = until(lambda: _settled(store, looked, overdue), WAIT_S, 0.05)
        time.sleep(0.5)  # anything delivered twice would be by now
    finally:
        worker.stop()
    where = f"the check on a small {store.kind} store"
    if not delivered or not settled:
        raise CheckFailed(f"{where}: the worker did not finish; its log:\n{worker.log_text()}")
    check_once(worker.deliveries(), overdue, where)
    if worker.said(CHANGED):
        raise CheckFailed(f"{where}: the worker's start check found generated rows stale")
    rows = store.index_rows()
    for s in far:
        want = (s.due_at, None, len(s.data) if store.sized else None)
        if rows[s.session_id] != want:
            raise CheckFailed(f"{where}: {s.session_id}'s row is {rows[s.session_id]}, not {want}")
    log(f"{where}: passed")
    return (
        f"check ({store.kind}): a worker on a generated store of {SAMPLE_FAR + SAMPLE_DUE} "
        f"sessions delivered each of its {SAMPLE_DUE} overdue occurrences once and nothing "
        f"else, looked at no generated row again, and rewrote the {SAMPLE_LOOK} rows marked "
        "'look again' exactly as generated"
    )


def _settled(store: ColdStore, looked: Sequence[str], overdue: Sequence[Session]) -> bool:
    """The marked rows were rewritten and the overdue sessions released."""
    from tickler.adapters.stores._wakes import DUE_NOW

    rows = store.index_rows()
    return all(rows[sid][0] != DUE_NOW and rows[sid][1] is None for sid in looked) and all(
        rows[s.session_id][:2] == (None, None) for s in overdue
    )
