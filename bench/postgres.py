"""tickler's PostgreSQL store and workers side by side with procrastinate
(a PostgreSQL task queue) doing the same work, in one run, on one server.

* durable creates/s: ``--creates`` reminders (jobs) due in an hour, created
  from one process with 1 and with 64 in flight;
* burst deliveries/s: ``--burst`` items all due at one instant shortly after
  they are created; at that instant W worker processes start (W in
  ``--workers``, each delivering ``--concurrency`` at once); deliveries/s =
  items / (last delivery - due instant), which includes the workers'
  start-up, and also (deliveries - 1) / (last - first delivery), which does
  not; every item is checked delivered exactly once (rows and distinct keys);
* firing lateness: ``--lateness`` items due evenly over ``--window``
  seconds, W workers already running; lateness = delivered_at - due_at,
  p50/p99/max over every delivery.

A delivery is one call of bench/pg_record.py's callable, the same for both
sides: one durable INSERT of (key, due_at, delivered_at) into a table of the
same database. Each figure is measured in a fresh database of its own
(bench_<side>_<pid>_<n>), dropped after it, also on failure; worker
processes are started by the scenario and stopped with SIGTERM, then
SIGKILL. The figures run one after another, each side in turn, so that a
change of load on the machine falls on both sides of a ratio.
procrastinate runs with listen/notify on and its fetch polling interval =
``--poll``, the fallback poll tickler's workers use too: it is woken by
NOTIFY when a job is deferred, not when a deferred job falls due, so its
lateness is bounded by that poll. A side whose module raises
NotImplementedError shows n/a.

Run from the repository root as a module (its parts import each other):

    python -m bench.postgres [--quick] [--side both|tickler|procrastinate]
        [--workers 1,2,4] [--concurrency 16] [--poll 1.0]
        [--dsn postgresql://postgres@127.0.0.1:5432]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.metadata
import math
import os
import signal
import sys
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from types import FrameType
from typing import Protocol, TypeVar

import psycopg
from psycopg import sql

from . import pg_common, pg_peer, pg_tickler
from .pg_common import BurstResult, LatenessResult

SIDES = ("tickler", "procrastinate")
T = TypeVar("T")
P99_TARGET = 0.100  # seconds
RATE_TARGET = 2.0  # tickler's deliveries/s with the most workers, over procrastinate's


class Side(Protocol):
    async def creates(self, dsn: str, count: int, in_flight: int) -> float: ...

    def burst(
        self, dsn: str, count: int, workers: int, concurrency: int, poll: float
    ) -> BurstResult: ...

    def lateness(
        self, dsn: str, count: int, window: float, workers: int, concurrency: int, poll: float
    ) -> LatenessResult: ...


@dataclass
class Outcome:
    """One side's results; None where the side is not written yet."""

    creates: dict[int, float | None] = field(default_factory=dict)
    burst: dict[int, BurstResult | None] = field(default_factory=dict)
    lateness: dict[int, LatenessResult | None] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)  # figures that raised


def database_url(base: str, name: str) -> str:
    return f"{base.rstrip('/')}/{name}"


@contextlib.contextmanager
def fresh_database(base: str, name: str) -> Iterator[str]:
    admin = database_url(base, "postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        dsn = database_url(base, name)
        pg_common.create_deliveries_table(dsn)
        yield dsn
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


class Runner:
    """Runs one side's figures, each in a fresh database."""

    def __init__(self, name: str, side: Side, args: argparse.Namespace) -> None:
        self.name, self.side, self.args = name, side, args
        self.serial = 0
        self.outcome = Outcome()
        self.missing: set[str] = set()  # functions that raised NotImplementedError

    def measure(self, what: str, detail: str, call: Callable[[str], T]) -> T | None:
        if what in self.missing:
            return None
        self.serial += 1
        print(f"  {self.name} {what}, {detail} ...", file=sys.stderr, flush=True)
        try:
            with fresh_database(
                self.args.dsn, f"bench_{self.name}_{os.getpid()}_{self.serial}"
            ) as dsn:
                return call(dsn)
        except NotImplementedError as error:
            print(f"  {self.name} {what}: {error}", file=sys.stderr)
            self.missing.add(what)
        except Exception:  # noqa: BLE001 - one failed figure must not hide the others
            traceback.print_exc()
            self.outcome.failed.append(f"{what}, {detail}")
        return None

    def creates(self, n: int) -> None:
        args, side = self.args, self.side
        self.outcome.creates[n] = self.measure(
            "creates", f"{n} in flight", partial(run_creates, side, args.creates, n)
        )

    def burst(self, w: int) -> None:
        args = self.args
        burst = partial(self.side.burst, count=args.burst, workers=w)
        self.outcome.burst[w] = self.measure(
            "burst", f"{w} worker(s)", partial(burst, concurrency=args.concurrency, poll=args.poll)
        )

    def lateness(self, w: int) -> None:
        args = self.args
        lateness = partial(self.side.lateness, count=args.lateness, window=args.window, workers=w)
        self.outcome.lateness[w] = self.measure(
            "lateness",
            f"{w} worker(s)",
            partial(lateness, concurrency=args.concurrency, poll=args.poll),
        )


def run_all(runners: list[Runner], args: argparse.Namespace) -> None:
    """Figure by figure, each side in turn: a change of load on a shared
    machine then falls on both sides of a ratio, not on one."""
    steps: list[Callable[[Runner], None]] = [partial(Runner.creates, n=n) for n in args.in_flight]
    steps += [partial(Runner.burst, w=w) for w in args.workers]
    steps += [partial(Runner.lateness, w=w) for w in args.workers]
    for step in steps:
        for runner in runners:
            step(runner)


def run_creates(side: Side, count: int, in_flight: int, dsn: str) -> float:
    return asyncio.run(side.creates(dsn, count, in_flight))


def fmt(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "n/a"
    if math.isnan(value):
        return "nan"
    return f"{value:,.{digits}f}"


def ratio(tickler: float | None, peer: float | None) -> float | None:
    if tickler is None or peer is None or peer == 0 or math.isnan(tickler) or math.isnan(peer):
        return None
    return tickler / peer


def once(result: BurstResult | None) -> str:
    if result is None:
        return "n/a"
    got = result.delivered
    verdict = "ok" if got.exactly_once(result.count) else "WRONG"
    return f"{got.keys}/{result.count} keys, {got.rows} rows {verdict}"


Row = tuple[str, str, str, str, str]


def rows(out: dict[str, Outcome], args: argparse.Namespace) -> list[Row]:
    tick, peer = out["tickler"], out["procrastinate"]
    table: list[Row] = []

    def number(label: str, a: float | None, b: float | None, digits: int, target: str = "") -> None:
        r = ratio(a, b)
        table.append(
            (label, fmt(a, digits), fmt(b, digits), fmt(r, 2) + "x" if r else "n/a", target)
        )

    for n in args.in_flight:
        number(f"durable creates/s, {n} in flight", tick.creates.get(n), peer.creates.get(n), 0)
    top = max(args.workers)
    for w in args.workers:
        tb, pb = tick.burst.get(w), peer.burst.get(w)
        target = ""
        if w == top:
            r = ratio(from_due(tb), from_due(pb))
            met = "n/a" if r is None else ("met" if r >= RATE_TARGET else "NOT met")
            target = f">= {RATE_TARGET:g}x procrastinate: {met}"
        number(f"deliveries/s, {w} worker(s), due->last", from_due(tb), from_due(pb), 0, target)
        number(f"deliveries/s, {w} worker(s), first->last", steady(tb), steady(pb), 0)
        table.append((f"delivered exactly once, {w} worker(s)", once(tb), once(pb), "", ""))
    for w in args.workers:
        tl, pl = tick.lateness.get(w), peer.lateness.get(w)
        for name, fraction in (("p50", 0.5), ("p99", 0.99), ("max", 1.0)):
            a, b = late_ms(tl, fraction), late_ms(pl, fraction)
            target = ""
            if name == "p99":
                met = "n/a" if a is None else ("met" if a < P99_TARGET * 1000 else "NOT met")
                target = f"< {P99_TARGET * 1000:g} ms: {met}"
            number(f"lateness {name} ms, {w} worker(s)", a, b, 1, target)
        table.append((f"lateness check, {w} worker(s)", late_check(tl), late_check(pl), "", ""))
    return table


def from_due(result: BurstResult | None) -> float | None:
    return result.rate_from_due if result else None


def steady(result: BurstResult | None) -> float | None:
    return result.rate_steady if result else None


def late_ms(result: LatenessResult | None, fraction: float) -> float | None:
    return result.percentile(fraction) * 1000 if result else None


def late_check(result: LatenessResult | None) -> str:
    if result is None:
        return "n/a"
    got = result.delivered
    verdict = "ok" if got.exactly_once(result.count) else "WRONG"
    return (
        f"{got.keys}/{result.count} keys, {got.rows} rows {verdict}; "
        f"{result.created_late} due before all created"
    )


def print_table(table: list[Row]) -> None:
    header: Row = ("figure", "tickler", "procrastinate", "ratio", "target")
    widths = [max(len(row[i]) for row in [header, *table]) for i in range(5)]
    for row in [header, tuple("-" * w for w in widths), *table]:
        print(
            "  ".join(
                cell.ljust(widths[i]) if i in (0, 4) else cell.rjust(widths[i])
                for i, cell in enumerate(row)
            ).rstrip()
        )


def print_setup(args: argparse.Namespace) -> None:
    with psycopg.connect(database_url(args.dsn, "postgres"), autocommit=True) as conn:
        settings = {
            name: conn.execute(sql.SQL("SHOW {}").format(sql.Identifier(name))).fetchone()
            for name in ("server_version", "synchronous_commit", "fsync", "max_connections")
        }
    shown = ", ".join(f"{k}={v[0] if v else '?'}" for k, v in settings.items())
    print(f"PostgreSQL at {args.dsn}: {shown}; {os.cpu_count()} CPUs")
    print(
        f"procrastinate {importlib.metadata.version('procrastinate')}: listen/notify on, "
        f"fetch_job_polling_interval={args.poll:g} s (= tickler's fallback poll), "
        f"concurrency={args.concurrency} per worker, pool min({args.concurrency}, 8) + listener"
    )
    print(
        f"creates: {args.creates} each; burst: {args.burst} items; lateness: {args.lateness} "
        f"items over {args.window:g} s; workers {args.workers}; delivery = one durable INSERT "
        f"(pg_record, pool of {pg_record_pool()} per worker process)"
    )


def pg_record_pool() -> int:
    from . import pg_record

    return pg_record.POOL_SIZE


def int_list(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part]


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller counts, about a minute")
    parser.add_argument("--side", choices=("both", *SIDES), default="both")
    parser.add_argument("--dsn", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--workers", type=int_list, default=[1, 2, 4])
    parser.add_argument("--in-flight", type=int_list, default=[1, 64])
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--poll", type=float, default=1.0, help="fallback poll, seconds")
    parser.add_argument("--creates", type=int)
    parser.add_argument("--burst", type=int)
    parser.add_argument("--lateness", type=int)
    parser.add_argument("--window", type=float)
    args = parser.parse_args(argv)
    defaults = (300, 1000, 300, 4.0) if args.quick else (2000, 5000, 2000, 20.0)
    for name, default in zip(("creates", "burst", "lateness", "window"), defaults, strict=True):
        if getattr(args, name) is None:
            setattr(args, name, default)
    return args


def stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds: workers stopped, databases dropped


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    print_setup(args)
    modules: dict[str, Side] = {"tickler": pg_tickler, "procrastinate": pg_peer}
    runners = [Runner(name, modules[name], args) for name in SIDES if args.side in ("both", name)]
    run_all(runners, args)
    out = {name: Outcome() for name in SIDES} | {r.name: r.outcome for r in runners}
    print()
    print_table(rows(out, args))
    for name, outcome in out.items():
        if outcome.failed:
            print(f"{name}: FAILED (n/a above, traceback above): {', '.join(outcome.failed)}")
    wrong = [
        f"{name} {kind} {w} worker(s)"
        for name, outcome in out.items()
        for kind, results in (("burst", outcome.burst), ("lateness", outcome.lateness))
        for w, result in results.items()
        if result is not None and not result.delivered.exactly_once(result.count)
    ]
    if wrong:
        print(f"NOT delivered exactly once: {', '.join(wrong)}")
    return 1 if wrong or any(o.failed for o in out.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
