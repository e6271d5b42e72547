"""failover / priority (active/passive: the highest userData priority gets everything; extended per topic)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.assignment import Member, TopicPartition, assign

TP = TopicPartition
ALL = {"t0": 2, "t1": 3}


def _all(topics: dict[str, int]) -> list[TP]:
    return sorted(TP(t, p) for t, n in topics.items() for p in range(n))


def test_seed_highest_priority_gets_everything() -> None:
    members = {
        "c1": Member(["t0", "t1"], priority=10),
        "c2": Member(["t0", "t1"], priority=5),
        "c3": Member(["t0", "t1"], priority=1),
    }
    assert assign("failover", ALL, members) == {"c1": _all(ALL), "c2": [], "c3": []}


def test_failover_to_next_priority_when_active_member_leaves() -> None:
    members = {
        "c1": Member(["t0", "t1"], priority=10),
        "c2": Member(["t0", "t1"], priority=5),
        "c3": Member(["t0", "t1"], priority=1),
    }
    del members["c1"]
    assert assign("failover", ALL, members) == {"c2": _all(ALL), "c3": []}
    del members["c2"]
    assert assign("priority", ALL, members) == {"c3": _all(ALL)}


def test_ties_broken_by_member_id_and_missing_priority_ranks_lowest() -> None:
    members = {
        "b": Member(["t0", "t1"], priority=7),
        "a": Member(["t0", "t1"], priority=7),
        "z": Member(["t0", "t1"]),
        "neg": Member(["t0", "t1"], priority=-(2**31)),
    }
    assert assign("failover", ALL, members)["a"] == _all(ALL)
    del members["a"], members["b"]
    # any number, even INT32_MIN, beats "no priority"
    assert assign("failover", ALL, members) == {"z": [], "neg": _all(ALL)}


def test_topic_falls_to_best_subscriber() -> None:
    members = {
        "high": Member(["t0"], priority=10),
        "mid": Member(["t0", "t1"], priority=5),
        "low": Member(["t1", "t2"], priority=1),
    }
    result = assign("failover", {"t0": 2, "t1": 2, "t2": 1, "unsubscribed": 4}, members)
    assert result == {
        "high": [TP("t0", 0), TP("t0", 1)],
        "mid": [TP("t1", 0), TP("t1", 1)],
        "low": [TP("t2", 0)],
    }


def test_missing_topics_zero_members() -> None:
    assert assign("failover", {}, {"a": Member(["t"], priority=1)}) == {"a": []}
    assert assign("failover", {"t": 1}, {}) == {}


@given(
    st.dictionaries(
        st.text("abc", min_size=1, max_size=3),
        st.one_of(st.none(), st.integers(-(2**31), 2**31 - 1)),
        min_size=1,
        max_size=6,
    )
)
def test_single_owner_is_the_max(priorities: dict[str, int | None]) -> None:
    members = {m: Member(["t"], priority=p) for m, p in priorities.items()}
    result = assign("failover", {"t": 4}, members)
    owners = [m for m, parts in result.items() if parts]
    assert len(owners) == 1
    owner = owners[0]
    numbers = [p for p in priorities.values() if p is not None]
    if numbers:
        assert priorities[owner] == max(numbers)
        assert owner == min(m for m, p in priorities.items() if p == max(numbers))
    else:
        assert owner == min(priorities)
