"""Owned-partition claims (KIP-341): who owned what before this rebalance, and who may keep it.

Every member's ``owned`` list is read once per problem into parallel integer arrays; partitions
that do not exist are dropped. The highest generation wins a partition; a tie in that generation
leaves it free, as in Java.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat

import numpy as np

from kafka_placement.assignment.sticky.problem import IntArray, ObjectArray, Problem
from kafka_placement.vocabulary import TopicPartition


@dataclass
class Claims:
    """Every owned-partition claim that names an existing partition, as parallel arrays."""

    gid: IntArray
    topic: IntArray
    member: IntArray
    generation: IntArray


_EMPTY = np.empty(0, dtype=np.int64)


def _claim_ids(
    problem: Problem, owned: Sequence[TopicPartition]
) -> tuple[IntArray, IntArray, ObjectArray | None]:
    """(global ids, topic numbers, the TopicPartition objects) of the claimed partitions that exist;
    the rest is dropped."""
    if not owned or not problem.topics:
        return _EMPTY, _EMPTY, None
    topics_col, parts_col = zip(*owned, strict=True)
    n = len(owned)
    tix = np.fromiter(map(problem.topic_index.get, topics_col, repeat(-1)), dtype=np.int64, count=n)
    try:
        parts = np.fromiter(parts_col, dtype=np.int64, count=n)
    except OverflowError:  # hostile partition numbers beyond int64: they name no partition
        parts = np.fromiter((p if -(2**62) < p < 2**62 else -1 for p in parts_col), dtype=np.int64, count=n)
    objects = np.fromiter(owned, dtype=object, count=n)
    safe_t = np.where(tix >= 0, tix, 0)
    ok = (tix >= 0) & (parts >= 0) & (parts < problem.counts[safe_t])
    if ok.all():
        return problem.offsets[tix] + parts, tix, objects
    return problem.offsets[tix[ok]] + parts[ok], tix[ok], objects[ok]


def collect_claims(problem: Problem) -> Claims:
    """Every member's claims that name an existing partition (computed once per problem)."""
    if problem.claims is not None:
        return problem.claims
    gid_parts: list[IntArray] = []
    top_parts: list[IntArray] = []
    mem_parts: list[IntArray] = []
    gen_parts: list[IntArray] = []
    for i, member in enumerate(problem.members):
        gids, tix, objects = _claim_ids(problem, member.owned)
        if gids.size:
            gid_parts.append(gids)
            top_parts.append(tix)
            mem_parts.append(np.full(gids.size, i, dtype=np.int64))
            generation = min(max(member.generation, -(2**62)), 2**62)  # Member allows any int
            gen_parts.append(np.full(gids.size, generation, dtype=np.int64))
            if problem.objects is None or problem.objects_known is None:
                problem.objects = np.full(problem.n_partitions, None, dtype=object)
                problem.objects_known = np.zeros(problem.n_partitions, dtype=np.bool_)
            problem.objects[gids] = objects
            problem.objects_known[gids] = True
    if not gid_parts:
        problem.claims = Claims(_EMPTY, _EMPTY, _EMPTY, _EMPTY)
    else:
        problem.claims = Claims(
            np.concatenate(gid_parts),
            np.concatenate(top_parts),
            np.concatenate(mem_parts),
            np.concatenate(gen_parts),
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
    owner = np.full(problem.n_partitions, -1, dtype=np.int64)
    if claims.gid.size == 0:
        return owner
    owner = _claim_winners(problem, claims.gid, claims.member, claims.generation)
    won = np.flatnonzero(owner >= 0)
    lapsed = ~problem.subscribed[owner[won], problem.topic_of(won)]
    owner[won[lapsed]] = -1
    return owner


def claim_winners(problem: Problem, claims: Claims) -> IntArray:
    """Each partition's previous owner: its claimant of the highest generation, whether or not it
    still subscribes (-1: none, or a tie in that generation)."""
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
