"""Minimal cases of mismatches the differential runs found, one per defect of ours, now fixed.

Each asserts Java's behaviour on a tiny input (through the bridge) and ours next to it, so the
defect cannot come back unnoticed. A newly found defect gets its case here, marked
``xfail(strict=True)`` until fixed (a fix then turns it red, and the marker goes).
"""

from __future__ import annotations

import pytest

from kafka_placement.assignment.assignment_quality import balance_score
from kafka_placement.conformance import checks
from kafka_placement.conformance.bridge import JavaError, JavaReference
from kafka_placement.vocabulary import Member, TopicPartition

pytestmark = pytest.mark.conformance

T = TopicPartition


def _ours(
    strategy: str, partitions: dict[str, int], members: dict[str, Member]
) -> dict[str, list[TopicPartition]]:
    from kafka_placement.assignment import assign

    return {m: sorted(v) for m, v in assign(strategy, partitions, members).items()}


def test_java_keeps_partition_with_highest_generation_claimant(java: JavaReference) -> None:
    """The Java side of the case below (no marker: this must always hold)."""
    members = {
        "b0": Member(["t"], owned=[T("t", 0)], generation=2),
        "C3": Member(["t"], owned=[T("t", 0)], generation=1),
    }
    assert java.assign("cooperative-sticky", {"t": 1}, members) == {"b0": [T("t", 0)], "C3": []}


def test_cooperative_sticky_stale_claim_does_not_revoke_from_newer_owner(java: JavaReference) -> None:
    """Found by the differential run (ours revoked t-0 from its generation-2 owner because a stale
    generation-1 member also claimed it, KIP-341); fixed, kept as a regression."""
    members = {
        "b0": Member(["t"], owned=[T("t", 0)], generation=2),
        "C3": Member(["t"], owned=[T("t", 0)], generation=1),
    }
    expected = java.assign("cooperative-sticky", {"t": 1}, members)
    assert not isinstance(expected, JavaError)
    ours = _ours("cooperative-sticky", {"t": 1}, members)
    assert checks.moves(members, ours) <= checks.moves(members, expected)
    assert ours == {m: sorted(v) for m, v in expected.items()}


def test_cooperative_sticky_revokes_only_what_rebalancing_needs(java: JavaReference) -> None:
    """Found by the differential run (ours also revoked t-0 from generation-5 owner 'a' because stale
    'z', generation 4, claimed it; Java only revokes t-1 to rebalance); fixed, kept as a regression."""
    members = {
        "a": Member(["t"], owned=[T("t", 0), T("t", 1)], generation=5),
        "z": Member(["t"], owned=[T("t", 0)], generation=4),
    }
    expected = java.assign("cooperative-sticky", {"t": 2}, members)
    assert expected == {"a": [T("t", 0)], "z": []}
    assert _ours("cooperative-sticky", {"t": 2}, members) == expected


def _sticky_general_case() -> dict[str, Member]:
    """Unequal subscriptions (Java's general builder), one member a generation behind."""

    def tps(*names: str) -> list[TopicPartition]:
        return [T(n.rsplit("-", 1)[0], int(n.rsplit("-", 1)[1])) for n in names]

    everything = ["orders", "t1", "t4", "x_y"]
    return {
        "C17": Member(["x_y"]),
        "consumer-14-28a4f3b5": Member(["orders", "t4", "x_y"]),
        "consumer-27-eb2f7dea": Member(everything, owned=tps("x_y-0", "orders-4"), generation=34),
        "C28": Member(everything, owned=tps("orders-0", "t4-0"), generation=34),
        "consumer-24-c1fe45aa": Member(everything, owned=tps("orders-1", "t4-1"), generation=34),
        "C1": Member(everything, owned=tps("orders-2", "t4-2"), generation=34),
        "consumer-32-d6be29f0": Member(everything, owned=tps("t1-0", "orders-3"), generation=33),
    }


STICKY_GENERAL_TOPICS = {"t1": 3, "x_y": 2, "orders": 5, "t4": 3}


def test_java_sticky_general_case_moves_two(java: JavaReference) -> None:
    """The Java side of the case below (no marker: this must always hold)."""
    members = _sticky_general_case()
    expected = java.assign("sticky", STICKY_GENERAL_TOPICS, members)
    assert not isinstance(expected, JavaError)
    assert checks.problems(STICKY_GENERAL_TOPICS, members, expected) == []
    assert checks.moves(members, expected) == 2
    assert balance_score(expected) == 6


def test_sticky_general_case_moves_no_more_than_java(java: JavaReference) -> None:
    """Found by the differential run (ours moved 3 where Java moved 2); fixed, kept as a regression."""
    members = _sticky_general_case()
    ours = _ours("sticky", STICKY_GENERAL_TOPICS, members)
    assert checks.problems(STICKY_GENERAL_TOPICS, members, ours) == []
    assert balance_score(ours) <= 6
    assert checks.moves(members, ours) <= 2


def _equal_subscription_case() -> dict[str, Member]:
    orders = ["Orders"]
    return {
        "C4": Member(orders, owned=[T("Orders", 1), T("Orders", 5)], generation=50),
        "consumer-34-23db62ca": Member(orders, owned=[T("Orders", 2), T("Orders", 4)], generation=50),
        "C23": Member(orders, owned=[T("Orders", 0), T("Orders", 3)], generation=50),
        "C17": Member(orders),
    }


def test_java_cooperative_equal_subscriptions_revokes_from_c23(java: JavaReference) -> None:
    """The Java side of the case below (no marker: this must always hold)."""
    assert java.assign("cooperative-sticky", {"Orders": 6}, _equal_subscription_case()) == {
        "C4": [T("Orders", 1), T("Orders", 5)],
        "consumer-34-23db62ca": [T("Orders", 2), T("Orders", 4)],
        "C23": [T("Orders", 0)],
        "C17": [],
    }


def test_cooperative_equal_subscriptions_revokes_what_java_revokes(java: JavaReference) -> None:
    """Found by the differential run (ours revoked Orders-4 from consumer-34-23db62ca, Java Orders-3
    from C23: the two ids share a HashMap bucket, and Java walks a bucket in insertion order, the
    group's member order); fixed, kept as a regression."""
    members = _equal_subscription_case()
    expected = java.assign("cooperative-sticky", {"Orders": 6}, members)
    assert not isinstance(expected, JavaError)
    assert _ours("cooperative-sticky", {"Orders": 6}, members) == {m: sorted(v) for m, v in expected.items()}


def test_rack_aware_fresh_sticky_equals_java(java: JavaReference) -> None:
    """Exact equality with Java's sticky: 9 partitions, 6 with their replica on r1 and 3 on r0, a
    consumer in each rack: Java gives the larger share to the r1 consumer (its rack-aware round robin);
    ours did the opposite before it followed Java's rack-aware constrained builder."""
    from kafka_placement.assignment import assign

    partitions = {"t": 9}
    replicas = {T("t", p): (1 if p < 6 else 0,) for p in range(9)}
    broker_racks: dict[int, str | None] = {0: "r0", 1: "r1"}
    members = {"a": Member(["t"], rack="r0"), "b": Member(["t"], rack="r1")}
    expected = java.assign("sticky", partitions, members, replicas=replicas, broker_racks=broker_racks)
    assert not isinstance(expected, JavaError)
    racks = {tp: {broker_racks[b] or ""} for tp, (b,) in replicas.items()}
    ours = assign("sticky", partitions, members, partition_racks=racks)
    assert ours == {m: sorted(v) for m, v in expected.items()}
    assert len(ours["b"]) == 5


def test_astral_member_id_sorts_below_private_use_like_java(java: JavaReference) -> None:
    """Exact equality with Java's sticky: Java orders member ids by UTF-16 code units: the emoji (a
    surrogate pair) before U+E000, so with one partition the emoji member gets it."""
    from kafka_placement.assignment import assign

    members = {"\U0001f600": Member(["t"]), "\ue000": Member(["t"])}
    expected = java.assign("sticky", {"t": 1}, members)
    assert expected == {"\U0001f600": [T("t", 0)], "\ue000": []}
    assert assign("sticky", {"t": 1}, members) == expected
