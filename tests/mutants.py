"""Rule mutants: each must make the core suite fail.

``python tests/mutants.py`` (``make mutants``) changes one rule at a time in
``core/`` - a bound, a comparison, a loop - runs the core suite
(``tests/unit`` and ``tests/property``, stopping at the first failure) and
reports each mutant killed or SURVIVED; the exit status is 1 when one
survived. The files are restored after each run, and on any exit.

A survivor is a rule no test holds: add the test, or the rule is written
twice somewhere (a copy whose change a second copy hides).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The core suite takes about a minute; ten times that is a hang.
SUITE_TIMEOUT_S = 600


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str
    old: str
    new: str


MUTANTS = (
    # the three changes that once survived (issue: one rulebook)
    Mutant("the every floor lowered", "core/_rules.py",
           "if value < MIN_EVERY_INTERVAL_SECONDS:", "if value < 60:"),
    Mutant("a zero delay accepted", "core/_rules.py",
           "0 < value <= MAX_SAFE_INTEGER", "0 <= value <= MAX_SAFE_INTEGER"),
    Mutant("seen ids: a loop made an if (fold)", "core/_seen.py",
           "        while self.next_id in self.others:", "        if self.next_id in self.others:"),
    Mutant("seen ids: a loop made an if (evolve)", "core/_seen.py",
           "        while (following := f\"{PREFIX}{contiguous + 1}\") in others:",
           "        if (following := f\"{PREFIX}{contiguous + 1}\") in others:"),
    # more of the same kind
    Mutant("the largest delay off by one", "core/_rules.py",
           "0 < value <= MAX_SAFE_INTEGER", "0 < value < MAX_SAFE_INTEGER"),
    Mutant("every's milliseconds bound", "core/_rules.py",
           "value > MAX_EVERY_SECONDS", "value >= MAX_EVERY_SECONDS"),
    Mutant("an empty text accepted", "core/_rules.py",
           'type(value) is str and value != "" and', "type(value) is str and"),
    Mutant("a padded text accepted", "core/_rules.py",
           "value.strip(ES_WHITESPACE) == value", "value.strip() == value or True"),
    Mutant("a dispatch at its target refused", "core/_rules.py",
           "if accepted_ms < target:\n        return Breach.DISPATCH_PRECEDES\n    occurrence",
           "if accepted_ms <= target:\n        return Breach.DISPATCH_PRECEDES\n    occurrence"),
    Mutant("the series ends one ms early", "core/_rules.py",
           "following if following <= MAX_INSTANT_MS", "following if following < MAX_INSTANT_MS"),
    Mutant("a target equal to now accepted", "core/_rules.py",
           "    if target <= now:\n        return Breach.NOT_FUTURE",
           "    if target < now:\n        return Breach.NOT_FUTURE"),
    Mutant("due one ms late", "core/_rules.py",
           "    return target <= now", "    return target < now"),
    Mutant("the range's end excluded", "core/_rules.py",
           "if not MIN_INSTANT_MS <= target <= MAX_INSTANT_MS:",
           "if not MIN_INSTANT_MS <= target < MAX_INSTANT_MS:"),
    Mutant("the dispatch forms swapped", "core/_rules.py",
           "return Breach.ONE_SHOT_ACCEPTED_AT if has_accepted_at else None",
           "return None"),
    Mutant("a reused id accepted", "core/_rules.py",
           "return Breach.ID_REUSED if schedule_id in seen else None", "return None"),
    Mutant("the replay skips the reuse rule", "core/_state.py",
           "reused = reuse_breach(book.seen_ids, record.id)", "reused = None"),
    Mutant("allocation from |seen|", "core/_rules.py",
           "    n = count + 1", "    n = count + 2"),
    Mutant("the selector count", "core/_commands.py",
           "len(present) != 1", "len(present) > 1"),
    Mutant("a fixed-rate batch misses its last record", "core/_decide.py",
           "(now, _AFTER_EVERY_ORDER, \"\")", "(now, 0, \"\")"),
    Mutant("latest-only catch-up off by one interval", "core/_rules.py",
           "occurrence = target + (accepted_ms - target) // interval_ms * interval_ms",
           "occurrence = target + ((accepted_ms - target) // interval_ms - 1) * interval_ms"),
    # calendar reminders, updates and request ids (issue 17)
    Mutant("a calendar record off its rule accepted", "core/_rules.py",
           "if catch_up(rule, target, target) is None:", "if False:"),
    Mutant("a calendar dispatch without acceptedAt accepted", "core/_rules.py",
           "return None if has_accepted_at else Breach.CALENDAR_NO_ACCEPTED_AT", "return None"),
    Mutant("a calendar dispatch before its target accepted", "core/_rules.py",
           "    if accepted_ms < target:\n        return Breach.DISPATCH_PRECEDES\n    step",
           "    if accepted_ms < target - 1:\n        return Breach.DISPATCH_PRECEDES\n    step"),
    Mutant("a logged calendar zone not canonical accepted", "core/_rules.py",
           "isinstance(rule, CalendarRule) and rule.time_zone == time_zone",
           "isinstance(rule, CalendarRule)"),
    Mutant("a snoozed series dispatched before its target accepted", "core/_rules.py",
           "    if accepted_ms < target:\n        return Breach.DISPATCH_PRECEDES\n"
           "    if accepted_ms < continuation:",
           "    if accepted_ms < target - 1:\n        return Breach.DISPATCH_PRECEDES\n"
           "    if accepted_ms < continuation:"),
    Mutant("a paused reminder dispatched", "core/_state.py",
           "raise _broken(Breach.DISPATCH_PAUSED, schedule_id)", "pass"),
    Mutant("a snooze re-anchors the series at its snoozed time", "core/_rules.py",
           "following = max(before, _point_after(record, rule, phase, moved))",
           "following = _point_after(record, rule, phase, moved)"),
    Mutant("a snoozed fixed-rate series: the snoozed one not counted as skipped", "core/_rules.py",
           "return CatchUp(step_[0], skipped + 1, step_[1])",
           "return CatchUp(step_[0], skipped, step_[1])"),
    Mutant("a snoozed calendar series: the snoozed one not counted as skipped", "core/_rules.py",
           "return step._replace(skipped=step.skipped + 1)  # the snoozed target too",
           "return step"),
    Mutant("a snoozed series dispatched as if not snoozed (replay)", "core/_state.py",
           "        book.lattices.get(schedule_id),\n", "        None,\n"),
    Mutant("a snoozed series delivered as if not snoozed (decide)", "core/_decide.py",
           "record, active.target, state.lattice(schedule_id), state.end(schedule_id), now",
           "record, active.target, None, state.end(schedule_id), now"),
    # rescheduling in place and series that end
    Mutant("a rescheduled record of another id accepted", "core/_rules.py",
           "return target if record.id == schedule_id else Breach.RESCHEDULE_ID",
           "return target"),
    Mutant("a count's last occurrence delivered twice", "core/_rules.py",
           "if remaining is not None and step.skipped + 1 >= remaining:",
           "if remaining is not None and step.skipped + 1 > remaining:"),
    Mutant("an occurrence at until dropped", "core/_rules.py",
           "if following is not None and until is not None and following > until:",
           "if following is not None and until is not None and following >= until:"),
    Mutant("an until at the first occurrence refused", "core/_rules.py",
           "return Breach.UNTIL_BEFORE if until is not None and until < target else None",
           "return Breach.UNTIL_BEFORE if until is not None and until <= target else None"),
    Mutant("the replay dispatches a series as if it did not end", "core/_state.py",
           "        book.ends.get(schedule_id),\n", "        None,\n"),
    Mutant("a resumed snoozed series replays its snoozed target", "core/_rules.py",
           "return continuation if continuation <= MAX_INSTANT_MS else target", "return target"),
    Mutant("paused taken for its truth", "core/_rules.py",
           "return paused if type(paused) is bool else Breach.PAUSED_NOT_BOOLEAN",
           "return bool(paused)"),
    Mutant("a snooze of zero accepted", "core/_rules.py",
           "not 1 <= value <= MAX_SAFE_INTEGER", "not 0 <= value <= MAX_SAFE_INTEGER"),
    Mutant("a reused request id accepted", "core/_rules.py",
           "return Breach.REQUEST_REUSED if request_id in seen else None", "return None"),
    Mutant("the longest request id refused", "core/_rules.py",
           "len(request_id) > MAX_REQUEST_ID_LENGTH", "len(request_id) >= MAX_REQUEST_ID_LENGTH"),
    Mutant("a request id retried with other arguments answered", "core/_decide.py",
           "if earlier.args_digest != digest:", "if False:"),
)  # fmt: skip


def misplaced(mutants: tuple[Mutant, ...] = MUTANTS) -> list[str]:
    """The mutants whose text to change is not in their file exactly once
    (a file moved or a rule rewritten): one line each, empty when all apply."""
    found = []
    for mutant in mutants:
        path = ROOT / mutant.path
        count = path.read_text(encoding="utf-8").count(mutant.old) if path.is_file() else 0
        if count != 1:
            found.append(f"{mutant.name}: the text to change is {count} times in {mutant.path}")
    return found


def run(mutant: Mutant, python: str) -> bool:
    """True when the suite fails with the mutant in place (killed)."""
    path = ROOT / mutant.path
    original = path.read_text(encoding="utf-8")
    if original.count(mutant.old) != 1:
        raise SystemExit(f"{mutant.name}: the text to change is not in {mutant.path} once")
    try:
        path.write_text(original.replace(mutant.old, mutant.new), encoding="utf-8")
        result = subprocess.run(
            [python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
             "tests/unit", "tests/property"],
            cwd=ROOT,
            capture_output=True,
            check=False,
            env={**os.environ, "TICKLER_HYPOTHESIS_PROFILE": "ci"},
            timeout=SUITE_TIMEOUT_S,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        # The suite did not pass; but a test that loops on a bug should
        # fail instead: said, so it is found and bounded.
        print(f"         {mutant.name}: the suite hung (a test loops without bound)", flush=True)
        return True
    finally:
        path.write_text(original, encoding="utf-8")
    return result.returncode != 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the mutants whose name contains this text")
    parser.add_argument(
        "--check",
        action="store_true",
        help="only check that each mutant's text is in its file once (no suite run)",
    )
    args = parser.parse_args()
    if args.check:
        found = misplaced()
        print("\n".join(found) or f"all {len(MUTANTS)} mutants apply to their files")
        return 1 if found else 0
    # A SIGTERM ends the run through SystemExit, so the mutated file is put
    # back by run()'s finally (without this, kill left the mutant in core/).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    survivors = 0
    for mutant in MUTANTS:
        if args.only and args.only not in mutant.name:
            continue
        killed = run(mutant, sys.executable)
        survivors += not killed
        print(f"{'killed  ' if killed else 'SURVIVED'} {mutant.name} ({mutant.path})", flush=True)
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
