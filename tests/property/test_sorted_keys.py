"""The due index (``SortedKeys``) against a plain sorted list.

Any sequence of inserts of new keys and removals of present ones leaves the
same keys in the same order as a sorted list would, every earlier version
unchanged (it is persistent), and a removal of an absent key raises
KeyError. The chunks are made tiny here (2 keys; a chunk splits past 4), so
that short sequences split chunks, empty them and rebuild the spine, as
hundreds of thousands of keys do at the real size."""

from __future__ import annotations

from bisect import insort
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tickler.core import _sortedkeys
from tickler.core._sortedkeys import DueKey, SortedKeys

# Few distinct values, so that ties on the target and on the order are common.
keys = st.tuples(st.integers(0, 6), st.integers(0, 3), st.sampled_from(["a", "b", "c"]))
steps = st.lists(st.tuples(st.booleans(), keys, st.integers(0, 10**6)), max_size=60)


def _check(index: SortedKeys, model: list[DueKey], bound: DueKey) -> None:
    assert list(index) == model
    assert len(index) == len(model)
    assert index.first() == (model[0] if model else None)
    assert list(index.upto(bound)) == [key for key in model if key <= bound]
    assert index == SortedKeys.from_sorted(model)


@given(steps, keys)
def test_inserts_and_removals_keep_the_sorted_order_and_every_version(
    ops: list[tuple[bool, DueKey, int]], bound: DueKey
) -> None:
    with mock.patch.object(_sortedkeys, "_CHUNK", 2):
        index, model = SortedKeys(), list[DueKey]()
        versions: list[tuple[SortedKeys, list[DueKey]]] = [(index, [])]
        for insert, key, pick in ops:
            if insert and key not in model:
                index = index.insert(key)
                insort(model, key)
            elif model:  # remove one that is there (``pick`` chooses which)
                present = model[pick % len(model)]
                index = index.remove(present)
                model.remove(present)
            else:
                continue
            _check(index, model, bound)
            versions.append((index, list(model)))
        for version, content in versions:  # persistent: no later change touched them
            assert list(version) == content


@given(st.lists(keys, unique=True, max_size=30), keys)
def test_removing_an_absent_key_raises_key_error(present: list[DueKey], absent: DueKey) -> None:
    with mock.patch.object(_sortedkeys, "_CHUNK", 2):
        index = SortedKeys.from_sorted(sorted(present))
        if absent in present:
            index = index.remove(absent)
        with pytest.raises(KeyError):
            index.remove(absent)
        assert len(index) == len(set(present) - {absent})
