"""Java's ``GeneralAssignmentBuilder`` (unequal subscriptions), replayed step by step on small groups.

Our general path (:mod:`.general`) balances on a members × topics count matrix and usually does at
least as well as Java, but not always: the two stop at different KIP-54 balanced points. For groups
small enough to replay Java's per-partition algorithm cheaply, :mod:`.assignor` runs this replay too
and keeps ours only when it is at least as good on every count (balance score, partitions moved,
partitions off their consumer's rack) and strictly better on one; otherwise Java's own result — so
ours is never worse than Java's where Java's is valid, and equal to it (exactly, fresh or not) unless
strictly better. Java's algorithm, as in Kafka 3.5+ (KIP-881 racks included):

1. claims (``allSubscriptionsEqual``): members in ``HashMap`` order of their ids; a partition claimed
   in the same generation by two members is voided, a higher generation takes it over; owned
   partitions of topics nobody subscribes to with metadata are dropped; the previous generation's
   owners (``prevAssignment``) are remembered;
2. owned partitions stay, unless the owner no longer subscribes to the topic or (racks) no replica
   lives in its rack — those are freed ("revocation required");
3. the free partitions, topics with the fewest potential consumers first (then by name), each go to
   the member with the fewest partitions (then member id) that subscribes to the topic — with racks
   first only rack-local members, then anyone;
4. reassignment passes (first over the newly assigned partitions when nothing had to be revoked,
   then over all) until balanced: a partition goes back to its previous-generation owner when its
   holder has two more, else to the least loaded subscriber when some subscriber (first a rack-local
   one) has two fewer; a move that undoes an earlier one moves that earlier partition back instead
   (``PartitionMovements``, whose ``HashSet<TopicPartition>`` order is Java's);
5. unless the group started empty, the passes are reverted when the balance score did not improve.

Java's result can be invalid (a partition handed to a previous owner that no longer subscribes to
its topic) or Java can throw; the caller checks and falls back to ours.
"""

from __future__ import annotations

import numpy as np

from kafka_placement.assignment.sticky.problem import IntArray, Problem, RackView
from kafka_placement.java import hashmap_spread, java_hashmap_order, java_string_hash_unsigned, to_int32

#: Replay only while partitions × members stays below this (the replay is quadratic, in Python).
MAX_REPLAY_WORK = 40_000

_DEFAULT_GENERATION = -1


class ReplayFailed(Exception):
    """Java would throw here (a NullPointerException or an assertion in its own code)."""


class _JavaHashSet:
    """Iteration order of a ``HashSet<TopicPartition>`` under adds and removes (first element only)."""

    __slots__ = ("capacity", "items", "seq")

    def __init__(self) -> None:
        self.capacity = 16
        self.items: dict[int, tuple[int, int]] = {}  # gid -> (spread hash, insertion sequence)
        self.seq = 0

    def add(self, gid: int, spread: int) -> None:
        if gid in self.items:
            return
        self.items[gid] = (spread, self.seq)
        self.seq += 1
        if len(self.items) > self.capacity * 3 // 4:
            self.capacity *= 2

    def remove(self, gid: int) -> None:
        self.items.pop(gid, None)

    def first(self) -> int:
        mask = self.capacity - 1
        return min(self.items, key=lambda g: (self.items[g][0] & mask, self.items[g][1]))


class _Replay:
    def __init__(self, problem: Problem, racks: RackView | None) -> None:
        self.p = problem
        m, t_count = problem.n_members, len(problem.topics)
        self.m = m
        self.topic_of_gid = problem.topic_of(np.arange(problem.n_partitions, dtype=np.int64)).tolist()
        self.sub = problem.subscribed
        self.subs_list = [np.flatnonzero(problem.subscribed[i]).tolist() for i in range(m)]
        self.potential = [np.flatnonzero(problem.subscribed[:, t]).tolist() for t in range(t_count)]
        counts = problem.counts.tolist()
        total = int(problem.offsets[-1])
        self.max_size = [
            total if len(self.subs_list[i]) == t_count else sum(counts[t] for t in self.subs_list[i])
            for i in range(m)
        ]
        self.racks = racks
        self.member_rack = racks.member_rack if racks is not None else [None] * m
        self.rack_masks = racks.mask_in_rack if racks is not None else {}
        names = problem.topics
        self.tp_spread = [
            hashmap_spread(
                to_int32(31 * (31 + (g - int(problem.offsets[t]))) + java_string_hash_unsigned(names[t]))
            )
            for g, t in enumerate(self.topic_of_gid)
        ]

    # -- racks ------------------------------------------------------------------------------------
    def local(self, member: int, gid: int) -> bool:
        rack = self.member_rack[member]
        mask = self.rack_masks.get(rack) if rack is not None else None
        return mask is not None and bool(mask[gid])

    def mismatch(self, member: int, gid: int) -> bool:
        return self.member_rack[member] is not None and not self.local(member, gid)

    # -- the run ----------------------------------------------------------------------------------
    def run(self) -> IntArray:
        p = self.p
        m = self.m
        n = p.n_partitions
        order = java_hashmap_order(p.member_ids, p.arrival)
        owned: list[list[int]] = [[] for _ in range(m)]
        claimed_by: dict[int, int] = {}
        max_generation = _DEFAULT_GENERATION
        # a member sends its generation only when it knows one (>= 0); otherwise Java's DEFAULT_GENERATION
        has_generation = [member.generation >= 0 for member in p.members]
        generation = [
            member.generation if member.generation >= 0 else _DEFAULT_GENERATION for member in p.members
        ]
        claims: list[list[int]] = []
        for i in range(m):
            gids: list[int] = []
            for tp in p.members[i].owned:
                t = p.topic_index.get(tp.topic)
                if t is not None and isinstance(tp.partition, int) and 0 <= tp.partition < int(p.counts[t]):
                    gids.append(int(p.offsets[t]) + tp.partition)
                elif t is not None:
                    raise ReplayFailed("claim of a partition that does not exist")
            claims.append(gids)
        for i in order:
            gen = generation[i]
            max_generation = max(max_generation, gen)
            for g in claims[i]:
                other = claimed_by.get(g)
                if other is None:
                    owned[i].append(g)
                    claimed_by[g] = i
                elif gen == generation[other]:
                    if g in owned[other]:
                        owned[other].remove(g)
                    claimed_by[g] = i
                elif gen > generation[other]:
                    owned[i].append(g)
                    if g in owned[other]:
                        owned[other].remove(g)
                    claimed_by[g] = i
        # prevAssignment: claims of members below the highest generation, the newest kept
        prev: dict[int, tuple[int, int]] = {}
        for i in order:
            if has_generation[i] and generation[i] < max_generation:
                use = generation[i]
            elif not has_generation[i] and max_generation > _DEFAULT_GENERATION:
                use = _DEFAULT_GENERATION
            else:
                continue
            for g in claims[i]:
                if g not in prev or use > prev[g][1]:
                    prev[g] = (i, use)
        owner = np.full(n, -1, dtype=np.int64)
        size = [0] * m
        self.revocation_required = False
        for i in range(m):
            for g in owned[i]:
                if not self.sub[i, self.topic_of_gid[g]] or self.mismatch(i, g):
                    self.revocation_required = True
                    continue
                owner[g] = i
                size[i] += 1
        self.owner, self.size = owner, size
        t_count = len(p.topics)
        topic_order = sorted(range(t_count), key=lambda t: (len(self.potential[t]), t))
        all_sorted = [g for t in topic_order for g in range(int(p.offsets[t]), int(p.offsets[t + 1]))]
        unassigned = [g for g in all_sorted if owner[g] < 0]
        initializing = max(size) == 0
        if self.racks is not None:
            rest = [g for g in unassigned if not self._assign_least_loaded(g, racks=True)]
        else:
            rest = unassigned
        for g in rest:
            self._assign_least_loaded(g, racks=False)
        fixed_topics = {t for t in range(t_count) if len(self.potential[t]) < 2}
        all_sorted = [g for g in all_sorted if self.topic_of_gid[g] not in fixed_topics]
        unassigned = [g for g in unassigned if self.topic_of_gid[g] not in fixed_topics]
        self.active = [self._participates(i, fixed_topics) for i in range(m)]
        self.active_mask = np.asarray(self.active, dtype=np.bool_)
        self.balanced_cache: bool | None = None
        self.max_size_array = np.asarray(self.max_size, dtype=np.int64)
        held = owner >= 0
        self.held = np.zeros((m, t_count), dtype=np.int64)
        np.add.at(self.held, (owner[held], np.asarray(self.topic_of_gid, dtype=np.int64)[held]), 1)
        before = owner.copy()
        before_sizes = list(size)
        self.movements: dict[int, tuple[int, int]] = {}
        self.by_topic: dict[int, dict[tuple[int, int], _JavaHashSet]] = {}
        self.prev = prev
        if not self.revocation_required:
            self._reassign(unassigned)
        performed = self._reassign(all_sorted)
        if not initializing and performed and self._score(self.size) >= self._score(before_sizes):
            return before
        return self.owner

    def _participates(self, i: int, fixed_topics: set[int]) -> bool:
        if self.size[i] < self.max_size[i]:
            return True
        held = np.flatnonzero(self.owner == i)
        return any(self.topic_of_gid[g] not in fixed_topics for g in held.tolist())

    def _score(self, sizes: list[int]) -> int:
        active = sorted(s for s, a in zip(sizes, self.active, strict=True) if a)
        total = prefix = 0
        for k, s in enumerate(active):
            total += k * s - prefix
            prefix += s
        return total

    def _least_loaded(self, candidates: list[int]) -> int:
        return min(candidates, key=lambda i: (self.size[i], i))

    def _assign_least_loaded(self, g: int, *, racks: bool) -> bool:
        t = self.topic_of_gid[g]
        takers = [i for i in self.potential[t] if not racks or not self.mismatch(i, g)]
        if not takers:
            return False
        i = self._least_loaded(takers)
        self.owner[g] = i
        self.size[i] += 1
        return True

    def _balanced(self) -> bool:
        """Java's ``isBalanced``: sizes within one, or no active member short of its maximum could
        take a partition of one of its topics from a holder with two or more partitions more.
        Cached until the next move (most partitions of a pass move nothing)."""
        if self.balanced_cache is not None:
            return self.balanced_cache
        self.balanced_cache = self._compute_balanced()
        return self.balanced_cache

    def _compute_balanced(self) -> bool:
        sizes = [s for s, a in zip(self.size, self.active, strict=True) if a]
        if not sizes or min(sizes) >= max(sizes) - 1:
            return True
        size = np.asarray(self.size, dtype=np.int64)
        active = self.active_mask
        top = np.where((self.held > 0) & active[:, None], size[:, None], -1).max(axis=0)
        short = active & (size < self.max_size_array)
        return not bool((self.sub[short] & (top[None, :] > size[short, None] + 1)).any())

    def _reassign(self, partitions: list[int]) -> bool:
        performed = False
        modified = True
        while modified:
            modified = False
            for g in partitions:
                if self._balanced():
                    break
                holder = int(self.owner[g])
                if holder < 0:
                    raise ReplayFailed("unassigned partition in the reassignment pass")
                previous = self.prev.get(g)
                if previous is not None:
                    if not self.active[previous[0]]:
                        raise ReplayFailed("previous owner not in the current assignment")
                    if self.size[holder] > self.size[previous[0]] + 1:
                        self._move(g, previous[0])
                        performed = modified = True
                        continue
                t = self.topic_of_gid[g]
                takers = [i for i in self.potential[t] if self.active[i]]
                if len(takers) < len(self.potential[t]):
                    raise ReplayFailed("a potential consumer left the current assignment")
                found = False
                if self.member_rack[holder] is not None and self.local(holder, g):
                    for other in takers:
                        if self.local(other, g) and self.size[holder] > self.size[other] + 1:
                            self._move(g, self._least_loaded(takers))
                            performed = modified = found = True
                            break
                if not found:
                    for other in takers:
                        if self.size[holder] > self.size[other] + 1:
                            self._move(g, self._least_loaded(takers))
                            performed = modified = True
                            break
        return performed

    def _move(self, g: int, new: int) -> None:
        old = int(self.owner[g])
        actual = self._actual_partition(g, old, new)
        self._process(actual, new)

    def _actual_partition(self, g: int, old: int, new: int) -> int:
        t = self.topic_of_gid[g]
        per_topic = self.by_topic.get(t)
        if not per_topic:
            return g
        if g in self.movements:
            old = self.movements[g][0]
        reverse = per_topic.get((new, old))
        if reverse is None or not reverse.items:
            return g
        return reverse.first()

    def _process(self, g: int, new: int) -> None:
        old = int(self.owner[g])
        if g in self.movements:
            src, _dst = self._remove_record(g)
            if src != new:
                self._add_record(g, (src, new))
        else:
            self._add_record(g, (old, new))
        self.balanced_cache = None
        self.owner[g] = new
        self.size[old] -= 1
        self.size[new] += 1
        t = self.topic_of_gid[g]
        self.held[old, t] -= 1
        self.held[new, t] += 1

    def _remove_record(self, g: int) -> tuple[int, int]:
        pair = self.movements.pop(g)
        t = self.topic_of_gid[g]
        per_topic = self.by_topic[t]
        per_topic[pair].remove(g)
        if not per_topic[pair].items:
            del per_topic[pair]
        if not per_topic:
            del self.by_topic[t]
        return pair

    def _add_record(self, g: int, pair: tuple[int, int]) -> None:
        self.movements[g] = pair
        per_topic = self.by_topic.setdefault(self.topic_of_gid[g], {})
        per_topic.setdefault(pair, _JavaHashSet()).add(g, self.tp_spread[g])


def java_general_owner_array(problem: Problem, racks: RackView | None) -> IntArray | None:
    """Java's general-builder result as an owner array, or ``None`` when the group is too large to
    replay or Java would throw."""
    if problem.n_partitions * max(problem.n_members, 1) > MAX_REPLAY_WORK:
        return None
    try:
        return _Replay(problem, racks).run()
    except ReplayFailed:
        return None
