"""The cooperative-sticky assignor (KIP-429) on top of the sticky target.

The target is the sticky assignment. A partition that the target gives to member B while another
member still owns it (lists it in ``Member.owned`` with the highest generation among the partition's
claimants, whatever its subscription; stale claims of older generations do not count, KIP-341) is
left out of B's assignment in this round: the owner is not assigned it, so it revokes it, and the follow-up
rebalance hands it to B once nobody owns it. So no partition ever has two owners, and the second
round reaches the balance of the sticky target.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from kafka_placement.assignment.sticky.assignor import valid_owner_array
from kafka_placement.assignment.sticky.claims import claim_winners, collect_claims, resolve_claims
from kafka_placement.assignment.sticky.equal_subscriptions import constrained_assign
from kafka_placement.assignment.sticky.general import general_assign
from kafka_placement.assignment.sticky.java_general import java_general_owner_array
from kafka_placement.assignment.sticky.problem import (
    Claims,
    IntArray,
    Problem,
    RackView,
    build_problem,
    build_racks,
    gc_paused,
    materialize,
    validate_inputs,
)
from kafka_placement.vocabulary import Member, TopicPartition

__all__ = ["assign_cooperative_sticky", "cooperative_owner_array"]


def assign_cooperative_sticky(
    partitions_per_topic: Mapping[str, int],
    members: Mapping[str, Member],
    *,
    partition_racks: Mapping[TopicPartition, Iterable[str]] | None = None,
) -> dict[str, list[TopicPartition]]:
    """Cooperative-sticky assignment: the sticky target minus partitions still owned by someone else."""
    with gc_paused():
        validate_inputs(partitions_per_topic, members)
        problem = build_problem(partitions_per_topic, members)
        owner, javas = _target(problem, build_racks(problem, partition_racks))
        claims = collect_claims(problem)
        if claims.gid.size:
            if javas:
                # Java's rule, plus: never while the partition's single highest-generation claimant
                # is someone else (Java's rule lets a zombie's claim through; its result is then
                # invalid). Tied claimants are no owner, as for Java.
                winners = claim_winners(problem, claims)
                second_owner = np.flatnonzero((winners >= 0) & (owner >= 0) & (winners != owner))
                withheld = np.union1d(second_owner, _transferring(claims.gid, claims.member, owner))
            else:
                withheld = _withheld(claims, owner)
            owner[withheld] = -1
        return materialize(problem, owner)


def cooperative_owner_array(problem: Problem, racks: RackView | None) -> IntArray:
    """The target of a cooperative rebalance (before withholding what others still own).

    Equal subscriptions: the sticky target. Unequal ones: Java's general builder replayed (small
    groups, :mod:`.java_general`) when its result is valid; otherwise the sticky target (KIP-54
    balance with the fewest moves) when the follow-up rebalance — every member owning its target
    minus what is withheld — moves nothing it kept and is as balanced, so the second round completes it;
    otherwise the target balanced as far as chains of moves reach, which the follow-up round
    reproduces. Withholding then follows Java's rule for whichever target it is.
    """
    return _target(problem, racks)[0]


def _target(problem: Problem, racks: RackView | None) -> tuple[IntArray, bool]:
    """(the target, whether it is Java's general builder replayed)."""
    claims = collect_claims(problem)
    kept = resolve_claims(problem, claims)
    if problem.equal_subscriptions:
        return constrained_assign(problem, kept, racks), False
    java = java_general_owner_array(problem, racks)
    if java is not None and valid_owner_array(problem, java):
        # Java's own target (replayed): every round then follows Java's, so the group reaches Java's
        # fixed point. A target better than Java's in one round can end worse after the follow-up
        # rounds (a partition moved in round one may have gone back to its first owner in Java's).
        return java, True
    return _cooperative_target(problem, claims, kept, racks), False


def _transferring(gid: IntArray, member: IntArray, owner: IntArray) -> IntArray:
    """Java's ``computePartitionsTransferringOwnership`` (the general case): a partition its target
    owner does not list as owned while another member lists it, in any generation, is withheld."""
    own_claim = np.zeros(owner.size, dtype=np.bool_)
    own_claim[gid[owner[gid] == member]] = True
    foreign = np.zeros(owner.size, dtype=np.bool_)
    foreign[gid[owner[gid] != member]] = True
    return np.flatnonzero(foreign & ~own_claim & (owner >= 0))


def _cooperative_target(problem: Problem, claims: Claims, kept: IntArray, racks: RackView | None) -> IntArray:
    """Our own cooperative target for unequal subscriptions (see :func:`cooperative_owner_array`)."""
    target = general_assign(problem, kept, racks)
    if claims.gid.size == 0:
        return target
    withheld = _withheld(claims, target)
    if withheld.size == 0:
        return target
    after_revoke = target.copy()
    after_revoke[withheld] = -1
    follow_up = general_assign(problem, after_revoke, racks)
    still = after_revoke >= 0
    if np.array_equal(follow_up[still], after_revoke[still]) and _sizes_score(
        follow_up, problem.n_members
    ) <= _sizes_score(target, problem.n_members):
        return target  # the follow-up round moves nothing kept: it completes, as balanced
    return general_assign(problem, kept, racks, fewest_moves=False)


def _sizes_score(owner: IntArray, n_members: int) -> int:
    """KIP-54 balance score of an owner array (sum over member pairs of their size difference)."""
    sizes = np.sort(np.bincount(owner[owner >= 0], minlength=n_members))
    return int((sizes * (2 * np.arange(n_members, dtype=np.int64) - n_members + 1)).sum())


def _withheld(claims: Claims, owner: IntArray) -> IntArray:
    """Partitions the target gives to someone other than their current owner (to revoke first).

    The current owner of a partition is its claimant of the highest generation (KIP-341), whether or
    not it still subscribes to the topic; claims from older generations are stale and never cause a
    revocation. When several members claim a partition in the highest generation (a zombie), it is
    withheld whenever any of them is not its target owner: none of them can be trusted to have let
    it go.
    """
    gid, member, generation = claims.gid, claims.member, claims.generation
    if claims.distinct:  # each claim is its partition's only one, so of the highest generation
        return np.unique(gid[owner[gid] != member])
    top = np.full(owner.size, np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(top, gid, generation)
    current = generation == top[gid]
    foreign = current & (owner[gid] != member)
    return np.unique(gid[foreign])
