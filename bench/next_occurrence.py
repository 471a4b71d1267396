"""Calendar benchmark: the next occurrence per wake, against croniter and APScheduler 3.

Run ``python -m bench.next_occurrence`` from the repository root (``make
bench-calendar``, about a minute) or ``python -m bench.next_occurrence --quick``; as
a module, so that this file does not shadow the standard ``calendar``.

For each cron rule in each zone, the same wake instants (seeded, spread over
2026-2036) go to three engines; each computes the first occurrence strictly
after each wake, with its rule parsed once beforehand (as a stored reminder
is):

* tickler: ``next_occurrence(rule, after_ms)``;
* croniter 7: ``set_current(aware datetime)`` then ``get_next(float)``;
* APScheduler 3: ``CronTrigger.get_next_fire_time(None, aware datetime)``.

The figure is the median over rounds of the time per call (engines take
turns within each round) and the peer's time over tickler's. "agree" is the
share of wakes where a peer's answer is tickler's: they differ by design
near DST changes (croniter fires a daily rule twice on a fall-back day, and
its own reading of a skipped hour), so a rule in the changing hour agrees
less. Then catch-up: tickler's ``catch_up`` (one delivery, the number
skipped counted in closed form) over a day, ten years and a thousand years,
beside croniter iterating over the missed occurrences of the shorter spans.

Only ratios measured in the same run mean much: the machine is shared.
"""

from __future__ import annotations

import argparse
import gc
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Final

from apscheduler.triggers.cron import CronTrigger  # type: ignore[import-untyped]
from croniter import croniter  # type: ignore[import-untyped]

from tickler.core.timing._calendar import CalendarRule, catch_up, next_occurrence, parse_calendar
from tickler.core.timing._zones import resolve_zone

RULES: Final = (
    ("0 9 * * mon-fri", "weekday mornings"),
    ("*/15 * * * *", "every 15 minutes"),
    ("30 2 * * *", "daily, in the DST hour"),
    ("5 4 * * sun", "weekly"),
    ("0 0 1 * *", "monthly"),
    ("0 12 29 2 *", "29 February"),
    ("0 9 L * *", "last day of the month"),
    ("0 9 * * 1#1", "first Monday of the month"),
)
# APScheduler 3's from_crontab reads neither L nor #: the same rules in its own syntax.
APSCHEDULER_FIELDS: Final = {
    "0 9 L * *": {"minute": "0", "hour": "9", "day": "last"},
    "0 9 * * 1#1": {"minute": "0", "hour": "9", "day": "1st mon"},
}
ZONES: Final = ("UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe")
EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
FIRST_WAKE: Final = datetime(2026, 1, 1, tzinfo=UTC)
WAKE_SPAN_MS: Final = 10 * 365 * 86_400_000


@dataclass(frozen=True)
class Config:
    wakes: int
    rounds: int


@dataclass
class Row:
    rule: str
    zone: str
    tickler_us: float
    croniter_us: float
    apscheduler_us: float
    croniter_agree: float
    apscheduler_agree: float


def ms_of(moment: datetime) -> int:
    return (moment - EPOCH) // timedelta(milliseconds=1)


def calendar_rule(cron: str, zone: str) -> CalendarRule:
    rule = parse_calendar({"cron": cron, "time_zone": zone})
    assert isinstance(rule, CalendarRule), rule
    return rule


def engines(
    cron: str, zone_name: str
) -> dict[str, Callable[[list[int], list[datetime]], list[int | None]]]:
    rule = calendar_rule(cron, zone_name)
    zone = resolve_zone(zone_name)
    assert zone is not None
    iterator = croniter(cron, FIRST_WAKE.astimezone(zone))
    if cron in APSCHEDULER_FIELDS:
        trigger = CronTrigger(**APSCHEDULER_FIELDS[cron], timezone=zone)
    else:
        trigger = CronTrigger.from_crontab(cron, timezone=zone)

    def tickler(wakes_ms: list[int], _: list[datetime]) -> list[int | None]:
        return [next_occurrence(rule, wake) for wake in wakes_ms]

    def croniter_next(_: list[int], wakes: list[datetime]) -> list[int | None]:
        out: list[int | None] = []
        for wake in wakes:
            iterator.set_current(wake, force=True)
            out.append(round(iterator.get_next(float) * 1000))
        return out

    def apscheduler_next(_: list[int], wakes: list[datetime]) -> list[int | None]:
        out: list[int | None] = []
        for wake in wakes:
            fire = trigger.get_next_fire_time(None, wake)
            # Its next fire time may equal the wake; tickler's is strictly after.
            if fire == wake:
                fire = trigger.get_next_fire_time(None, wake + timedelta(microseconds=1))
            out.append(None if fire is None else ms_of(fire))
        return out

    return {"tickler": tickler, "croniter": croniter_next, "apscheduler": apscheduler_next}


def measure(cron: str, zone_name: str, cfg: Config, rng: random.Random) -> Row:
    zone = resolve_zone(zone_name)
    assert zone is not None
    first = ms_of(FIRST_WAKE)
    # Whole seconds: croniter and APScheduler read wakes to the second.
    wakes_ms = [first + rng.randrange(WAKE_SPAN_MS) // 1000 * 1000 for _ in range(cfg.wakes)]
    wakes = [(EPOCH + timedelta(milliseconds=w)).astimezone(zone) for w in wakes_ms]
    runners = engines(cron, zone_name)
    answers = {name: run(wakes_ms, wakes) for name, run in runners.items()}  # warm-up
    times: dict[str, list[float]] = {name: [] for name in runners}
    order = list(runners)
    for round_index in range(cfg.rounds):
        for name in order[round_index % 3 :] + order[: round_index % 3]:
            gc.collect()
            gc.disable()
            began = time.perf_counter_ns()
            runners[name](wakes_ms, wakes)
            elapsed = time.perf_counter_ns() - began
            gc.enable()
            times[name].append(elapsed / cfg.wakes / 1000)
    mine = answers["tickler"]

    def agree(name: str) -> float:
        return sum(a == b for a, b in zip(answers[name], mine, strict=True)) / len(mine)

    return Row(
        cron,
        zone_name,
        statistics.median(times["tickler"]),
        statistics.median(times["croniter"]),
        statistics.median(times["apscheduler"]),
        agree("croniter"),
        agree("apscheduler"),
    )


def report_next(rows: list[Row]) -> None:
    print(
        "\n## next occurrence per wake: median us per call over rounds; "
        "x = the peer's time / tickler's (higher: tickler faster)"
    )
    head = ("rule", "zone", "tickler", "croniter", "x", "agree", "APScheduler", "x", "agree")
    print(
        f"  {head[0]:<16}{head[1]:<21}{head[2]:>9}{head[3]:>10}{head[4]:>7}{head[5]:>7}"
        f"{head[6]:>13}{head[7]:>7}{head[8]:>7}"
    )
    for row in rows:
        print(
            f"  {row.rule:<16}{row.zone:<21}{row.tickler_us:>9.1f}{row.croniter_us:>10.1f}"
            f"{row.croniter_us / row.tickler_us:>7.1f}{row.croniter_agree:>7.0%}"
            f"{row.apscheduler_us:>13.1f}{row.apscheduler_us / row.tickler_us:>7.1f}"
            f"{row.apscheduler_agree:>7.0%}"
        )
    for peer, attr in (("croniter", "croniter_us"), ("APScheduler 3", "apscheduler_us")):
        ratios = [getattr(r, attr) / r.tickler_us for r in rows]
        print(
            f"  {peer}: geometric mean of the ratios {statistics.geometric_mean(ratios):.1f}x "
            f"(min {min(ratios):.1f}x, max {max(ratios):.1f}x) over {len(rows)} rule/zone pairs"
        )


def time_call(call: Callable[[], object], repeat: int) -> float:
    """Median seconds of one call."""
    samples = []
    for _ in range(repeat):
        began = time.perf_counter()
        call()
        samples.append(time.perf_counter() - began)
    return statistics.median(samples)


def croniter_missed(cron: str, target: datetime, now: datetime) -> int:
    """What a scheduler without closed-form counting does: step through the
    missed occurrences."""
    iterator = croniter(cron, target - timedelta(seconds=1))
    count = 0
    while iterator.get_next(datetime) <= now:
        count += 1
    return count


def report_catch_up(quick: bool) -> None:
    print(
        "\n## catch-up at one wake after a long outage: tickler's catch_up (latest "
        "occurrence, skipped count, next) vs croniter iterating the missed occurrences"
    )
    zone = resolve_zone("Europe/Berlin")
    assert zone is not None
    spans = (("1 day", 1), ("10 years", 3652), ("1,000 years", 365_242))
    for cron in ("*/15 * * * *", "0 9 * * mon-fri"):
        rule = calendar_rule(cron, "Europe/Berlin")
        target = datetime(2026, 3, 2, 8, tzinfo=UTC)
        first = next_occurrence(rule, ms_of(target) - 1)
        assert first is not None
        target = EPOCH + timedelta(milliseconds=first)
        for label, days in spans:
            now = target + timedelta(days=days, minutes=7)
            result = catch_up(rule, ms_of(target), ms_of(now))
            assert result is not None
            mine = time_call(partial(catch_up, rule, ms_of(target), ms_of(now)), 7)
            line = (
                f"  {cron:<16}{label:<12} tickler {mine * 1e6:>9.0f} us "
                f"({result.skipped:,} skipped)"
            )
            iterations = (result.skipped + 1) if days <= 3652 else None
            if iterations is not None and (not quick or iterations < 50_000):
                local_target, local_now = target.astimezone(zone), now.astimezone(zone)
                peer = time_call(partial(croniter_missed, cron, local_target, local_now), 1)
                counted = croniter_missed(cron, local_target, local_now)
                line += f"; croniter {peer * 1e6:>12,.0f} us ({counted - 1:,} skipped), "
                line += f"{peer / mine:,.0f}x"
            else:
                line += "; croniter not run (it would step through every occurrence)"
            print(line)
    print("  (croniter's skipped count differs where it reads DST changes differently)")


def parse_args(argv: Sequence[str] | None) -> Config:
    parser = argparse.ArgumentParser(description="tickler calendar benchmark")
    parser.add_argument("--quick", action="store_true", help="fewer wakes and rounds")
    args = parser.parse_args(argv)
    return Config(300, 3) if args.quick else Config(1000, 7)


def main(argv: Sequence[str] | None = None) -> None:
    cfg = parse_args(argv)
    began = time.perf_counter()
    print(
        f"tickler calendar bench: Python {platform.python_version()} on {platform.machine()}; "
        f"{cfg.wakes} wakes per rule and zone, {cfg.rounds} rounds; gc disabled while timing"
    )
    rng = random.Random(20261207)
    rows = []
    for cron, _ in RULES:
        for zone in ZONES:
            print(f"[{time.strftime('%H:%M:%S')}] {cron} in {zone}", file=sys.stderr, flush=True)
            rows.append(measure(cron, zone, cfg, rng))
    report_next(rows)
    report_catch_up(quick=cfg.wakes < 1000)
    print(f"\ntotal wall time {time.perf_counter() - began:.0f}s")


if __name__ == "__main__":
    main()
