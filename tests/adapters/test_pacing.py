"""The worker's delivery rate limit (``--max-rate``): a token bucket over
the wall clock in epoch ms, counted exactly (no sleeping, no timing)."""

from __future__ import annotations

import pytest

from tickler.adapters.worker._pacing import Pace

T0 = 1_785_931_200_000


def test_it_starts_with_its_burst_and_refills_at_the_rate() -> None:
    pace = Pace(4, T0)  # 4/s: claims of one, a burst of two
    assert (pace.batch, pace.burst) == (1, 2)
    assert pace.available(T0) == 2
    pace.take(2, T0)
    assert pace.available(T0) == 0
    assert pace.available(T0 + 249) == 0
    assert pace.available(T0 + 250) == 1
    assert pace.wait_s(1, T0 + 250) == 0.0


def test_tokens_never_pile_up_past_the_burst() -> None:
    pace = Pace(100, T0)  # batches of 5 (50 ms of tokens), a burst of 6
    assert (pace.batch, pace.burst) == (5, 6)
    pace.take(6, T0)
    assert pace.available(T0 + 3_600_000) == 6  # an hour idle: still one burst
    assert pace.want(16) == 5
    assert pace.want(2) == 2


def test_over_any_span_no_more_than_rate_times_span_plus_the_burst() -> None:
    pace = Pace(20, T0)  # claims of one, a burst of two
    granted = 0
    for now in range(T0, T0 + 10_000, 7):  # a claim attempt every 7 ms for 10 s
        if pace.available(now):
            pace.take(1, now)
            granted += 1
    # The rate is reached (nothing lost to late claims) and never passed.
    assert 20 * 10 - 1 <= granted <= 20 * 10 + pace.burst
    assert pace.granted == granted


def test_a_debt_is_paid_before_the_next_claim() -> None:
    pace = Pace(4, T0)
    pace.take(2, T0)  # two sessions claimed
    pace.charge(2, T0)  # one of them handed over three follow-ups
    assert pace.available(T0 + 500) == 0  # two tokens repaid the debt
    assert pace.wait_s(1, T0 + 500) == pytest.approx(0.25)
    assert pace.available(T0 + 750) == 1
    pace.charge(0, T0 + 750)  # nothing extra: nothing charged
    assert pace.available(T0 + 750) == 1


def test_a_clock_stepping_back_adds_nothing_and_forward_at_most_the_burst() -> None:
    pace = Pace(10, T0)
    pace.take(2, T0)
    assert pace.available(T0 - 60_000) == 0  # stepped back a minute
    assert pace.available(T0 + 50) == 0  # and the time before it is not counted twice
    assert pace.available(T0 + 100) == 1
    assert pace.available(T0 + 86_400_000) == 2  # a day forward: one burst


@pytest.mark.parametrize("rate", [0, -1, float("inf"), float("nan")])
def test_a_rate_must_be_a_positive_number(rate: float) -> None:
    with pytest.raises(ValueError, match="positive"):
        Pace(rate, T0)
