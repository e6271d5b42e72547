"""Owned-partition claims (KIP-341): who owned what before this rebalance, and who may keep it.

Every member's ``owned`` list is read once per problem into parallel integer arrays
(:mod:`.partition_objects`, in C when compiled); partitions that do not exist are dropped. The highest
generation wins a partition; a tie in that generation leaves it free, as in Java.
"""

from __future__ import annotations

import numpy as np

from kafka_placement.assignment.sticky.partition_objects import read_claims
from kafka_placement.assignment.sticky.problem import Claims, IntArray, Problem

_EMPTY = np.empty(0, dtype=np.int64)


def collect_claims(problem: Problem) -> Claims:
    """Every member's claims that name an existing partition (computed once per problem); the claimed
    partitions' objects are kept in ``problem.objects`` to be handed out again."""
    if problem.claims is not None:
        return problem.claims
    n = problem.n_partitions
    if not any(member.owned for member in problem.members) or not problem.topics:
        problem.claims = Claims(_EMPTY, _EMPTY, _EMPTY, _EMPTY)
        return problem.claims
    objects: list[object] = [None] * n
    known = np.zeros(n, dtype=np.bool_)
    gid, topic, per_member = read_claims(
        [member.owned for member in problem.members], problem.topic_index, problem.offsets, objects, known
    )
    if gid.size == 0:
        problem.claims = Claims(_EMPTY, _EMPTY, _EMPTY, _EMPTY)
        return problem.claims
    problem.objects, problem.objects_known = objects, known  # type: ignore[assignment]
    # Member allows any int as generation: clamp to int64
    generations = np.fromiter(
        (min(max(member.generation, -(2**62)), 2**62) for member in problem.members),
        dtype=np.int64,
        count=problem.n_members,
    )
    problem.claims = Claims(
        gid,
        topic,
        np.repeat(np.arange(problem.n_members, dtype=np.int64), per_member),
        np.repeat(generations, per_member),
        distinct=int(np.count_nonzero(known)) == gid.size,  # as many partitions claimed as claims
    )
    return problem.claims


def resolve_claims(problem: Problem, claims: Claims) -> IntArray:
    """The previous owner each partition may keep (KIP-341), as an owner array (-1 = none).

    Among the claims on one partition the highest generation wins; when two members claim it in the
    same highest generation neither keeps it (Kafka 3.x logs "Found multiple consumers ... claiming
    the same TopicPartition ... in the same generation" and invalidates both). The winner keeps it
    only while it still subscribes to the partition's topic (as Java: the claim of a member that
    unsubscribed still beats older ones, then the partition is free). A member listing a partition
    twice claims it once.
    """
    if claims.gid.size == 0:
        return np.full(problem.n_partitions, -1, dtype=np.int64)
    owner = claim_winners(problem, claims)
    if problem.subscribed.all():
        return owner  # every member subscribes to every topic: no claim lapses
    if claims.distinct:  # every claim won: its own topic number says whether it lapsed
        lapsed = ~problem.subscribed[claims.member, claims.topic]
        owner[claims.gid[lapsed]] = -1
        return owner
    won = np.flatnonzero(owner >= 0)
    lapsed = ~problem.subscribed[owner[won], problem.topic_of(won)]
    owner[won[lapsed]] = -1
    return owner


def claim_winners(problem: Problem, claims: Claims) -> IntArray:
    """Each partition's previous owner: its claimant of the highest generation, whether or not it
    still subscribes (-1: none, or a tie in that generation)."""
    if claims.distinct:
        owner = np.full(problem.n_partitions, -1, dtype=np.int64)
        owner[claims.gid] = claims.member
        return owner
    return _claim_winners(problem, claims.gid, claims.member, claims.generation)


def _claim_winners(problem: Problem, gid: IntArray, mem: IntArray, gen: IntArray) -> IntArray:
    """The highest-generation claimant of each partition (-1: none, or a tie in that generation)."""
    owner = np.full(problem.n_partitions, -1, dtype=np.int64)
    per_partition = np.bincount(gid, minlength=problem.n_partitions)
    single = per_partition[gid] == 1
    owner[gid[single]] = mem[single]  # the common case: one claim, nothing to resolve
    if single.all():
        return owner
    gid, mem, gen = gid[~single], mem[~single], gen[~single]
    order = np.lexsort((mem, -gen, gid))
    gid, mem, gen = gid[order], mem[order], gen[order]
    distinct = np.ones(gid.size, dtype=np.bool_)  # drop a member's repeated claims
    distinct[1:] = (gid[1:] != gid[:-1]) | (mem[1:] != mem[:-1])
    gid, mem, gen = gid[distinct], mem[distinct], gen[distinct]
    first = np.ones(gid.size, dtype=np.bool_)
    first[1:] = gid[1:] != gid[:-1]
    pos = np.flatnonzero(first)
    tied = np.zeros(pos.size, dtype=np.bool_)
    nxt = pos + 1
    has_next = nxt < gid.size
    tied[has_next] = (gid[nxt[has_next]] == gid[pos[has_next]]) & (gen[nxt[has_next]] == gen[pos[has_next]])
    win = pos[~tied]
    owner[gid[win]] = mem[win]
    return owner
