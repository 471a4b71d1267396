"""``python -m bench.pg_scale``: see the package's docstring."""

from __future__ import annotations

import argparse
import os
import platform
import signal
import sys
import time
from collections.abc import Sequence
from types import FrameType

from bench.postgres import fresh_database
from tickler.adapters.stores import migrate

from . import claim, commands, drain, load, read_model, sizes
from .check import check_load
from .commit_rate import commit_rates
from .report import Table, mib

DSN = "postgresql://postgres@127.0.0.1:5432"


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.pg_scale", description=__doc__)
    parser.add_argument("--sessions", type=int, nargs="+", help="sizes (100000 1000000)")
    parser.add_argument("--burst", type=int, help="occurrences due at once (10000)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--quick", action="store_true", help="10,000 sessions, a burst of 2,000")
    parser.add_argument("--dsn", default=DSN, help="a server; the bench makes its own databases")
    args = parser.parse_args(argv)
    if args.sessions is None:
        args.sessions = [10_000] if args.quick else [100_000, 1_000_000]
    if args.burst is None:
        args.burst = 2_000 if args.quick else load.BURST
    return args


def log(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def measure(dsn: str, n: int, args: argparse.Namespace, table: Table, notes: list[str]) -> None:
    migrate(dsn, load.SCHEMA)
    t0 = time.time_ns() // 1_000_000
    started = time.perf_counter()
    loaded = load.load_background(dsn, n, t0)
    took = time.perf_counter() - started
    log(f"{n:,} sessions, {loaded.events:,} events loaded in {took:.0f} s")
    table.add("events loaded (load time)", n, f"{loaded.events:,} ({took:.0f} s)")
    notes.append(f"{n:,}: {check_load(dsn, n, t0)}")
    log("load checked")
    found = sizes.sizes(dsn)
    wake = ("index sessions_next_due", "index sessions_due_id")
    for key in wake:
        table.add(f"wake {key}", n, mib(found[key]), found[key] / n)
    for key, size in found.items():
        if key not in wake and "snapshots " not in key and "migrations" not in key:
            # bytes a session, for the growth column (not for what is nearly empty)
            table.add(key, n, mib(size), size / n if size >= 2**20 else None)

    due_ms = time.time_ns() // 1_000_000 - 1000
    load.load_burst(dsn, due_ms, args.burst)
    for what, lat in claim.claim_latency(dsn, due_ms).items():
        table.add(f"{what}, median / p99", n, str(lat), lat.median_ms)
    log("claims timed")
    secs = commands.run_s(commands.reminders_argv(dsn))
    label = f"tickler reminders --due-within 1h ({args.burst:,} due)"
    table.add(label, n, f"{secs * 1000:,.0f} ms", secs)
    secs = read_model.due_within_hour_s(dsn)
    table.add("  its query in process", n, f"{secs * 1000:,.1f} ms", secs)

    for workers in args.workers:
        d = drain.drain(dsn, workers, args.burst)
        log(f"{workers} worker(s): {d.from_spawn_s:.1f} s")
        label = f"drain, {workers} worker(s): from spawn (first to last)"
        table.add(label, n, f"{d.from_spawn_s:.1f} s ({d.first_to_last_s:.1f} s)", d.from_spawn_s)
        table.add(
            f"  deliveries/s, {workers} worker(s): from spawn (steady)",
            n,
            f"{d.rate:,.0f} ({d.steady_rate:,.0f})",
        )
        table.add(
            f"  peak RSS a worker (VmHWM), {workers} worker(s)",
            n,
            mib(max(d.peak_rss)),
            max(d.peak_rss),
        )
        table.add(
            f"  per delivery, {workers} worker(s): worker CPU / DB backends' CPU",
            n,
            f"{d.worker_cpu_s / d.count * 1000:.2f} / {d.backend_cpu_s / d.count * 1000:.2f} ms",
        )
        table.add(
            f"  per delivery, {workers} worker(s): DB commits / rows written",
            n,
            f"{d.commits / d.count:.2f} / {d.rows_written / d.count:.2f}",
        )
        table.add(f"  rows read by sequential scans, {workers} worker(s)", n, f"{d.rows_scanned:,}")
        hot = d.hot_updates / max(d.session_updates, 1)
        table.add(
            f"  session row updates a delivery (HOT), {workers} worker(s)",
            n,
            f"{d.session_updates / d.count:.2f} ({hot:.0%})",
        )
        label = f"  VACUUM ANALYZE before it ({workers} worker(s))"
        table.add(label, n, f"{d.vacuum_s:.1f} s", d.vacuum_s)

    secs = commands.run_s(commands.reminders_argv(dsn))
    table.add("tickler reminders --due-within 1h (none due)", n, f"{secs * 1000:,.0f} ms", secs)
    secs = read_model.due_within_hour_s(dsn)
    table.add("  its query in process ", n, f"{secs * 1000:,.1f} ms", secs)
    secs = commands.start_up_s()
    table.add("  (tickler --help: start-up alone)", n, f"{secs * 1000:,.0f} ms")
    secs = commands.run_s(commands.migrate_argv(dsn))
    table.add("tickler db migrate (up to date)", n, f"{secs * 1000:,.0f} ms", secs)
    secs = commands.migrate_from_v2_s(dsn)
    table.add("tickler db migrate from version 2", n, f"{secs * 1000:,.0f} ms", secs)
    after = sizes.sizes(dsn)["index sessions_next_due"]
    table.add("wake index sessions_next_due after the drains", n, mib(after), after / n)


def stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds: workers stopped, the databases dropped


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    began = time.perf_counter()
    command = "python -m bench.pg_scale" + " ".join(
        ["", *(["--quick"] if args.quick else []), "--sessions", *map(str, args.sessions)]
    )
    print(
        f"{command} --burst {args.burst}: Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, load average "
        f"{' '.join(f'{v:.1f}' for v in os.getloadavg())} at start, "
        f"{time.strftime('%Y-%m-%d %H:%M %Z')}",
        flush=True,
    )
    tag = f"bench_pg_scale_{os.getpid()}"
    with fresh_database(args.dsn, f"{tag}_commits") as dsn:
        rates = commit_rates(dsn)
    print(
        "commit rate (single-row INSERT, autocommit): "
        + ", ".join(f"{n} connection(s) {r:,.0f}/s" for n, r in rates.items()),
        flush=True,
    )
    table = Table(sorted(args.sessions))
    notes: list[str] = []
    failed = False
    for n in table.sizes:
        try:
            with fresh_database(args.dsn, f"{tag}_{n}") as dsn:
                measure(dsn, n, args, table, notes)
        except (drain.DrainWrong, RuntimeError) as exc:  # the other size still runs
            failed = True
            notes.append(f"{n:,} sessions FAILED: {exc}")
            log(f"FAILED at {n:,}: {exc}")
    print("\n".join(table.lines()))
    print("\n".join(notes))
    print(
        f"total {time.perf_counter() - began:.0f} s; load average "
        f"{' '.join(f'{v:.1f}' for v in os.getloadavg())} at the end"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
