"""Shared machinery of the sticky assignors: integer ids, racks, output lists, the owned-partition
claims as arrays (read and resolved in :mod:`~kafka_placement.assignment.sticky.claims`).

Everything the sticky and cooperative-sticky assignors compute runs on integer ids:

* members are numbered ``0..M-1`` in member-id order (Java ``String`` order, UTF-16 code units);
* the topics that exist (``partitions_per_topic``), have partitions and are subscribed by some member
  are numbered ``0..T-1`` in name order (Java ``String`` order); partition ``p`` of topic ``t`` has
  the global id ``offsets[t] + p``, so global ids ascend in ``(topic, partition)`` order;
* an assignment is one ``owner`` array (global id -> member number, ``-1`` = nobody).

Only at the very end are ``TopicPartition`` objects handed out, taken from a per-topic cache so
that a group leader assigning the same topics again does not rebuild a million tuples.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from itertools import repeat
from typing import Any

import numpy as np
import numpy.typing as npt

from kafka_placement.assignment.inputs import check_members, check_partitions_per_topic
from kafka_placement.assignment.rack import consumer_rack
from kafka_placement.assignment.sticky.partition_objects import hand_out
from kafka_placement.errors import InvalidArgumentError
from kafka_placement.java import java_sorted
from kafka_placement.vocabulary import Member, TopicPartition

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
ObjectArray = npt.NDArray[np.object_]


# --- garbage collector ---------------------------------------------------------------------------
@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while we allocate up to millions of tuples.

    Nothing we allocate can form a reference cycle (tuples of str/int, lists, numpy arrays), but with
    millions of live objects around (say the caller's ``partition_racks``) each automatic collection
    walks all of them: building 1M TopicPartitions went from 0.2 s to 15 s in such a process.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# --- TopicPartition cache ------------------------------------------------------------------------
_MAKE_TP = partial(tuple.__new__, TopicPartition)
_TP_CACHE: dict[str, list[TopicPartition]] = {}
_TP_CACHE_LIMIT = 4_000_000  # entries; beyond this the cache starts over (bounded memory)
_tp_cache_size = 0
_INTS: list[int] = []


def partitions_of_topic(topic: str, count: int) -> list[TopicPartition]:
    """``[TopicPartition(topic, 0), ..., TopicPartition(topic, count - 1)]`` from the cache."""
    global _tp_cache_size
    cached = _TP_CACHE.get(topic)
    if cached is None or len(cached) < count:
        if _tp_cache_size + count > _TP_CACHE_LIMIT:
            _TP_CACHE.clear()
            _tp_cache_size = 0
        old = 0 if cached is None else len(cached)
        if len(_INTS) < count:  # one int object per partition number, shared by every topic
            _INTS.extend(range(len(_INTS), count))
        cached = list(map(_MAKE_TP, zip(repeat(topic, count), _INTS[:count], strict=False)))
        _TP_CACHE[topic] = cached
        _tp_cache_size += count - old
    return cached if len(cached) == count else cached[:count]


# --- validation ----------------------------------------------------------------------------------
def validate_inputs(
    partitions_per_topic: Mapping[str, int],
    members: Mapping[str, Member],
) -> None:
    """Typed errors for inputs no assignor can work with (names the bad value and the allowed range):
    the checks every strategy shares (:mod:`kafka_placement.assignment.inputs`), for callers of the
    sticky functions themselves."""
    check_partitions_per_topic(partitions_per_topic)
    check_members(members)


# --- the integer view of one assignment problem ----------------------------------------------------
@dataclass
class Claims:
    """Every owned-partition claim that names an existing partition, as parallel arrays (read and
    resolved by :mod:`~kafka_placement.assignment.sticky.claims`; kept on the :class:`Problem`, read once)."""

    gid: IntArray
    topic: IntArray
    member: IntArray
    generation: IntArray
    # no partition claimed twice (the usual group): each claim is its partition's only one, nothing to
    # resolve between claimants
    distinct: bool = True


@dataclass
class Problem:
    member_ids: list[str]
    members: list[Member]
    topics: list[str]
    topic_index: dict[str, int]
    counts: IntArray  # partitions per topic (T,)
    offsets: IntArray  # (T + 1,) global id of each topic's partition 0, then the total
    subscribed: BoolArray  # (M, T)
    equal_subscriptions: bool
    # the members' own TopicPartition objects for claimed partitions (reused in the output, so a
    # rebalance of a million owned partitions does not build a million new tuples); None = not seen
    # each member's position in the caller's mapping (Java's HashMap keeps insertion order within a
    # bucket; the group leader's member order is the JoinGroup response's, on both sides)
    arrival: list[int] | None = None
    objects: list[TopicPartition | None] | None = None
    objects_known: BoolArray | None = None
    claims: Claims | None = None

    @property
    def n_partitions(self) -> int:
        return int(self.offsets[-1])

    @property
    def n_members(self) -> int:
        return len(self.member_ids)

    def topic_of(self, gids: IntArray) -> IntArray:
        return np.searchsorted(self.offsets, gids, side="right").astype(np.int64) - 1


def build_problem(partitions_per_topic: Mapping[str, int], members: Mapping[str, Member]) -> Problem:
    member_ids = java_sorted(members)
    member_list = [members[m] for m in member_ids]
    # members mostly share a handful of subscriptions: the work below is per distinct subscription
    # (Member keeps its topics sorted and unique, so equal sets are equal tuples)
    rows_by_topics: dict[tuple[str, ...], list[int]] = {}
    last_topics: tuple[str, ...] | None = None
    last_rows: list[int] = []
    for i, member in enumerate(member_list):
        # equal subscriptions are mostly one shared tuple (Member shares them): an identity check per
        # member instead of hashing a long subscription for the dict
        if member.topics is not last_topics and member.topics != last_topics:
            last_topics = member.topics
            last_rows = rows_by_topics.setdefault(last_topics, [])
        last_rows.append(i)
    wanted: set[str] = set().union(*rows_by_topics)
    topics = java_sorted(t for t in wanted if partitions_per_topic.get(t, 0) > 0)
    topic_index = {t: i for i, t in enumerate(topics)}
    counts = np.fromiter((partitions_per_topic[t] for t in topics), dtype=np.int64, count=len(topics))
    offsets = np.zeros(len(topics) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    subscribed = np.zeros((len(member_ids), len(topics)), dtype=np.bool_)
    for subscription, rows in rows_by_topics.items():
        row = np.zeros(len(topics), dtype=np.bool_)
        row[[topic_index[t] for t in subscription if t in topic_index]] = True
        subscribed[np.asarray(rows, dtype=np.int64)] = row  # one row broadcast to the group's members
    # Java compares the subscriptions themselves, topics without metadata included
    # (allSubscriptionsEqual): {t, gone} and {t} take the general path there too
    equal = len(rows_by_topics) <= 1
    position = {m: i for i, m in enumerate(members)}
    arrival = [position[m] for m in member_ids]
    return Problem(member_ids, member_list, topics, topic_index, counts, offsets, subscribed, equal, arrival)


# --- racks --------------------------------------------------------------------------------------------
@dataclass
class RackView:
    """Which partitions have a replica in which member rack (KIP-881), only for racks members carry."""

    member_rack: list[str | None]
    # rack -> ascending member numbers of the members in that rack
    members_in_rack: dict[str, IntArray]
    # (N,) bool per rack, same keys
    mask_in_rack: dict[str, BoolArray]

    def matches(self, member: int, gids: IntArray) -> BoolArray:
        rack = self.member_rack[member]
        if rack is None or rack not in self.mask_in_rack:
            return np.zeros(gids.size, dtype=np.bool_)
        return self.mask_in_rack[rack][gids]


def build_racks(
    problem: Problem, partition_racks: Mapping[TopicPartition, Iterable[str]] | None
) -> RackView | None:
    """A rack view when rack-aware assignment can change something, else ``None``.

    Java's condition (``useRackAwareAssignment``): some member has a rack (``client.rack``; empty
    counts as none), some replica of the subscribed partitions lives in one of those racks, and not
    every subscribed partition has the same set of replica racks.
    """
    if not partition_racks:
        return None
    member_rack = [consumer_rack(m) for m in problem.members]
    racks = {r for r in member_rack if r is not None}
    if not racks:
        return None
    n = problem.n_partitions
    keys = list(partition_racks)
    if not set(map(type, keys)) <= {TopicPartition}:  # the usual keys pass this in C
        for key in keys:
            if not isinstance(key, tuple) or len(key) != 2 or not isinstance(key[0], str):
                raise InvalidArgumentError(f"partition_racks keys must be TopicPartition, got {key!r}")
    try:
        topics_col, parts_col = zip(*keys, strict=True) if keys else ((), ())
    except (TypeError, ValueError):
        topics_col = parts_col = ()
    if len(topics_col) != len(keys):
        bad = next(k for k in keys if not isinstance(k, tuple) or len(k) != 2)
        raise InvalidArgumentError(f"partition_racks keys must be TopicPartition, got {bad!r}")
    group_of: dict[frozenset[str], int] = {}

    def group(tp: TopicPartition, value: Iterable[str]) -> int:
        if type(value) is not frozenset:
            if isinstance(value, str):
                raise InvalidArgumentError(
                    f"partition_racks[{tp!r}] must be a set of rack names, not the single string {value!r}"
                )
            value = frozenset(value)
        return group_of.setdefault(value, len(group_of))

    count = len(keys)
    values = list(partition_racks.values())
    try:  # frozensets (what the adapters pass): group them in C
        distinct: set[Any] = set(values)
        if any(isinstance(v, str) for v in distinct):
            raise TypeError
        index: dict[Any, int] = {}
        for v in sorted(distinct, key=sorted):  # a handful of distinct replica-rack sets
            index[v] = group_of.setdefault(frozenset(v), len(group_of))
        groups = np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=count)
    except TypeError:  # sets, lists, or a bad value: one by one
        group_of = {}
        groups = np.fromiter(map(group, keys, values), dtype=np.int64, count=count)
    tix = np.fromiter(map(problem.topic_index.get, topics_col, repeat(-1)), dtype=np.int64, count=count)
    try:
        parts = np.fromiter(parts_col, dtype=np.int64, count=count)
    except (TypeError, ValueError, OverflowError):
        parts = np.fromiter(
            (p if isinstance(p, int) and -(2**62) < p < 2**62 else -1 for p in parts_col),
            dtype=np.int64,
            count=count,
        )
    safe_t = np.where(tix >= 0, tix, 0)
    ok = (tix >= 0) & (parts >= 0) & (parts < (problem.counts[safe_t] if problem.topics else 0))
    gids, groups = problem.offsets[safe_t[ok]] + parts[ok], groups[ok]
    known = np.zeros(n, dtype=np.bool_)
    known[gids] = True
    rack_sets = {s for s, k in group_of.items() if k in set(np.unique(groups).tolist())}
    if not known.all():
        rack_sets.add(frozenset())  # a partition without rack information
    union = frozenset().union(*rack_sets)
    if racks.isdisjoint(union) or len(rack_sets) <= 1:
        return None
    masks: dict[str, BoolArray] = {}
    for r in racks:
        has_r = np.fromiter((r in s for s in group_of), dtype=np.bool_, count=len(group_of))
        mask = np.zeros(n, dtype=np.bool_)
        mask[gids[has_r[groups]]] = True
        masks[r] = mask
    members_in_rack = {
        r: np.asarray([i for i, mr in enumerate(member_rack) if mr == r], dtype=np.int64) for r in masks
    }
    return RackView(member_rack, members_in_rack, masks)


def round_robin_deal(
    free: IntArray, takers: IntArray, needs: IntArray, levels: IntArray | None = None
) -> IntArray:
    """Owner of each ``free`` partition when dealt round robin over ``takers`` up to ``needs`` each.

    Round ``r`` gives one partition to every taker that still needs more than ``r``, in taker order —
    what a circular iterator over the unfilled members does, without the Python loop. With
    ``levels`` (the takers' current sizes) the next partition always goes to the smallest taker,
    ties to the earlier one — Java's "consumer with the fewest partitions" (a sorted set by size,
    then member id) — as one sort instead of a heap.
    """
    total = int(needs.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    if total == takers.size and bool((needs == 1).all()):  # one each: by level alone, ties in taker order
        if levels is None:
            return takers[: free.size]
        return takers[np.argsort(levels, kind="stable")][: free.size]
    slot_member = np.repeat(takers, needs)
    starts = np.repeat(np.cumsum(needs) - needs, needs)
    slot_round = np.arange(total, dtype=np.int64) - starts
    if levels is not None:
        slot_round += np.repeat(levels, needs)
    order = np.lexsort((np.repeat(np.arange(takers.size), needs), slot_round))
    return slot_member[order][: free.size]


# --- output -----------------------------------------------------------------------------------------
Assignment = dict[str, list[TopicPartition]]


def in_python_order(problem: Problem, result: Assignment) -> Assignment:
    """``result`` with each list sorted as Python sorts TopicPartitions. Lists built in global-id order
    are sorted in *Java* ``String`` order of the topics, which differs from Python's (code points) only
    for topic names mixing supplementary characters with U+E000..U+FFFF: only then is anything sorted."""
    if list(problem.topics) == sorted(problem.topics):
        return result
    return {member_id: sorted(parts) for member_id, parts in result.items()}


def materialize(problem: Problem, owner: IntArray) -> dict[str, list[TopicPartition]]:
    """``{member_id: sorted TopicPartitions}`` for every member from an owner array."""
    objects: list[TopicPartition]
    if problem.objects is None or problem.objects_known is None:
        objects = []
        for topic, count in zip(problem.topics, problem.counts.tolist(), strict=True):
            objects.extend(partitions_of_topic(topic, count))
    else:
        objects = problem.objects  # type: ignore[assignment]
        missing = np.flatnonzero(~problem.objects_known)
        if missing.size:
            topic_idx = problem.topic_of(missing)
            names = np.asarray(problem.topics, dtype=object)[topic_idx].tolist()
            numbers = (missing - problem.offsets[topic_idx]).tolist()
            made = map(_MAKE_TP, zip(names, numbers, strict=True))
            for gid, tp in zip(missing.tolist(), made, strict=True):
                objects[gid] = tp
    hands = hand_out(owner, objects, problem.n_members)
    return in_python_order(problem, dict(zip(problem.member_ids, hands, strict=True)))
