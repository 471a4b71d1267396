"""(a) The log and the live state never disagree.

A model calls the three tools with anything (valid and invalid arguments)
while a runtime delivers what is due, the clock only moving forward, by
seconds or by centuries. Every change is evolved into the live state one by
one and appended as a ``schedule/change`` event among unrelated events;
after every step, folding the log from scratch gives the live state, and
``check_log`` accepts the log.
"""

from __future__ import annotations

import json
import random
from typing import Final

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from returns.pipeline import is_successful

from tickler.core import (
    EMPTY_STATE,
    SCHEDULE_CHANGE,
    CreateChange,
    DeliverDue,
    Delivery,
    ScheduleChange,
    Wait,
    check_log,
    decide,
    encode_change,
    evolve,
    fold,
    fold_changes,
    handle,
)
from tickler.core.wire._jsnum import holds_lossy_number
from tickler.testing.strategies import (
    GARBAGE_SCHEDULE_CHANGES,
    INSTANTS,
    MAX_MS,
    MS_PER_DAY,
    MS_PER_YEAR,
    OTHER_EVENTS,
    REFERENCE_NOW,
    SCHEDULE_IDS,
    Book,
    EventLog,
    Json,
    Step,
    create_arguments,
    iso,
    json_values,
    padded_texts,
    texts,
    valid_create_arguments,
    valid_logs,
)

from .oracles import big_log, fewer_examples

CREATE: Final = "schedule_create"
LIST: Final = "schedule_list"
DELETE: Final = "schedule_delete"

# Forward clock steps: none, milliseconds, minutes, days, years, centuries.
CLOCK_STEPS: Final = st.one_of(
    st.integers(0, 1_000),
    st.integers(0, 15 * 60_000),
    st.integers(0, 40 * MS_PER_DAY),
    st.integers(0, 30 * MS_PER_YEAR),
    st.integers(0, 3_000 * MS_PER_YEAR),
)


class ToolSession(RuleBasedStateMachine):
    """One session: its event log, its live state, and a wall clock."""

    def __init__(self) -> None:
        super().__init__()
        self.log = EventLog()
        self.seed_length = 0
        self.state = EMPTY_STATE
        self.now = 0
        self.created: list[str] = []

    @initialize(
        now=INSTANTS.map(lambda t: min(t, MAX_MS - 1)),
        seed=st.lists(st.one_of(OTHER_EVENTS, GARBAGE_SCHEDULE_CHANGES), max_size=3),
    )
    def start(self, now: int, seed: list[tuple[str, bytes]]) -> None:
        """A session, possibly forked: the inherited prefix is never read."""
        self.now = now
        for type_, data in seed:
            self.log.append(type_, data, now)
        self.seed_length = len(seed)

    def _commit(self, changes: tuple[ScheduleChange, ...]) -> None:
        for change in changes:
            if isinstance(change, CreateChange):
                assert change.schedule.id not in self.created, "an id was reused"
                self.created.append(change.schedule.id)
            self.state = evolve(self.state, change)
            self.log.append(SCHEDULE_CHANGE, encode_change(change), self.now)

    def _tool(self, name: str, args: Json) -> Json:
        changes, text = handle(self.state, name, args, self.now)
        self._commit(changes)
        return json.loads(text)

    # --- the clock ---------------------------------------------------------------

    @rule(step=CLOCK_STEPS)
    def clock_moves_forward(self, step: int) -> None:
        self.now = min(MAX_MS, self.now + step)

    # --- the model's tool calls --------------------------------------------------

    @rule(data=st.data())
    def create_anything(self, data: st.DataObject) -> None:
        self._tool(CREATE, data.draw(create_arguments(self.now), label="args"))

    @rule(data=st.data())
    def create_valid(self, data: st.DataObject) -> None:
        self._tool(CREATE, data.draw(valid_create_arguments(self.now), label="args"))

    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        active = [record.id for record in self.state.active]
        known = [*active[:1], *active[-1:], *self.created[:1]]
        choices = [SCHEDULE_IDS, padded_texts, json_values]
        if known:
            choices = [st.sampled_from(known), st.sampled_from(known), *choices]
        target = data.draw(st.one_of(*choices), label="id")
        args = data.draw(st.sampled_from([{"id": target}, {"id": target, "x": 1}, target]))
        out = self._tool(DELETE, args)
        if isinstance(args, dict) and target in active:
            assert out == {"id": target, "deleted": True}

    @rule(args=st.one_of(st.none(), st.dictionaries(texts, json_values, max_size=3)))
    def list_(self, args: Json) -> None:
        out = self._tool(LIST, args)
        assert isinstance(out, list)
        assert [view["id"] for view in out] == [record.id for record in self.state.active]
        for view, record in zip(out, self.state.active, strict=True):
            assert view["scheduledAt"] == record.scheduled_at
            due = record.scheduled_at <= iso(self.now)
            assert view["state"] == ("overdue" if due else "scheduled")

    @rule(args=json_values.filter(lambda value: value is not None and not isinstance(value, dict)))
    def list_with_arguments_that_are_not_an_object(self, args: Json) -> None:
        assert self._tool(LIST, args) == {
            "code": "invalid_rule",
            "message": "schedule_list arguments must be a JSON object; send {}.",
        }

    # --- the runtime's deliveries --------------------------------------------------

    @rule()
    def deliver_due(self) -> None:
        changes, result = decide(self.state, DeliverDue(), self.now)
        assert is_successful(result)
        outcome = result.unwrap()
        assert isinstance(outcome, Delivery | Wait)
        assert bool(changes) == isinstance(outcome, Delivery)
        self._commit(changes)

    @rule()
    def deliver_everything_due(self) -> None:
        """What a runtime does on waking: deliver until told to wait."""
        # Each due one-shot, then one batch of fixed-rate records, then a wait.
        outcomes = []
        for _ in range(len(self.state.active) + 1):
            changes, result = decide(self.state, DeliverDue(), self.now)
            outcomes.append(result.unwrap())
            self._commit(changes)
            if isinstance(outcomes[-1], Wait):
                break
        last = outcomes[-1]
        assert isinstance(last, Wait), "delivery did not settle"
        assert last.next_wake is None or last.next_wake > self.now
        assert all(record.scheduled_at > iso(self.now) for record in self.state.active)

    # --- everything else in the session ------------------------------------------

    @rule(other=OTHER_EVENTS)
    def unrelated_event(self, other: tuple[str, bytes]) -> None:
        self.log.append(*other, self.now)

    # --- the property ------------------------------------------------------------

    @invariant()
    def fold_of_the_log_is_the_live_state(self) -> None:
        folded = fold(self.log.events, self.seed_length)
        assert folded == self.state
        assert folded.active == self.state.active
        assert set(folded.seen_ids) == set(self.state.seen_ids) == set(self.created)
        assert len(folded.seen_ids) == len(self.state.seen_ids) == len(self.created)
        checked = check_log(self.log.events, self.seed_length)
        assert is_successful(checked)
        assert checked.unwrap() == self.state

    @invariant()
    def active_records_are_in_creation_order(self) -> None:
        order = {schedule_id: n for n, schedule_id in enumerate(self.created)}
        positions = [order[record.id] for record in self.state.active]
        assert positions == sorted(positions)


TestToolSession = ToolSession.TestCase


@given(valid_logs(max_steps=20), st.lists(OTHER_EVENTS, max_size=4))
def test_fold_agrees_with_an_independent_replay_model(
    log: tuple[list[Step], Book], others: list[tuple[str, bytes]]
) -> None:
    """Valid logs from a separate model of the rules (strategies.Book): the
    fold's active records, their order and the seen ids are the model's."""
    steps, book = log
    events = EventLog()
    for n, step in enumerate(steps):
        if others and n % 3 == 0:
            events.append(*others[n % len(others)])
        events.append(SCHEDULE_CHANGE, encode_change(step.change))
    state = fold(events.events)
    assert state.active == tuple(book.active.values())
    assert set(state.seen_ids) == set(book.seen)
    assert fold_changes(step.change for step in steps) == state


@given(
    st.sampled_from(["\U0001f600", "\U00010000", "\U0010ffff"]),
    st.sampled_from(["after_seconds", "every_seconds", "at"]),
)
def test_a_prompt_with_a_surrogate_pair_replays_to_the_live_state(
    astral: str, selector: str
) -> None:
    """A Python str may spell an astral character as a high+low surrogate
    pair. The log stores the character (as JavaScript would), so the live
    state must hold the same prompt the replay will, or live and replayed
    state disagree after a restart."""
    code = ord(astral) - 0x10000
    pair = chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF))
    now = REFERENCE_NOW
    value: Json = {"after_seconds": 60, "every_seconds": 300, "at": iso(now + 60_000)}[selector]
    changes, _ = handle(
        EMPTY_STATE, "schedule_create", {"prompt": f"a{pair}b", selector: value}, now
    )
    live = fold_changes(changes)
    log = EventLog()
    for change in changes:
        log.append(SCHEDULE_CHANGE, encode_change(change))
    assert fold(log.events) == live


@fewer_examples(10)
@given(st.integers(300, 1_500), st.integers(0, 2**32), INSTANTS)
def test_a_large_log_folds_to_the_state_evolved_change_by_change(
    creates: int, seed: int, now: int
) -> None:
    """Hundreds of active records, so the due index holds several chunks."""
    changes, book = big_log(random.Random(seed), creates, now)
    live = EMPTY_STATE
    log = EventLog()
    for change in changes:
        live = evolve(live, change)
        log.append(SCHEDULE_CHANGE, encode_change(change))
    folded = fold(log.events)
    assert folded == live
    assert folded.active == live.active == tuple(book.active.values())
    assert set(folded.seen_ids) == set(book.seen)


@settings(max_examples=500)
@given(json_values)
def test_json_values_hold_only_numbers_json_can_carry(value: Json) -> None:
    """The strategy for "any JSON value" must not draw -0.0 (nor NaN or an
    infinity): the tools refuse those, so a rule that expects an answer for
    any JSON value would fail on the luck of the draw."""
    assert not holds_lossy_number(value)
