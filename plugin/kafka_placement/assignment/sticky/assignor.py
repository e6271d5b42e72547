"""The sticky assignor (KIP-54, with KIP-341's generation rule and KIP-881's rack awareness).

Balance first — partition counts differ by at most one, or no partition can move to another of its
potential consumers that has two or more fewer — then keep as many previously owned partitions as
possible. ``Member.owned`` is the previous assignment; when several members claim one partition the
claim of the highest ``Member.generation`` counts (a tie in the highest generation voids the claims,
as Kafka 3.x does); claims on partitions that no longer exist or on topics the member no longer
subscribes to are dropped. Equal subscriptions take the quota-fill path (Java's constrained builder),
others the general path (count balancing; once KIP-54 balanced, owned partitions stay rather than
move for a better balance score). Deterministic: the same input always gives the same output; the
order of the mappings only matters where Java's does — member ids sharing a Java ``HashMap`` bucket
are walked in the ``members`` mapping's order, as Kafka walks them in the group's member order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from kafka_placement.assignment.dealing import deal
from kafka_placement.assignment.sticky.claims import claim_winners, collect_claims, resolve_claims
from kafka_placement.assignment.sticky.equal_subscriptions import constrained_assign
from kafka_placement.assignment.sticky.general import general_assign
from kafka_placement.assignment.sticky.java_general import java_general_owner_array
from kafka_placement.assignment.sticky.problem import (
    IntArray,
    Problem,
    RackView,
    build_problem,
    build_racks,
    gc_paused,
    in_python_order,
    materialize,
    partitions_of_topic,
    validate_inputs,
)
from kafka_placement.vocabulary import Member, TopicPartition

__all__ = ["assign_sticky", "sticky_owner_array"]


def sticky_owner_array(problem: Problem, racks: RackView | None) -> IntArray:
    """The sticky target as an owner array over ``problem``'s global partition ids (-1 = unassigned)."""
    kept = resolve_claims(problem, collect_claims(problem))
    if problem.equal_subscriptions:
        return constrained_assign(problem, kept, racks)
    return best_of_java(problem, racks, general_assign(problem, kept, racks))


def best_of_java(problem: Problem, racks: RackView | None, ours: IntArray) -> IntArray:
    """``ours``, unless Java's general builder (replayed on small groups, :mod:`.java_general`) gives
    a valid result at least as good on every count — KIP-54 balance score, partitions moved from
    their previous owner, partitions off their consumer's rack — then Java's (so ours is never worse
    than Java's, and equal to it unless strictly better on one count and no worse on the others).
    A fresh rack-aware group always gets Java's result (when valid): exactly what Kafka gives."""
    java = java_general_owner_array(problem, racks)
    if java is None or not valid_owner_array(problem, java):
        return ours
    claims = collect_claims(problem)
    if racks is not None and claims.gid.size == 0:
        return java  # a fresh rack-aware group: exactly Java's (KIP-881 keeps it deterministic)
    previous = claim_winners(problem, claims) if claims.gid.size else np.full(problem.n_partitions, -1)
    mine, theirs = _quality(problem, racks, ours, previous), _quality(problem, racks, java, previous)
    if all(a <= b for a, b in zip(mine, theirs, strict=True)) and mine != theirs:
        return ours
    return java


def valid_owner_array(problem: Problem, owner: IntArray) -> bool:
    """Every partition assigned, each to a member subscribing to its topic."""
    if (owner < 0).any():
        return False
    return bool(problem.subscribed[owner, problem.topic_of(np.arange(owner.size, dtype=np.int64))].all())


def _quality(
    problem: Problem, racks: RackView | None, owner: IntArray, previous: IntArray
) -> tuple[int, int, int]:
    """(balance score, partitions moved from their previous owner, partitions off their consumer's rack)."""
    sizes = np.sort(np.bincount(owner[owner >= 0], minlength=problem.n_members))
    m = problem.n_members
    score = int((sizes * (2 * np.arange(m, dtype=np.int64) - m + 1)).sum())
    moved = int(((previous >= 0) & (owner != previous)).sum())
    off_rack = 0
    if racks is not None:
        for i, rack in enumerate(racks.member_rack):
            if rack is not None:
                mine = np.flatnonzero(owner == i)
                off_rack += int(mine.size - racks.matches(i, mine).sum())
    return score, moved, off_rack


def _fresh_equal(problem: Problem) -> dict[str, list[TopicPartition]]:
    """No previous owner, equal subscriptions, no racks: member i gets every M-th partition from i."""
    if not problem.member_ids:
        return {}
    per_topic = [
        partitions_of_topic(topic, count)
        for topic, count in zip(problem.topics, problem.counts.tolist(), strict=True)
    ]
    hands = deal(per_topic, problem.n_members)
    return in_python_order(problem, dict(zip(problem.member_ids, hands, strict=True)))


def assign_sticky(
    partitions_per_topic: Mapping[str, int],
    members: Mapping[str, Member],
    *,
    partition_racks: Mapping[TopicPartition, Iterable[str]] | None = None,
) -> dict[str, list[TopicPartition]]:
    """Sticky assignment: ``{member_id: sorted partitions}`` with every member present."""
    with gc_paused():
        validate_inputs(partitions_per_topic, members)
        problem = build_problem(partitions_per_topic, members)
        racks = build_racks(problem, partition_racks)
        if (
            problem.equal_subscriptions
            and racks is None
            and not any(member.owned for member in problem.members)
        ):
            return _fresh_equal(problem)
        return materialize(problem, sticky_owner_array(problem, racks))
