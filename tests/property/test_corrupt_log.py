"""(d) One wrong field anywhere in a valid log makes the fold refuse it.

A valid log (generated with an independent replay model) is folded fine;
then one field of one logged change is given a wrong type or value
(:func:`tickler.testing.strategies.damaged_logs`, which pairs it with the
reference's exact reason), and ``fold`` must raise ``CorruptScheduleLog``
naming that event's index and that reason, whatever other events and seed
prefix surround it.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from returns.pipeline import is_successful

from tickler.core import CorruptScheduleLog, check_log, fold
from tickler.testing.strategies import DamagedLog, damaged_logs


@given(damaged_logs())
def test_one_wrong_field_is_refused_at_its_index_with_the_reference_reason(
    case: DamagedLog,
) -> None:
    assert is_successful(check_log(case.valid, case.seed_length))
    with pytest.raises(CorruptScheduleLog) as raised:
        fold(case.events, case.seed_length)
    assert raised.value.reason
    assert (raised.value.index, raised.value.reason) == (case.index, case.reason)
    result = check_log(case.events, case.seed_length)
    assert not is_successful(result)
    assert (result.failure().index, result.failure().reason) == (case.index, case.reason)


@given(damaged_logs())
def test_a_corrupt_change_inside_the_seed_prefix_is_not_read(case: DamagedLog) -> None:
    """Events before ``seed_length`` belong to the parent and are never read;
    the suffix may still be refused (a delete of a record created before the
    boundary), but only for an event after it."""
    result = check_log(case.events, case.index + 1)
    if not is_successful(result):
        failed_at = result.failure().index
        assert failed_at is not None
        assert failed_at > case.index
