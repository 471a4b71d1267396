"""Rule mutants: each must make the core suite fail.

``python tests/mutants.py`` (``make mutants``) changes one rule at a time in
``core/`` - a bound, a comparison, a loop - runs the core suite
(``tests/unit`` and ``tests/property``, stopping at the first failure) and
reports each mutant killed or SURVIVED; the exit status is 1 when one
survived. The files are restored after each run, and on any exit.

A survivor is a rule no test holds: add the test, or the rule is written
twice somewhere (a copy whose change a second copy hides).

``python tests/mutants.py --generic --seed N --sample K`` does the same with
K generic mutants drawn (seeded, so a run is repeated exactly) from every
candidate in ``core/**/*.py``: a comparison flipped or moved by one
(``<``/``<=``, ``>``/``>=``, ``==``/``!=``), a condition negated, ``and``
and ``or`` swapped, an integer constant changed by one, ``+`` and ``-``
swapped. Docstrings, ``__all__``, annotations, ``if TYPE_CHECKING`` blocks,
asserts and decorators are left alone. ``--list`` prints the candidates'
count; the report ends with the kill rate. A survivor listed in
``EQUIVALENT`` (a change no behaviour can show, argued there) is reported
as equivalent and left out of the rate.
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import re
import signal
import subprocess
import sys
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

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
           "if accepted_ms < target:\n        return Breach.DISPATCH_PRECEDES\n    skipped",
           "if accepted_ms <= target:\n        return Breach.DISPATCH_PRECEDES\n    skipped"),
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
           "skipped = (accepted_ms - target) // interval\n",
           "skipped = (accepted_ms - target) // interval - 1\n"),
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
           "return step_._replace(skipped=step_.skipped + 1)",
           "return step_"),
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
    # zone footers: generic mutants that once survived (issue 27)
    Mutant("a footer's Jn day read as the zero-based n", "core/timing/_offsets.py",
           'if self.kind == "J":', 'if self.kind != "J":'),
    Mutant("a footer's change at 1 January listed in the year before too",
           "core/timing/_offsets.py",
           "if first <= s * 1000 < after_last)", "if first <= s * 1000 <= after_last)"),
    # generic survivors of the seed-1 sample
    Mutant("a version-2 create says it is version 1", "core/_model.py",
           "    count: int | None = None\n\n    @property\n    def version(self) -> Literal[2]:\n"
           "        return 2",
           "    count: int | None = None\n\n    @property\n    def version(self) -> Literal[2]:\n"
           "        return 1"),
    Mutant("the end-of-series mark taken for the range's last instant", "core/_rules.py",
           "END_OF_SERIES: Final = MAX_INSTANT_MS + 1", "END_OF_SERIES: Final = MAX_INSTANT_MS"),
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
    failed = run_suite_with(path, original.replace(mutant.old, mutant.new), python)
    if failed is None:
        # The suite did not pass; but a test that loops on a bug should
        # fail instead: said, so it is found and bounded.
        print(f"         {mutant.name}: the suite hung (a test loops without bound)", flush=True)
        return True
    return failed


def run_suite_with(path: Path, mutated: str, python: str) -> bool | None:
    """True when the core suite fails with ``path`` holding ``mutated``,
    None when it runs out of time; the file is put back whatever happens."""
    original = path.read_text(encoding="utf-8")
    try:
        path.write_text(mutated, encoding="utf-8")
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
        return None
    finally:
        path.write_text(original, encoding="utf-8")
    return result.returncode != 0


# Generic mutants: drawn from every candidate in core/**/*.py.

CORE_GLOB = "core/**/*.py"
_FLIPS: dict[type[ast.AST], tuple[str, str]] = {
    ast.Lt: ("<", "<="),
    ast.LtE: ("<=", "<"),
    ast.Gt: (">", ">="),
    ast.GtE: (">=", ">"),
    ast.Eq: ("==", "!="),
    ast.NotEq: ("!=", "=="),
}
_SWAPS: dict[type[ast.AST], tuple[str, str]] = {
    ast.And: ("and", "or"),
    ast.Or: ("or", "and"),
    ast.Add: ("+", "-"),
    ast.Sub: ("-", "+"),
}
# An operator between two operands: past parentheses and comments (a comment
# is matched, so an operator inside one is never taken).
_OPERATOR = re.compile(rb"#[^\n]*|(<=|>=|==|!=|<|>|\+|-|\band\b|\bor\b)")

# Generic survivors that no test can kill: the change cannot alter behaviour.
# Keyed by ``path:line:column change`` as the report prints it; each with its
# argument. (Line numbers move with the code: a stale key is just not used.)
EQUIVALENT: dict[str, str] = {
    # parse_local_at samples the zone's offsets 2 days either side of the
    # wall time. An offset that first holds at the +2 days sample (a change
    # exactly there) never makes a valid instant: that would need the
    # instant wall - offset at or after wall + 2 days, an offset of -2 days
    # or less, and no offset is a day. One ms earlier the sample reads the
    # offset before that change, which held at wall + 1 day already (no
    # zone changes twice within two days: test_zone_offsets keeps that).
    "core/timing/_at.py:39:71 `172_800_000` -> `172799999`": (
        "the +2 days sample one ms earlier finds no other offset that can answer"
    ),
    # The count's last _EDGE_MS re-judge each change's correction bounded by
    # ``until``; a change more than 2 days before ``until`` moves no minute
    # past it (no change exceeds a day), so its bounded correction is its
    # whole one: a wider edge re-judges more changes to the same value.
    "core/timing/_calendar.py:56:19 `2` -> `3`": (
        "a wider edge re-judges changes whose bounded correction equals the whole one"
    ),
}


@dataclass(frozen=True)
class Candidate:
    """One generic mutant: the UTF-8 bytes ``start:end`` of ``path``'s
    source, which read ``old``, become ``new``."""

    path: str
    line: int
    column: int
    start: int
    end: int
    old: str
    new: str

    @property
    def key(self) -> str:
        """``path:line:column `old` -> `new``` (whitespace collapsed), as
        reported; the column (from 1) tells two operators on a line apart."""
        old, new = " ".join(self.old.split()), " ".join(self.new.split())
        return f"{self.path}:{self.line}:{self.column} `{old}` -> `{new}`"


def _is_type_checking(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _is_all(node: ast.AST) -> bool:
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign | ast.AugAssign):
        targets = [node.target]
    return any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets)


def _left_alone(node: ast.AST) -> bool:
    """Statements no generic mutant touches: string statements (docstrings),
    ``__all__``, ``if TYPE_CHECKING`` blocks and asserts (a check of the
    code's own invariant, not a rule: weakened, it still never fails)."""
    is_text = (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )
    return is_text or isinstance(node, ast.Assert) or _is_all(node) or _is_type_checking(node)


# Fields no generic mutant touches: annotations, and decorators (wiring such
# as a cache's size, not a rule).
_SKIPPED_FIELDS: Final = frozenset({"annotation", "returns", "decorator_list"})


def mutable_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``tree`` a generic mutant may change."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for field, value in ast.iter_fields(node):
            if field in _SKIPPED_FIELDS:
                continue
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST) and not _left_alone(child):
                    stack.append(child)


class _Source:
    """A module's text as UTF-8 bytes, addressed as ``ast`` positions are."""

    def __init__(self, text: str) -> None:
        self.data = text.encode("utf-8")
        self.line_starts = [0]
        for line in self.data.splitlines(keepends=True):
            self.line_starts.append(self.line_starts[-1] + len(line))

    def start(self, node: ast.expr) -> int:
        return self.line_starts[node.lineno - 1] + node.col_offset

    def end(self, node: ast.expr) -> int:
        assert node.end_lineno is not None
        assert node.end_col_offset is not None
        return self.line_starts[node.end_lineno - 1] + node.end_col_offset

    def text(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8")

    def line(self, offset: int) -> int:
        return bisect_right(self.line_starts, offset)

    def column(self, offset: int) -> int:
        """The column (in characters, from 1) of a byte offset."""
        line_start = self.line_starts[self.line(offset) - 1]
        return len(self.data[line_start:offset].decode("utf-8")) + 1

    def operator(self, left: ast.expr, right: ast.expr, old: str) -> tuple[int, int] | None:
        """Where ``old`` stands between two operands, if it is the operator there."""
        low, high = self.end(left), self.start(right)
        for match in _OPERATOR.finditer(self.data, low, high):
            if match.group(1) is not None:
                found = match.group(1).decode("ascii")
                return (match.start(1), match.end(1)) if found == old else None
        return None


def _operators(source: _Source, node: ast.AST) -> Iterator[tuple[int, int, str]]:
    """A comparison flipped or moved by one, ``and``/``or`` or ``+``/``-`` swapped."""
    pairs: list[tuple[ast.expr, ast.expr, type[ast.AST]]] = []
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        pairs = [(operands[i], operands[i + 1], type(op)) for i, op in enumerate(node.ops)]
    elif isinstance(node, ast.BoolOp):
        pairs = [(a, b, type(node.op)) for a, b in zip(node.values, node.values[1:], strict=False)]
    elif isinstance(node, ast.BinOp) and _arithmetic(node.left, node.right):
        pairs = [(node.left, node.right, type(node.op))]
    elif isinstance(node, ast.AugAssign) and _arithmetic(node.target, node.value):
        pairs = [(node.target, node.value, type(node.op))]
    for left, right, op in pairs:
        change = _FLIPS.get(op) or _SWAPS.get(op)
        span = None if change is None else source.operator(left, right, change[0])
        if change is not None and span is not None:
            yield (*span, change[1])


def _arithmetic(*operands: ast.expr) -> bool:
    """No operand is a text or a sequence (joined, a minus is a TypeError)."""
    return not any(
        isinstance(side, ast.JoinedStr | ast.Tuple | ast.List)
        or (isinstance(side, ast.Constant) and isinstance(side.value, str | bytes))
        for side in operands
    )


def _constants(source: _Source, node: ast.AST) -> Iterator[tuple[int, int, str]]:
    """An integer constant changed by one, up and down."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        start, end = source.start(node), source.end(node)
        try:
            read = ast.literal_eval(source.text(start, end))
        except (SyntaxError, ValueError):
            return
        if read == node.value:
            yield start, end, str(node.value + 1)
            yield start, end, str(node.value - 1)


def _negations(source: _Source, node: ast.AST) -> Iterator[tuple[int, int, str]]:
    """A condition negated (a ``not`` dropped)."""
    tests: list[ast.expr] = []
    if isinstance(node, ast.If | ast.While | ast.IfExp):
        tests = [node.test]
    elif isinstance(node, ast.comprehension):
        tests = list(node.ifs)
    elif isinstance(node, ast.match_case) and node.guard is not None:
        tests = [node.guard]
    for test in tests:
        start, end = source.start(test), source.end(test)
        try:
            read = ast.parse(source.text(start, end).strip(), mode="eval").body
        except SyntaxError:
            continue
        if ast.dump(read) != ast.dump(test):
            continue  # the position does not hold the condition: left alone
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            yield start, end, source.text(source.start(test.operand), source.end(test.operand))
        else:
            yield start, end, f"not ({source.text(start, end)})"


def candidates_in(path: str, text: str) -> list[Candidate]:
    """Every generic mutant of one module (``path`` as reported), in source order."""
    source = _Source(text)
    found = {
        Candidate(
            path, source.line(start), source.column(start), start, end, source.text(start, end), new
        )
        for node in mutable_nodes(ast.parse(text))
        for kind in (_operators, _constants, _negations)
        for start, end, new in kind(source, node)
    }
    return sorted(found, key=lambda c: (c.start, c.end, c.new))


def apply(text: str, candidate: Candidate) -> str:
    """``text`` with the candidate's change made; the result parses."""
    data = text.encode("utf-8")
    if data[candidate.start : candidate.end].decode("utf-8") != candidate.old:
        raise ValueError(f"{candidate.key}: the source does not read {candidate.old!r} there")
    mutated = (
        data[: candidate.start] + candidate.new.encode("utf-8") + data[candidate.end :]
    ).decode("utf-8")
    ast.parse(mutated)
    return mutated


def core_candidates(root: Path = ROOT) -> list[Candidate]:
    """Every generic mutant of the core, files in name order."""
    found: list[Candidate] = []
    for file in sorted(root.glob(CORE_GLOB)):
        text = file.read_text(encoding="utf-8")
        found += candidates_in(file.relative_to(root).as_posix(), text)
    return found


def draw(candidates: list[Candidate], seed: int, sample: int) -> list[Candidate]:
    """``sample`` of the candidates, the same for the same seed (in source order)."""
    drawn = random.Random(seed).sample(candidates, min(sample, len(candidates)))
    return sorted(drawn, key=lambda c: (c.path, c.start, c.new))


def run_generic(args: argparse.Namespace) -> int:
    candidates = core_candidates()
    files = len({c.path for c in candidates})
    drawn = draw(candidates, args.seed, args.sample)
    if args.only:
        drawn = [c for c in drawn if args.only in c.key]
    if args.list:
        for candidate in drawn:
            print(candidate.key)
        print(f"{len(candidates)} generic candidates in {files} files of {CORE_GLOB}")
        return 0
    print(f"{len(drawn)} of {len(candidates)} generic candidates, seed {args.seed}", flush=True)
    killed = survived = equivalent = timed_out = 0
    for candidate in drawn:
        path = ROOT / candidate.path
        mutated = apply(path.read_text(encoding="utf-8"), candidate)
        failed = run_suite_with(path, mutated, sys.executable)
        if failed is None:
            # A loop the mutant made endless, or a machine too busy to run
            # the suite in time: not told apart, so not counted either way.
            timed_out += 1
            print(f"timeout    {candidate.key}", flush=True)
        elif failed:
            killed += 1
            print(f"killed     {candidate.key}", flush=True)
        elif candidate.key in EQUIVALENT:
            equivalent += 1
            print(f"equivalent {candidate.key}: {EQUIVALENT[candidate.key]}", flush=True)
        else:
            survived += 1
            print(f"SURVIVED   {candidate.key}", flush=True)
    judged = killed + survived
    rate = f"{100 * killed / judged:.1f}%" if judged else "n/a"
    print(
        f"kill rate {rate}: {killed} killed, {survived} survived, {equivalent} equivalent,"
        f" {timed_out} out of time ({SUITE_TIMEOUT_S} s, not counted)"
    )
    return 1 if survived or timed_out else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the mutants whose name (or key) contains this text")
    parser.add_argument("--generic", action="store_true", help="generic mutants drawn from core/")
    parser.add_argument("--seed", type=int, default=0, help="the draw's seed (generic)")
    parser.add_argument("--sample", type=int, default=20, help="how many to draw (generic)")
    parser.add_argument("--list", action="store_true", help="print the draw and the count only")
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
    if args.generic or args.list:
        return run_generic(args)
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
