"""The bound on kept pipelines (ctsgen.backends.kept): what a device worker destroys, and when."""

import pytest
from hypothesis import given, strategies as st

from ctsgen.backends.kept import KeptObjects


def _kept(limit):
    destroyed = []
    return KeptObjects(limit, destroyed.append), destroyed


def test_the_least_recently_used_beyond_the_limit_are_destroyed_in_that_order():
    kept, destroyed = _kept(2)
    for key in "abc":
        kept.add(key, key.upper())
        kept.use(key)
    kept.use("a")  # a is now the most recent: b is the least
    assert kept.evict() == 1
    assert destroyed == ["B"]
    assert kept.get("b") is None and kept.get("a") == "A" and kept.get("c") == "C"
    kept.add("d", "D")
    kept.use("d")
    assert kept.evict() == 1 and destroyed == ["B", "C"]


def test_objects_built_ahead_and_never_used_are_kept_whatever_the_limit():
    # a pack's run builds every pipeline up front: evicting one before its dispatch would
    # only build it again
    kept, destroyed = _kept(1)
    for key in "abcd":
        kept.add(key, key)
    assert kept.evict() == 0 and destroyed == [] and len(kept) == 4
    kept.use("a")
    kept.use("b")
    assert kept.evict() == 1 and destroyed == ["a"]
    assert sorted(kept.values()) == ["b", "c", "d"]


def test_no_limit_keeps_everything_and_a_limit_below_one_is_refused():
    kept, destroyed = _kept(None)
    for i in range(100):
        kept.add(str(i), i)
        kept.use(str(i))
    assert kept.evict() == 0 and len(kept) == 100 and destroyed == []
    with pytest.raises(ValueError, match="at least one"):
        KeptObjects(0, destroyed.append)


def test_adding_a_key_twice_is_refused_so_a_built_object_is_never_lost():
    kept, _ = _kept(4)
    kept.add("a", 1)
    with pytest.raises(KeyError):
        kept.add("a", 2)


@given(st.integers(1, 5), st.lists(st.integers(0, 9), max_size=60))
def test_every_object_is_either_kept_or_destroyed_once_and_the_used_stay_within_the_limit(limit, uses):
    kept, destroyed = _kept(limit)
    added = []
    for k in uses:
        key = str(k)
        if kept.get(key) is None:
            obj = (key, len(added))  # a rebuilt object is a new one
            kept.add(key, obj)
            added.append(obj)
        kept.use(key)
        kept.evict()
        assert len(list(kept.values())) <= limit
        if uses:
            assert kept.get(key) is not None  # the one just used survives its own eviction
    assert sorted(destroyed + list(kept.values())) == sorted(added)
    assert len(set(destroyed)) == len(destroyed)
