"""The failover verdict over a described group: expected owners follow the failover rule as
docs/assignment.md states it ("Semantics and where they come from": highest priority; ties to the
smaller member id in Java string order; no priority ranks last), spelled out per case by hand."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.groups.description import DescribedGroup, DescribedMember
from kafka_placement.groups.failover_check import SHARE_GROUPS_DO_NOT_FAIL_OVER, check_failover
from kafka_placement.vocabulary import TopicPartition

TP = TopicPartition


def member(
    mid: str,
    priority: int | None,
    parts: range | list[int] = (),
    topic: str = "t",
    topics: tuple[str, ...] | None = ("t",),
    source: str = "userData",
) -> DescribedMember:
    return DescribedMember(
        mid,
        f"client-{mid}",
        "/127.0.0.1",
        priority=priority,
        priority_source=source,  # type: ignore[arg-type]
        topics=topics,
        assignment=tuple(TP(topic, p) for p in parts),
        assignment_user_data="failover",
    )


def group(
    *members: DescribedMember,
    assignor: str = "failover",
    protocol: str = "classic",
    counts: dict[str, int] | None = None,
) -> DescribedGroup:
    return DescribedGroup(
        "g",
        protocol,
        "Stable",
        assignor,
        members,  # type: ignore[arg-type]
        {"t": 4} if counts is None else counts,
    )


def test_best_member_owning_everything_is_ok() -> None:
    check = check_failover(group(member("a", 10, range(4)), member("b", 5)))
    assert check.applies and check.ok
    assert check.should_be_active == ("a",) and check.active == ("a",)
    assert check.convertible is False  # the members' assignment userData is the failover leader's


def test_lower_priority_member_owning_it_fails() -> None:
    check = check_failover(group(member("a", 10), member("b", 5, range(4))))
    assert not check.ok and check.should_be_active == ("a",) and check.active == ("b",)
    [topic] = check.topics
    assert topic.ok is False and "holds none of its partitions" in topic.reason


def test_spread_and_unassigned_partitions_fail() -> None:
    assert not check_failover(group(member("a", 10, [0, 1]), member("b", 5, [2, 3]))).ok
    check = check_failover(group(member("a", 10, [0, 1, 2]), member("b", 5)))
    assert not check.ok and "1 partition(s) are assigned to no member" in check.topics[0].reason


def test_ties_go_to_the_smaller_member_id_and_no_priority_ranks_last() -> None:
    assert check_failover(group(member("b", 7), member("a", 7, range(4)))).ok
    assert check_failover(group(member("x", None), member("y", -5, range(4)))).ok
    assert not check_failover(group(member("x", None, range(4)), member("y", -5))).ok


def test_only_subscribers_count() -> None:
    other = member("a", 100, [0, 1], topic="other", topics=("other",))
    check = check_failover(group(other, member("b", 1, range(4)), counts={"t": 4, "other": 2}))
    assert check.ok and check.should_be_active == ("a", "b")
    # a topic nobody owns whose partition count is unknown: cannot tell
    missing = check_failover(group(member("a", 100, topics=("gone",)), member("b", 1, range(4))))
    assert missing.ok and [t.ok for t in missing.topics] == [None, True]


def test_not_a_failover_group_unless_asked() -> None:
    spread = group(member("a", None, [0, 1]), member("b", None, [2, 3]), assignor="range")
    assert not check_failover(spread).applies and check_failover(spread).ok
    assert not check_failover(spread, failover=True).ok
    assert not check_failover(group(member("a", 10), member("b", 5, range(4))), failover=False).applies


def test_priorities_not_visible_still_catch_a_spread() -> None:
    def hidden(mid: str, parts: list[int]) -> DescribedMember:
        return member(mid, None, parts, topics=None, source="not visible")

    spread = group(hidden("a", [0, 1]), hidden("b", [2, 3]), assignor="uniform", protocol="consumer")
    assert not check_failover(spread).applies  # uniform, no visible priority: not judged by default
    check = check_failover(spread, failover=True)
    assert not check.ok and check.topics[0].should_own is None
    single = check_failover(group(hidden("a", [0, 1, 2, 3]), hidden("b", []), protocol="consumer"))
    assert single.ok and single.topics[0].ok is None  # cannot tell, but nothing wrong seen


def test_share_groups_are_never_judged() -> None:
    check = check_failover(DescribedGroup("s", "share", "Stable", "simple"), failover=True)
    assert not check.applies and check.ok and check.reason == SHARE_GROUPS_DO_NOT_FAIL_OVER


def test_empty_group() -> None:
    assert check_failover(group()).ok


@given(st.lists(st.one_of(st.none(), st.integers(-3, 3)), min_size=1, max_size=6), st.data())
def test_exactly_the_best_subscriber_owning_everything_passes(
    priorities: list[int | None], data: st.DataObject
) -> None:
    ids = [f"m{i}" for i in range(len(priorities))]
    # the best member by the written rule: has a priority, highest, then smallest id (ASCII ids here)
    ranked = sorted(zip(ids, priorities, strict=True), key=lambda p: (p[1] is None, -(p[1] or 0), p[0]))
    best = ranked[0][0]
    owner = data.draw(st.sampled_from(ids))
    members = [member(i, p, range(4) if i == owner else []) for i, p in zip(ids, priorities, strict=True)]
    assert check_failover(group(*members)).ok is (owner == best)
