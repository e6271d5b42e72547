"""The judging functions used by the sticky comparisons, on hand-made cases."""

from __future__ import annotations

from kafka_placement.assignment.assignment_quality import balance_score
from kafka_placement.conformance import checks
from kafka_placement.vocabulary import Member, TopicPartition

T = TopicPartition


def test_balance_score_is_sum_of_pairwise_size_differences() -> None:
    assert balance_score({"a": [], "b": [], "c": []}) == 0
    # sizes 1, 2, 4: |1-2| + |1-4| + |2-4| = 6
    assignment = {"a": [T("t", 0)], "b": [T("t", 1), T("t", 2)], "c": [T("t", i) for i in range(3, 7)]}
    assert balance_score(assignment) == 6


def test_problems_finds_duplicates_unsubscribed_missing_and_unassigned() -> None:
    members = {"a": Member(["t"]), "b": Member(["u"])}
    bad = {"a": [T("t", 0), T("u", 0)], "x": [T("t", 0)]}
    found = " | ".join(checks.problems({"t": 2, "u": 1}, members, bad))
    assert "members missing from the result: ['b']" in found
    assert "unknown members in the result: ['x']" in found
    assert "assigned to both" in found
    assert "does not subscribe" in found
    assert "partitions unassigned" in found
    good = {"a": [T("t", 0), T("t", 1)], "b": [T("u", 0)]}
    assert checks.problems({"t": 2, "u": 1}, members, good) == []


def test_nonexistent_partition_is_a_problem() -> None:
    members = {"a": Member(["t"])}
    assert any(
        "does not exist" in p for p in checks.problems({"t": 1}, members, {"a": [T("t", 0), T("t", 5)]})
    )


def test_previous_owner_is_highest_generation_claimant() -> None:
    members = {
        "old": Member(["t"], owned=[T("t", 0), T("t", 1)], generation=3),
        "new": Member(["t"], owned=[T("t", 0)], generation=4),
        "twin1": Member(["t"], owned=[T("t", 2)], generation=4),
        "twin2": Member(["t"], owned=[T("t", 2)], generation=4),
    }
    owners = checks.previous_owners(members)
    assert owners == {T("t", 0): "new", T("t", 1): "old"}  # t-2: same-generation conflict, no owner


def test_moves_counts_lost_partitions_of_present_owners() -> None:
    members = {"a": Member(["t"], owned=[T("t", 0), T("t", 1)], generation=2), "b": Member(["t"])}
    assert checks.moves(members, {"a": [T("t", 0)], "b": [T("t", 1)]}) == 1
    assert checks.moves(members, {"a": [T("t", 0), T("t", 1)], "b": []}) == 0


def test_cooperative_problem_when_partition_changes_owner_in_one_round() -> None:
    members = {"a": Member(["t"], owned=[T("t", 0), T("t", 1)], generation=2), "b": Member(["t"])}
    assert checks.cooperative_problems(members, {"a": [T("t", 0)], "b": []}) == []
    assert checks.cooperative_problems(members, {"a": [T("t", 0)], "b": [T("t", 1)]}) == [
        "TopicPartition(topic='t', partition=1) given to b while a still owns it"
    ]


def test_is_balanced_allows_gaps_subscriptions_force() -> None:
    members = {"a": Member(["t"]), "b": Member(["u"])}
    assert checks.is_balanced(members, {"a": [T("t", i) for i in range(5)], "b": [T("u", 0)]})
    members = {"a": Member(["t"]), "b": Member(["t"])}
    assert not checks.is_balanced(members, {"a": [T("t", i) for i in range(5)], "b": [T("t", 5)]})


def test_mismatch_kinds() -> None:
    from kafka_placement.conformance.runner import mismatch_kind

    assert mismatch_kind("moves more: Java moved 2 partitions, ours 3 (balance score Java 6, ours 0)") == (
        "moves more for a strictly better balance"
    )
    assert (
        mismatch_kind("moves more: Java moved 2 partitions, ours 3 (balance score Java 6, ours 6)")
        == "moves more"
    )
    assert mismatch_kind("less balanced: balance score Java 5, ours 8") == "less balanced"
    assert mismatch_kind("ours round 1: t-0 given to b while a still owns it") == "ours invalid"
    assert mismatch_kind("exception differs: Java X: 'a'; ours Y: 'b'") == "exception differs"
    assert mismatch_kind("result differs: Java {}; ours {}") == "result differs"
