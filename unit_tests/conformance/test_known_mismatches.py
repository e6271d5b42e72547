"""Minimal cases of mismatches the differential runs found, one per known defect of ours.

Each is a real assertion of Java's behaviour on a tiny input, marked ``xfail(strict=True)`` with
the mismatch named: the run stays green while the defect is known, and turns red (XPASS) the
moment the owner fixes it, so the marker gets removed and the case stays as a regression test.
"""

from __future__ import annotations

import pytest

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


@pytest.mark.xfail(
    strict=True,
    reason="KNOWN MISMATCH cooperative-sticky vs Java CooperativeStickyAssignor (KIP-341): a stale member "
    "(generation 1) claiming the partition of the generation-2 owner makes ours revoke it from the owner",
)
def test_cooperative_sticky_stale_claim_does_not_revoke_from_newer_owner(java: JavaReference) -> None:
    members = {
        "b0": Member(["t"], owned=[T("t", 0)], generation=2),
        "C3": Member(["t"], owned=[T("t", 0)], generation=1),
    }
    expected = java.assign("cooperative-sticky", {"t": 1}, members)
    assert not isinstance(expected, JavaError)
    ours = _ours("cooperative-sticky", {"t": 1}, members)
    assert checks.moves(members, ours) <= checks.moves(members, expected)
    assert ours == {m: sorted(v) for m, v in expected.items()}


@pytest.mark.xfail(
    strict=True,
    reason="KNOWN MISMATCH cooperative-sticky vs Java (KIP-341): ours also revokes t-0 from "
    "generation-5 owner "
    "'a' because stale 'z' (generation 4) claims it; Java only revokes t-1 (to rebalance)",
)
def test_cooperative_sticky_revokes_only_what_rebalancing_needs(java: JavaReference) -> None:
    members = {
        "a": Member(["t"], owned=[T("t", 0), T("t", 1)], generation=5),
        "z": Member(["t"], owned=[T("t", 0)], generation=4),
    }
    expected = java.assign("cooperative-sticky", {"t": 2}, members)
    assert expected == {"a": [T("t", 0)], "z": []}
    assert _ours("cooperative-sticky", {"t": 2}, members) == expected
