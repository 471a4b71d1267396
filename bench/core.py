"""Core benchmarks: fold throughput and per-operation cost against log length.

Run ``python bench/core.py`` (``make bench``), or ``python bench/core.py --quick``.

The session logs are produced by driving the core itself, as a runtime does:
``handle`` for the model's tool calls, ``decide(DeliverDue())`` for due
reminders and ``evolve`` for every returned change, at an increasing ``now``.
The realistic log is one long-lived agent session: reminders are created,
most of them finish (one-shots fire once, fixed-rate ones fire again and
again), some are deleted, the pool of active reminders grows to about 1,000
and stays there, and conversation events (half of the log) sit in between.
The smaller logs are prefixes of the largest (the same session, reopened
earlier). A second, worst-case log has nothing but creates. Each log is
written as a session file, read back with ``parse_session_jsonl`` (what a
store hands to ``fold``) and checked with ``check_log`` before it is timed.
Both logs are generated in worker processes at once; nothing is timed until
both are done.

Only ratios measured in the same run mean much: the machine is shared.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Final

import msgspec
from returns.pipeline import is_successful

from tickler.core import (
    EMPTY_STATE,
    SCHEDULE_CHANGE,
    AfterSchedule,
    CreateChange,
    DeleteChange,
    DeliverDue,
    Delivery,
    DispatchChange,
    EverySchedule,
    ScheduleChange,
    SessionEvent,
    SessionHeader,
    State,
    Wait,
    check_log,
    decide,
    decode_change,
    encode_change,
    evolve,
    fold,
    format_instant,
    handle,
    parse_instant,
    parse_session_jsonl,
)
from tickler.core.wire._session import event

FOLD_TARGET_EVENTS_PER_S: Final = 300_000
# The core's layout issue asks more of the fold, with every rule written once.
FOLD_LAYOUT_TARGET_EVENTS_PER_S: Final = 800_000
RATIO_TARGET: Final = 1.3

T0: Final = parse_instant("2026-03-02T08:00:00.000Z")
POOL: Final = 1_000  # steady-state number of active reminders
RAMP: Final = 40  # the pool target grows by one every RAMP events, up to POOL
P_OTHER: Final = 0.5  # share of conversation (non-schedule) events in the log
P_DELETE: Final = 0.06  # chance that a schedule step (pool full) is a delete
P_EVERY: Final = 0.25  # share of creates that are fixed-rate ...
EVERY_SHARE: Final = 0.2  # ... while they are fewer than this share of the pool target
P_AT: Final = 0.15  # share of one-shot creates that use ``at``
P_IDLE_GAP: Final = 0.002  # the agent is away for hours: fixed-rate catch-up batches

AFTER_SECONDS: Final = (60, 300, 600, 900, 1800, 3600, 7200, 14_400, 43_200, 86_400, 259_200)
EVERY_SECONDS: Final = (300, 900, 1800, 3600, 7200, 21_600, 86_400)
_TEXT: Final = (
    "check deploy status of the billing service review pull request follow up with customer "
    "about invoice rotate credentials re-run nightly tests summarise open incidents ping "
    "on-call engineer verify backups renew certificate"
)
WORDS: Final = tuple(_TEXT.split())


# --------------------------------------------------------------------------------------
# Generating the logs


class IdPool:
    """Active ids with O(1) add, remove and random choice."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.pos: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def add(self, schedule_id: str) -> None:
        self.pos[schedule_id] = len(self.ids)
        self.ids.append(schedule_id)

    def remove(self, schedule_id: str) -> None:
        at = self.pos.pop(schedule_id)
        last = self.ids.pop()
        if at < len(self.ids):
            self.ids[at] = last
            self.pos[last] = at

    def choice(self, rng: random.Random) -> str:
        return self.ids[rng.randrange(len(self.ids))]


@dataclass
class Session:
    """Drives the core like a runtime would and records the resulting log."""

    rng: random.Random
    state: State = EMPTY_STATE
    now: int = T0
    events: list[SessionEvent] = field(default_factory=list)
    one_shots: IdPool = field(default_factory=IdPool)
    everies: IdPool = field(default_factory=IdPool)

    def append(self, type_: str, data: bytes) -> None:
        self.events.append(event(type_, len(self.events), self.now, data))

    def apply(self, changes: tuple[ScheduleChange, ...]) -> None:
        for change in changes:
            self.state = evolve(self.state, change)
            self.append(SCHEDULE_CHANGE, encode_change(change))

    def text(self, low: int, high: int) -> str:
        return " ".join(self.rng.choices(WORDS, k=self.rng.randint(low, high)))

    def message(self) -> None:
        self.now += self.rng.randint(500, 20_000)
        role = self.rng.choice(("user", "assistant", "tool"))
        self.append("message", msgspec.json.encode({"role": role, "content": self.text(8, 60)}))

    def create(self) -> None:
        rng = self.rng
        self.now += rng.randint(100, 5_000)
        args: dict[str, object] = {"prompt": self.text(3, 14).capitalize()}
        every = len(self.everies) < EVERY_SHARE * self.target() and rng.random() < P_EVERY
        if every:
            args["every_seconds"] = rng.choice(EVERY_SECONDS)
        elif rng.random() < P_AT:
            target = self.now + 1000 * rng.choice(AFTER_SECONDS) + rng.randint(0, 999)
            args["at"] = format_instant(target)
        else:
            args["after_seconds"] = rng.choice(AFTER_SECONDS) + rng.randint(0, 59)
        changes, output = handle(self.state, "schedule_create", args, self.now)
        change = changes[0] if len(changes) == 1 else None
        if not isinstance(change, CreateChange):
            raise AssertionError(f"create refused: {output}")
        self.apply(changes)
        (self.everies if every else self.one_shots).add(change.schedule.id)

    def delete(self) -> bool:
        pick_every = self.everies and (not self.one_shots or self.rng.random() < 0.5)
        pool = self.everies if pick_every else self.one_shots
        if not pool:
            return False
        schedule_id = pool.choice(self.rng)
        self.now += self.rng.randint(100, 5_000)
        changes, output = handle(self.state, "schedule_delete", {"id": schedule_id}, self.now)
        if len(changes) != 1:
            raise AssertionError(f"delete refused: {output}")
        self.apply(changes)
        pool.remove(schedule_id)
        return True

    def deliver(self) -> bool:
        """Deliver what is due, moving the clock to the next wake if needed."""
        if self.rng.random() < P_IDLE_GAP:
            self.now += self.rng.randint(2, 12) * 3_600_000
        changes, result = decide(self.state, DeliverDue(), self.now)
        outcome = result.unwrap()
        if isinstance(outcome, Wait):
            if outcome.next_wake is None:
                return False
            self.now = max(self.now, outcome.next_wake) + self.rng.randint(0, 1_500)
            changes, result = decide(self.state, DeliverDue(), self.now)
            outcome = result.unwrap()
        assert isinstance(outcome, Delivery)
        self.apply(changes)
        if outcome.accepted_at is None:
            self.one_shots.remove(outcome.occurrences[0].id)
        return True

    def target(self) -> int:
        return min(POOL, 20 + len(self.events) // RAMP)

    def step(self) -> None:
        rng = self.rng
        if rng.random() < P_OTHER:
            self.message()
            return
        if len(self.one_shots) + len(self.everies) >= self.target():
            if rng.random() < P_DELETE and self.delete():
                return
            if self.deliver():
                return
        self.create()


def realistic_log(size: int, seed: int = 1) -> list[SessionEvent]:
    session = Session(random.Random(seed))
    while len(session.events) < size:
        session.step()
    del session.events[size:]  # a fixed-rate batch may overshoot
    return session.events


def all_creates_log(size: int) -> list[SessionEvent]:
    """Worst case for fold: every event a create, all still active. Built with
    the model's constructors (what ``handle`` returns for ``after_seconds``)."""
    events: list[SessionEvent] = []
    for n in range(1, size + 1):
        now = T0 + n * 1_000
        seconds = AFTER_SECONDS[n % len(AFTER_SECONDS)]
        record = AfterSchedule(
            id=f"schedule-{n}",
            prompt=f"Reminder number {n}: check the deploy",
            after_seconds=seconds,
            scheduled_at=format_instant(now + seconds * 1_000),
        )
        events.append(
            event(
                SCHEDULE_CHANGE, n - 1, now, encode_change(CreateChange(version=1, schedule=record))
            )
        )
    return events


def session_file(events: Sequence[SessionEvent]) -> bytes:
    header = SessionHeader(id="bench-session", created_at=T0)
    encode = msgspec.json.Encoder().encode
    return b"\n".join([encode(header), *(encode(ev) for ev in events)]) + b"\n"


@dataclass
class Composition:
    creates: int = 0
    one_shot_dispatches: int = 0
    every_dispatches: int = 0
    deletes: int = 0
    other: int = 0
    active: int = 0
    active_every: int = 0

    @property
    def schedule(self) -> int:
        return self.creates + self.one_shot_dispatches + self.every_dispatches + self.deletes


def compositions(events: Sequence[SessionEvent], sizes: list[int]) -> dict[int, Composition]:
    """Counts by kind for each prefix, read back from the log itself."""
    out: dict[int, Composition] = {}
    count = Composition()
    for seen, ev in enumerate(events):
        if seen in sizes:
            out[seen] = dataclasses.replace(count)
        if ev.type != SCHEDULE_CHANGE:
            count.other += 1
            continue
        match decode_change(ev.data):
            case CreateChange():
                count.creates += 1
            case DeleteChange():
                count.deletes += 1
            case DispatchChange(accepted_at=str()):
                count.every_dispatches += 1
            case DispatchChange():
                count.one_shot_dispatches += 1
    out[len(events)] = count
    return out


@dataclass
class Built:
    """A generated session file, checked, with its composition per prefix."""

    data: bytes
    compositions: dict[int, Composition]
    generate_s: float
    check_s: float


def build(kind: str, sizes: list[int]) -> Built:
    """Runs in a worker process."""
    start = time.perf_counter()
    events = realistic_log(max(sizes)) if kind == "realistic" else all_creates_log(max(sizes))
    data = session_file(events)
    generated = time.perf_counter()
    del events
    _, parsed = parse_session_jsonl(data)
    counts = compositions(parsed, sizes)
    for n in sizes:
        result = check_log(parsed[:n])
        if not is_successful(result):
            raise AssertionError(f"{kind} log of {n} events is invalid: {result.failure()}")
        active = result.unwrap().active
        counts[n].active = len(active)
        counts[n].active_every = sum(isinstance(record, EverySchedule) for record in active)
    return Built(data, counts, generated - start, time.perf_counter() - generated)


# --------------------------------------------------------------------------------------
# Timing


@dataclass
class Stat:
    samples: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def min(self) -> float:
        return min(self.samples)


@dataclass
class Reopen:
    """Rounds of parse (file bytes -> events) then fold (events -> State)."""

    parse: Stat
    fold: Stat
    total: Stat
    events: tuple[SessionEvent, ...]
    state: State


def prefix_file(data: bytes, n: int) -> bytes:
    """The session file cut after its first ``n`` events."""
    end = -1
    for _ in range(n + 1):  # the header line, then n events
        end = data.index(b"\n", end + 1)
    return data[: end + 1]


def reopen_rounds(data: bytes, rounds: tuple[int, int], budget_s: float, gc_off: bool) -> Reopen:
    """At least ``rounds[0]`` and at most ``rounds[1]`` rounds, stopping once
    ``budget_s`` has been spent."""
    least, most = rounds
    header, events = parse_session_jsonl(prefix_file(data, 10_000) if len(data) > 2**22 else data)
    state = fold(events, header.owned_from)  # warm-up
    parse_ns: list[float] = []
    fold_ns: list[float] = []
    began = time.perf_counter()
    while len(fold_ns) < least or (len(fold_ns) < most and time.perf_counter() - began < budget_s):
        del events, state
        gc.collect()
        if gc_off:
            gc.disable()
        try:
            start = time.perf_counter_ns()
            header, events = parse_session_jsonl(data)
            mid = time.perf_counter_ns()
            state = fold(events, header.owned_from)
            end = time.perf_counter_ns()
        finally:
            gc.enable()
        parse_ns.append(float(mid - start))
        fold_ns.append(float(end - mid))
    total = [p + f for p, f in zip(parse_ns, fold_ns, strict=True)]
    return Reopen(Stat(parse_ns), Stat(fold_ns), Stat(total), events, state)


Op = Callable[[int], object]


def paired_rounds(
    ops: dict[str, list[Op]], batch: int, rounds: int, gc_off: bool
) -> dict[str, list[Stat]]:
    """ns per call of each op on each base state: ``rounds`` rounds of one
    short batch of ``batch`` calls per (op, state). Within a round the states
    of one op run back to back, in rotating order, so a busy neighbour slows
    them alike and the per-round ratios stay comparable."""
    for variants in ops.values():  # warm-up
        for op in variants:
            for i in range(batch):
                op(i)
    samples = {name: [[0.0] * rounds for _ in variants] for name, variants in ops.items()}
    gc.collect()
    if gc_off:
        gc.disable()
    try:
        for r in range(rounds):
            for name, variants in ops.items():
                order = list(range(len(variants)))
                order = order[r % len(order) :] + order[: r % len(order)]
                for k in order:
                    op = variants[k]
                    start = time.perf_counter_ns()
                    for i in range(batch):
                        op(i)
                    samples[name][k][r] = (time.perf_counter_ns() - start) / batch
    finally:
        gc.enable()
    return {name: [Stat(s) for s in per_state] for name, per_state in samples.items()}


@dataclass
class Base:
    """A state folded from a log prefix, and the inputs its ops use."""

    label: str
    state: State
    active: int
    now: int
    delete_ids: list[str]
    create_args: list[dict[str, object]]
    wait_now: int
    due_now: int


def base_from(label: str, reopened: Reopen, rng: random.Random) -> Base:
    state, events = reopened.state, reopened.events
    ids = [record.id for record in state.active]
    create_args: list[dict[str, object]] = []
    for i in range(64):
        args: dict[str, object] = {"prompt": f"Bench reminder {i}: review the pull request"}
        if i % 4 == 3:
            args["every_seconds"] = rng.choice(EVERY_SECONDS)
        else:
            args["after_seconds"] = rng.choice(AFTER_SECONDS) + rng.randint(0, 59)
        create_args.append(args)
    # Asked at the log's start, DeliverDue names the earliest target of all;
    # one-shots go first, so at the earliest one-shot target one is delivered.
    _, result = decide(state, DeliverDue(), events[0].time)
    wake = result.unwrap()
    assert isinstance(wake, Wait)
    assert wake.next_wake is not None
    one_shot_at = min(
        parse_instant(record.scheduled_at)
        for record in state.active
        if not isinstance(record, EverySchedule)
    )
    return Base(
        label,
        state,
        len(ids),
        events[-1].time,
        rng.sample(ids, min(64, len(ids))),
        create_args,
        wait_now=wake.next_wake - 1,
        due_now=one_shot_at,
    )


def ops_for(base: Base) -> dict[str, Op]:
    state, now = base.state, base.now
    create_args, delete_ids = base.create_args, base.delete_ids
    wait_now, due_now = base.wait_now, base.due_now
    n_ids = len(delete_ids)
    due = DeliverDue()

    def create_op(i: int) -> object:
        changes, _ = handle(state, "schedule_create", create_args[i & 63], now)
        return evolve(state, changes[0])

    def delete_op(i: int) -> object:
        changes, _ = handle(state, "schedule_delete", {"id": delete_ids[i % n_ids]}, now)
        return evolve(state, changes[0])

    def deliver_op(_: int) -> object:
        changes, _outcome = decide(state, due, due_now)
        return evolve(state, changes[0])

    def wait_op(_: int) -> object:
        return decide(state, due, wait_now)

    # Each op must do what its name says before it is timed.
    assert isinstance(create_op(0), State)
    assert isinstance(delete_op(0), State)
    delivered = decide(state, due, due_now)[1].unwrap()
    assert isinstance(delivered, Delivery)
    assert delivered.accepted_at is None
    assert isinstance(decide(state, due, wait_now)[1].unwrap(), Wait)
    return {
        "create+evolve": create_op,
        "delete+evolve": delete_op,
        "deliver(one-shot)+evolve": deliver_op,
        "decide(DeliverDue)->Wait": wait_op,
    }


# --------------------------------------------------------------------------------------
# Output


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def ms(ns: float) -> str:
    return f"{ns / 1e6:,.1f}"


def per_s(count: int, ns: float) -> str:
    return f"{count / (ns / 1e9):,.0f}"


def size_label(n: int) -> str:
    exp = len(str(n)) - 1
    return f"10^{exp}" if n == 10**exp else f"{n:,}"


def table(rows: list[list[str]], left: int = 1) -> None:
    """Columns right-aligned, except the first ``left`` ones."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [
            cell.ljust(width) if i < left else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        print("  " + "  ".join(cells).rstrip())


@dataclass
class Config:
    sizes: list[int]
    op_sizes: list[int]
    op_batch: int
    op_rounds: int
    gc_off: bool


def rounds_and_budget(n: int, secondary: bool) -> tuple[tuple[int, int], float]:
    if n >= 10**6:
        return ((1, 1) if secondary else (2, 3)), 15.0
    if n >= 10**5:
        return (3, 9), 6.0
    return (5, 60), 1.5


@dataclass
class Measured:
    reopened: dict[int, Reopen] = field(default_factory=dict)


def measure(built: Built, sizes: list[int], gc_off: bool, name: str, secondary: bool) -> Measured:
    """Times every size, keeping each one's last events and state."""
    out = Measured()
    for n in sizes:
        data = built.data if n == max(sizes) else prefix_file(built.data, n)
        rounds, budget = rounds_and_budget(n, secondary)
        progress(f"timing {name} {size_label(n)}")
        out.reopened[n] = reopen_rounds(data, rounds, budget, gc_off)
    return out


def fold_table(built: Built, measured: Measured, sizes: list[int], realistic: bool) -> float:
    """Prints one fold table; returns the schedule events/s at the largest size."""
    head = ["log", "sched ev"]
    if realistic:
        head += ["creates", "disp 1x", "disp every", "deletes", "other"]
    head += ["active", "(every)", "rounds", "fold ms", "min", "sched ev/s", "parse ms", "reopen ms"]
    head += ["reopen ev/s"]
    rows = [head]
    rate = 0.0
    for n in sizes:
        c, r = built.compositions[n], measured.reopened[n]
        row = [size_label(n), f"{c.schedule:,}"]
        if realistic:
            row += [f"{c.creates:,}", f"{c.one_shot_dispatches:,}", f"{c.every_dispatches:,}"]
            row += [f"{c.deletes:,}", f"{c.other:,}"]
        row += [f"{c.active:,}", f"{c.active_every:,}", str(len(r.fold.samples))]
        row += [ms(r.fold.median), ms(r.fold.min), per_s(c.schedule, r.fold.median)]
        row += [ms(r.parse.median), ms(r.total.median), per_s(c.schedule, r.total.median)]
        rows.append(row)
        rate = c.schedule / (r.fold.median / 1e9)
    table(rows)
    return rate


def report_fold(cfg: Config, real: tuple[Built, Measured], worst: tuple[Built, Measured]) -> None:
    print(
        "\n## 1. fold throughput: median (and min) over rounds; every round parses the session "
        "file\n   (parse_session_jsonl) and folds the parsed events; 'fold' is fold alone, "
        "'reopen' is parse + fold"
    )
    print("\n   realistic session (the figure the target is about)")
    rate = fold_table(*real, cfg.sizes, realistic=True)
    top = max(cfg.sizes)
    if top >= 10**6:
        judged = (
            f"{rate:,.0f}/s at {size_label(top)} -> {verdict(rate >= FOLD_TARGET_EVENTS_PER_S)}; "
            f"the layout's {FOLD_LAYOUT_TARGET_EVENTS_PER_S:,}/s -> "
            f"{verdict(rate >= FOLD_LAYOUT_TARGET_EVENTS_PER_S)}"
        )
    else:
        judged = f"not measured: largest log is {size_label(top)} (run without --quick)"
    print(
        "   (rates differ by size mostly with the mix: a fixed-rate dispatch is the costliest "
        "event to fold)\n"
        f"   target: fold >= {FOLD_TARGET_EVENTS_PER_S:,} schedule events/s at 10^6, "
        f"realistic mix: {judged}"
    )
    print("\n   second figure, worst case: every event a create, all still active")
    fold_table(*worst, cfg.sizes, realistic=False)


def ops_table(cfg: Config, measured: Measured, judge: bool) -> list[str]:
    """Times the ops on each size's state; prints the table, returns verdicts."""
    rng = random.Random(7)
    bases = [base_from(size_label(n), measured.reopened[n], rng) for n in cfg.op_sizes]
    per_base = [ops_for(base) for base in bases]
    ops = {name: [ops[name] for ops in per_base] for name in per_base[0]}
    stats = paired_rounds(ops, cfg.op_batch, cfg.op_rounds, cfg.gc_off)
    ref = bases[0]
    head = ["operation"] + [f"{b.label} ({b.active:,} active)" for b in bases]
    head += [f"{b.label}/{ref.label}" for b in bases[1:]]
    rows = [head]
    judged: list[str] = []
    for name, per_state in stats.items():
        row = [name] + [f"{st.median / 1e3:.2f} ({st.min / 1e3:.2f})" for st in per_state]
        base_stat = per_state[0]
        for b, st in zip(bases[1:], per_state[1:], strict=True):
            paired = statistics.median(
                x / y for x, y in zip(st.samples, base_stat.samples, strict=True)
            )
            ok = verdict(paired <= RATIO_TARGET)
            row.append(f"{paired:.2f}x ({st.min / base_stat.min:.2f}x){' ' + ok if judge else ''}")
            if name.startswith(("create", "delete")):
                judged.append(f"{name.split('+')[0]} {b.label} {paired:.2f}x {ok}")
        rows.append(row)
    table(rows)
    return judged


def report_ops(cfg: Config, real: Measured, worst: Measured) -> None:
    print(
        f"\n## 2. per-operation cost in us: median (min) over {cfg.op_rounds} rounds of "
        f"{cfg.op_batch} calls, every call from the\n   SAME state folded from a log prefix. "
        "Ratio: median over rounds of the per-round ratio (the states of\n   one op run back "
        "to back in each round); in brackets, the ratio of the minima"
    )
    progress("timing per-operation costs")
    print("\n   realistic session: the log grows, the active pool stays near 1,000")
    judged = ops_table(cfg, real, judge=True)
    print(
        f"   target: create+evolve and delete+evolve at 10^5 within {RATIO_TARGET}x of 10^3 "
        f"(the design asks the same at 10^6):\n   " + "; ".join(judged)
    )
    print("\n   for information, all-creates states: the active pool grows with the log")
    ops_table(cfg, worst, judge=False)


def progress(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def parse_args(argv: Sequence[str] | None) -> Config:
    parser = argparse.ArgumentParser(description="tickler core benchmarks")
    parser.add_argument("--quick", action="store_true", help="logs up to 10^5, fewer rounds")
    parser.add_argument(
        "--gc", action="store_true", help="leave the garbage collector on while timing"
    )
    args = parser.parse_args(argv)
    if args.quick:
        return Config([10**3, 10**4, 10**5], [10**3, 10**5], 25, 60, not args.gc)
    return Config([10**3, 10**4, 10**5, 10**6], [10**3, 10**5, 10**6], 25, 150, not args.gc)


def main(argv: Sequence[str] | None = None) -> None:
    cfg = parse_args(argv)
    began = time.perf_counter()
    print(
        f"tickler core bench: Python {platform.python_version()} "
        f"({platform.python_implementation()}) on {platform.machine()}; gc "
        f"{'disabled' if cfg.gc_off else 'enabled'} while timing; times from perf_counter_ns"
    )
    progress(f"generating and checking the {size_label(max(cfg.sizes))}-event logs")
    # Nothing is timed until both workers are done.
    with ProcessPoolExecutor(max_workers=2) as pool:
        real_future: Future[Built] = pool.submit(build, "realistic", cfg.sizes)
        worst_future: Future[Built] = pool.submit(build, "all-creates", cfg.sizes)
        real, worst = real_future.result(), worst_future.result()
    print(
        f"realistic {size_label(max(cfg.sizes))}-event session generated by driving "
        f"handle/decide/evolve in {real.generate_s:.1f}s, parsed and checked (check_log, "
        f"every size) in {real.check_s:.1f}s;\nall-creates log generated in "
        f"{worst.generate_s:.1f}s, checked in {worst.check_s:.1f}s"
    )
    real_measured = measure(real, cfg.sizes, cfg.gc_off, "realistic", secondary=False)
    worst_measured = measure(worst, cfg.sizes, cfg.gc_off, "all-creates", secondary=True)
    report_fold(cfg, (real, real_measured), (worst, worst_measured))
    report_ops(cfg, real_measured, worst_measured)
    print(f"\ntotal wall time {time.perf_counter() - began:.0f}s")


if __name__ == "__main__":
    main()
