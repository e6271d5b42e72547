"""Minimal-movement reassignment plans: reach the balanced goals moving as few replicas as possible.

Given the current assignment and the target broker set (brokers added, removed, racks relabelled),
each topic is planned on its own (as Kafka places topics), or with ``scope="cluster"`` all
partitions of one replication factor together:

1. **Quotas** — :func:`~.quotas.replica_quotas` on the target brokers, the free ``+1``s given to
   the brokers that already hold the most replicas (fewest additions).
2. **Keep** — every replica on a surviving broker stays unless rack diversity forbids it (two
   replicas in one rack while ``rf <= R``; a rack left uncovered while ``rf >= R``; a rack whose
   quota equals the partition count must appear in every partition); among competitors the one
   on the broker furthest above quota goes.
3. **Rack-first (``rf <= R``)** — rack totals are fixed first: a partition's replica moves to a
   rack it lacks, along the shortest chain of racks, taking unfilled slots first, then replicas of
   above-quota brokers that do not lead. Inside a rack any broker fits any slot (one replica per
   rack), so brokers above quota free slots (not where they lead, not in partitions another rack
   already changed) and brokers below quota take them — never more moves than the bound.
4. **Generic fill (``rf > R`` or no racks)** — open slots, then above-quota replicas, go straight to
   a broker below quota that fits; a slot nothing fits is solved by the cheapest chain found by a
   0-1 breadth-first search: re-routing replicas this plan added costs nothing, moving a kept one
   costs one move. If a quota still cannot be met, a fresh balanced placement matched to the
   current partitions is used instead (a warning says so; goals are met, moves are higher).
5. **Leaders** — current leaders stay where possible; then leadership moves along shortest
   alternating paths (:mod:`.leaders`) until every broker leads ``floor``–``ceil`` of ``P/N``.

Every plan reports the lower bounds it is measured against:

* replica additions ``>= max(A, B, C)``: ``A = sum_b max(0, quota_b - current_b)`` (equivalently
  the replicas above quota plus those on removed brokers), ``B = sum_p (rf - keepable_p)``
  (replicas a partition must replace for rack diversity, removed brokers or racks needed in every
  partition) and, for ``rf <= R``, ``C`` = :func:`rack_level_minimum` (the exact fewest additions
  that reach the racks' target totals);
* leader changes ``>=`` leaders on removed/dropped replicas plus leaders above ``ceil(P/N)``, and
  ``>=`` the leaders missing below ``floor(P/N)``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka_placement.errors import InvalidArgumentError, InvalidReplicationFactorError
from kafka_placement.replicas.leaders import balance_leaders
from kafka_placement.replicas.metrics import Moves, PlacementMetrics, count_moves, placement_metrics
from kafka_placement.replicas.quotas import RackLayout, leader_quotas, rack_layout, replica_quotas
from kafka_placement.vocabulary import Broker, TopicPartition


@dataclass(frozen=True)
class LowerBound:
    """What any plan reaching the goals must at least do."""

    replica_moves: int
    leader_changes: int
    over_quota: int
    """``A``: replicas that must land on brokers below quota (above-quota + removed-broker replicas)."""
    diversity: int
    """``B``: replicas partitions must replace for rack diversity / removed brokers."""
    rack_level: int = 0
    """``C``: additions any plan needs just to reach the racks' target totals (exact rack-level
    minimum, ``rf <= R``; 0 otherwise)."""

    def summary(self) -> dict[str, int]:
        return {
            "replica_moves": self.replica_moves,
            "leader_changes": self.leader_changes,
            "over_quota_and_removed": self.over_quota,
            "per_partition_replacements": self.diversity,
            "rack_level": self.rack_level,
        }


@dataclass(frozen=True)
class Plan:
    """A reassignment: the full target assignment, its cost, its bound and its resulting metrics."""

    current: dict[TopicPartition, list[int]]
    target: dict[TopicPartition, list[int]]
    moves: Moves
    lower_bound: LowerBound
    metrics: dict[str, PlacementMetrics] = field(repr=False)
    warnings: list[str] = field(default_factory=list)

    @property
    def changed(self) -> dict[TopicPartition, list[int]]:
        """Only the partitions whose replica list changes (what goes into the reassignment JSON)."""
        return {tp: r for tp, r in self.target.items() if r != self.current.get(tp)}

    def summary(self) -> dict[str, Any]:
        return {
            "partitions": len(self.target),
            "partitions_changed": len(self.changed),
            "moves": self.moves.summary(),
            "lower_bound": self.lower_bound.summary(),
            "replica_moves_vs_bound": (
                round(self.moves.replicas_added / self.lower_bound.replica_moves, 4)
                if self.lower_bound.replica_moves else (1.0 if self.moves.replicas_added == 0 else None)
            ),
            "topics": {t: m.summary() for t, m in sorted(self.metrics.items())},
            "warnings": list(self.warnings),
        }


Assignment = Mapping[TopicPartition, Sequence[int]] | Mapping[tuple[str, int], Sequence[int]]


def _as_assignment(current: Assignment) -> dict[TopicPartition, list[int]]:
    result: dict[TopicPartition, list[int]] = {}
    for key, replicas in current.items():
        if not (isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], str)
                and isinstance(key[1], int) and not isinstance(key[1], bool) and key[1] >= 0):
            raise InvalidArgumentError(
                f"partition key must be (topic: str, partition: int >= 0), got {key!r}"
            )
        reps = list(replicas)
        if not reps:
            raise InvalidArgumentError(f"partition {key[0]}-{key[1]} has an empty replica list")
        if len(set(reps)) != len(reps):
            raise InvalidArgumentError(f"partition {key[0]}-{key[1]} lists a broker twice: {reps}")
        for b in reps:
            if isinstance(b, bool) or not isinstance(b, int) or b < 0:
                raise InvalidArgumentError(
                    f"partition {key[0]}-{key[1]}: broker id must be an int >= 0, got {b!r}"
                )
        result[TopicPartition(key[0], key[1])] = reps
    return result


def plan_reassignment(
    current: Assignment,
    brokers: Iterable[Broker],
    *,
    sizes: Mapping[TopicPartition, int] | None = None,
    scope: str = "topic",
) -> Plan:
    """Plan moving ``current`` (``{(topic, partition): [replicas, leader first]}``) onto ``brokers``.

    ``scope="topic"`` (default) balances every topic on its own, as Kafka places topics;
    ``scope="cluster"`` balances all partitions of one replication factor together (many small
    topics: balancing each of them costs far more moves than balancing the brokers' totals).
    ``metrics`` are keyed by topic, or by ``"rf=N"`` groups for the cluster scope.
    """
    if scope not in ("topic", "cluster"):
        raise InvalidArgumentError(f"scope must be 'topic' or 'cluster', got {scope!r}")
    assignment = _as_assignment(current)
    broker_list = list(brokers)
    layout = rack_layout(broker_list)
    groups: dict[str, list[TopicPartition]] = {}
    for tp in sorted(assignment):
        key = tp.topic if scope == "topic" else f"rf={len(assignment[tp])}"
        groups.setdefault(key, []).append(tp)
    target: dict[TopicPartition, list[int]] = {}
    bound_moves = bound_leaders = bound_a = bound_b = bound_c = 0
    warnings: list[str] = []
    metrics: dict[str, PlacementMetrics] = {}
    for group, tps in groups.items():
        rfs = {len(assignment[tp]) for tp in tps}
        if len(rfs) != 1:
            raise InvalidArgumentError(
                f"topic {group!r} mixes replication factors {sorted(rfs)}; "
                "plan one replication factor per topic (or use scope='cluster')"
            )
        rf = rfs.pop()
        if rf > len(broker_list):
            raise InvalidReplicationFactorError(
                f"Replication factor: {rf} larger than available brokers: {len(broker_list)}."
            )
        old = [assignment[tp] for tp in tps]
        new, bound, group_warnings = _plan_topic(layout, broker_list, old, rf)
        for tp, reps in zip(tps, new, strict=True):
            target[tp] = reps
        bound_moves += bound.replica_moves
        bound_leaders += bound.leader_changes
        bound_a += bound.over_quota
        bound_b += bound.diversity
        bound_c += bound.rack_level
        label = f"topic {group!r}" if scope == "topic" else group
        warnings.extend(f"{label}: {w}" for w in group_warnings)
        metrics[group] = placement_metrics({i: target[tp] for i, tp in enumerate(tps)}, broker_list)
    return Plan(
        current=assignment,
        target=target,
        moves=count_moves(assignment, target, sizes=sizes),
        lower_bound=LowerBound(bound_moves, bound_leaders, bound_a, bound_b, bound_c),
        metrics=metrics,
        warnings=warnings,
    )


class _Topic:
    """Mutable planning state of one topic."""

    def __init__(self, layout: RackLayout, rf: int, sets: list[list[int]]) -> None:
        self.layout = layout
        self.rack_of = layout.rack_of
        self.rf = rf
        self.racked = layout.racked
        self.num_racks = layout.num_racks
        self.sets = sets
        # rf > R: racks whose quota total equals the partition count hold exactly one replica of
        # every partition (at least one by coverage, at most one by their total)
        self.single: set[str | None] = set()

    def racks_in(self, reps: Iterable[int]) -> dict[str | None, int]:
        counts: dict[str | None, int] = {}
        for b in reps:
            counts[self.rack_of[b]] = counts.get(self.rack_of[b], 0) + 1
        return counts

    def fits(self, p: int, b: int, without: int | None = None) -> bool:
        """Can broker ``b`` take an open slot of partition ``p`` (optionally after ``without`` leaves)?"""
        reps = [x for x in self.sets[p] if x != without]
        if b in reps:
            return False
        if not self.racked:
            return True
        racks = self.racks_in(reps)
        rack = self.rack_of[b]
        if self.rf <= self.num_racks:
            return rack not in racks
        if rack in racks and rack in self.single:
            return False
        missing = self.num_racks - len(racks)
        open_slots = self.rf - len(reps)
        return not (missing >= open_slots and rack in racks)


def _keepable(
    topic: _Topic, reps: list[int], surplus: dict[int, int], leader: int, mandatory: set[str | None]
) -> list[int]:
    """Surviving replicas a partition can keep under the rack rule. Among replicas competing for a
    rack the one on the broker furthest above quota goes (``surplus`` is updated as it goes, so the
    drops spread over a rack's brokers), not the leader when tied. ``mandatory`` racks (target total
    = number of partitions) must end up in every partition, so a partition lacking one keeps at most
    ``rf`` minus the mandatory racks it lacks."""
    keep = [b for b in reps if b in topic.rack_of]
    if not topic.racked:
        return keep

    def drop(b: int) -> None:
        keep.remove(b)
        surplus[b] -= 1

    def drop_order(b: int) -> tuple[int, bool, int]:
        return (surplus[b], b != leader, b)

    if topic.rf <= topic.num_racks:
        by_rack: dict[str | None, list[int]] = {}
        for b in keep:
            by_rack.setdefault(topic.rack_of[b], []).append(b)
        for members in by_rack.values():
            while len(members) > 1:
                loser = max(members, key=drop_order)
                members.remove(loser)
                drop(loser)
        lacking = len(mandatory - {topic.rack_of[b] for b in keep})
        while len(keep) > topic.rf - lacking:
            drop(max((b for b in keep if topic.rack_of[b] not in mandatory), key=drop_order))
        return keep
    for rack in topic.single:
        members = [b for b in keep if topic.rack_of[b] == rack]
        while len(members) > 1:
            loser = max(members, key=drop_order)
            members.remove(loser)
            drop(loser)
    while True:
        racks = topic.racks_in(keep)
        if topic.num_racks - len(racks) <= topic.rf - len(keep):
            return keep
        drop(max((b for b in keep if racks[topic.rack_of[b]] > 1), key=drop_order))


def _plan_topic(
    layout: RackLayout, brokers: list[Broker], old: list[list[int]], rf: int
) -> tuple[list[list[int]], LowerBound, list[str]]:
    p_count = len(old)
    surviving = set(layout.rack_of)
    current = {b: 0 for b in surviving}
    for reps in old:
        for b in reps:
            if b in surviving:
                current[b] += 1
    quotas, _ = replica_quotas(brokers, p_count, rf, current=current)
    surplus = {b: current[b] - quotas[b] for b in surviving}
    topic = _Topic(layout, rf, [])

    # Lower bounds -------------------------------------------------------------------------------
    bound_a = sum(max(0, quotas[b] - current[b]) for b in surviving)
    mandatory: set[str | None] = set()
    exact = {r for r, ids in layout.racks.items() if sum(quotas[b] for b in ids) == p_count}
    if layout.racked and rf <= layout.num_racks:
        mandatory = exact
    elif layout.racked:
        topic.single = exact
    kept = [_keepable(topic, reps, surplus, reps[0], mandatory) for reps in old]
    bound_b = sum(rf - len(k) for k in kept)
    bound_c = 0
    if layout.racked and rf <= layout.num_racks:
        totals = {r: sum(quotas[b] for b in ids) for r, ids in layout.racks.items()}
        kinds = [frozenset(layout.rack_of[b] for b in reps if b in surviving) for reps in old]
        bound_c = rack_level_minimum(kinds, totals, rf)
    leader_low, leader_high = leader_quotas(quotas, p_count)
    old_leads = {b: 0 for b in surviving}
    lost_leaders = 0
    for reps, keep in zip(old, kept, strict=True):
        if reps[0] in keep:
            old_leads[reps[0]] += 1
        else:
            lost_leaders += 1
    over_leads = sum(max(0, old_leads[b] - leader_high[b]) for b in surviving)
    under_leads = sum(max(0, leader_low[b] - old_leads[b]) for b in surviving)
    bound_leaders = max(lost_leaders + over_leads, under_leads)

    # Keep ---------------------------------------------------------------------------------------
    topic.sets = [list(k) for k in kept]
    need = dict(quotas)  # quota minus replicas held; negative = above quota
    for reps in topic.sets:
        for x in reps:
            need[x] -= 1
    added_to: dict[int, set[int]] = {x: set() for x in surviving}
    warnings: list[str] = []

    def fill(p: int) -> None:
        while len(topic.sets[p]) < rf:
            options = [x for x in surviving if need[x] > 0 and topic.fits(p, x)]
            if options:
                x = max(options, key=lambda y: (need[y], -y))
                topic.sets[p].append(x)
                need[x] -= 1
                added_to[x].add(p)
                continue
            if _reroute(topic, p, need, added_to, old):
                continue
            fallback = [x for x in surviving if topic.fits(p, x)]
            if not fallback:
                raise InvalidReplicationFactorError(
                    f"cannot place replication factor {rf} on the target brokers under the rack rule"
                )
            x = max(fallback, key=lambda y: (need[y], -y))
            warnings.append(f"partition index {p}: broker {x} exceeds its quota of {quotas[x]}")
            topic.sets[p].append(x)
            need[x] -= 1
            added_to[x].add(p)

    if layout.racked and rf <= layout.num_racks:
        # Rack-first plan: racks are balanced by transfers, then brokers inside each rack (where any
        # broker fits any slot, so intra-rack balancing never costs more than the bound).
        topic.sets = _rack_first(topic, quotas, kept, old)
        need = {x: 0 for x in surviving}
    # 1. open slots: replicas on removed brokers or dropped for rack diversity.
    for p in sorted(range(p_count), key=lambda q: len(topic.sets[q])):
        fill(p)
    # 2. above-quota replicas move straight to a broker below quota that fits the partition, taking
    #    partitions the broker does not lead first.
    for b in sorted(surviving, key=lambda x: (need[x], x)):
        if need[b] >= 0:
            continue
        holders = sorted((p for p in range(p_count) if b in topic.sets[p]), key=lambda q: (old[q][0] == b, q))
        for p in holders:
            if need[b] >= 0:
                break
            options = [d for d in surviving if need[d] > 0 and topic.fits(p, d, without=b)]
            if options:
                d = max(options, key=lambda y: (need[y], -y))
                topic.sets[p].remove(b)
                topic.sets[p].append(d)
                need[b] += 1
                need[d] -= 1
                added_to[d].add(p)
        # 3. still above quota: free a slot anyway and let augmenting paths route it.
        for p in holders:
            if need[b] >= 0:
                break
            if b in topic.sets[p]:
                topic.sets[p].remove(b)
                need[b] += 1
                fill(p)

    if warnings:
        # The incremental plan could not reach the quotas: take a from-scratch balanced placement
        # (always meets the goals) matched to the current partitions for the largest overlap.
        topic.sets = _matched_fresh(brokers, old, rf, surviving)
        warnings = [
            f"incremental plan missed a quota; used a fresh balanced placement ({w})" for w in warnings
        ]

    # Leaders ------------------------------------------------------------------------------------
    leaders: list[int] = []
    lead_count = {b: 0 for b in surviving}
    for p, reps in enumerate(topic.sets):
        if old[p][0] in reps:
            leaders.append(old[p][0])
        else:
            leaders.append(max(reps, key=lambda b: (leader_high[b] - lead_count[b], b in old[p], -b)))
        lead_count[leaders[-1]] += 1
    balance_leaders(topic.sets, leaders, leader_low, leader_high)

    result: list[list[int]] = []
    for p, reps in enumerate(topic.sets):
        ordered = [b for b in old[p] if b in reps and b != leaders[p]]
        ordered += [b for b in reps if b not in ordered and b != leaders[p]]
        result.append([leaders[p], *ordered])
    bound = LowerBound(max(bound_a, bound_b, bound_c), bound_leaders, bound_a, bound_b, bound_c)
    return result, bound, warnings


def _reroute(
    topic: _Topic, start: int, need: dict[int, int], added_to: dict[int, set[int]], old: list[list[int]]
) -> bool:
    """Fill a slot of ``start`` when no broker below quota fits it: ``start`` takes ``e`` from
    partition ``q``, ``q`` takes ``e'`` from ``q'``, … until a broker below quota fits the last one.
    Taking a replica this plan added costs nothing; taking a kept one costs one move — a 0-1
    breadth-first search finds the cheapest chain (old leaders are passed over when possible)."""
    holders: dict[int, list[int]] = {}
    for q, reps in enumerate(topic.sets):
        for e in reps:
            holders.setdefault(e, []).append(q)
    dist = {start: 0}
    parent: dict[int, tuple[int, int]] = {}  # q -> (partition that takes q's broker, that broker)
    queue: deque[int] = deque([start])
    done: set[int] = set()
    while queue:
        p = queue.popleft()
        if p in done:
            continue
        done.add(p)
        gives = parent[p][1] if p != start else None
        for e in sorted(topic.rack_of):
            if e == gives or not topic.fits(p, e, without=gives):
                continue
            if need[e] > 0:
                topic.sets[p].append(e)
                added_to[e].add(p)
                need[e] -= 1
                node = p
                while node != start:
                    taker, broker = parent[node]
                    topic.sets[node].remove(broker)
                    added_to[broker].discard(node)
                    topic.sets[taker].append(broker)
                    added_to[broker].add(taker)
                    node = taker
                return True
            for q in holders.get(e, ()):
                if q == p or q in done:
                    continue
                cost = 0 if q in added_to[e] else (2 if old[q][0] == e else 1)
                if dist.get(q, 10**9) <= dist[p] + cost:
                    continue
                dist[q] = dist[p] + cost
                parent[q] = (p, e)
                if cost == 0:
                    queue.appendleft(q)
                else:
                    queue.append(q)
    return False


def rack_level_minimum(
    kinds: Sequence[frozenset[str | None]], totals: Mapping[str | None, int], rf: int
) -> int:
    """Fewest replica additions needed so every partition spans ``rf`` distinct racks and rack ``r``
    holds ``totals[r]`` replicas (``rf <= R``), given the racks each partition already has.

    Exact: partitions with the same rack set are interchangeable, so a min-cost flow over those
    groups (group → rack, capacity = group size, cost 0 for a rack the group has, 1 otherwise)
    solves it; a flow splits back into per-partition rack sets (column fill)."""
    groups: dict[frozenset[str | None], int] = {}
    for kind in kinds:
        groups[kind] = groups.get(kind, 0) + 1
    racks = list(totals)
    group_list = list(groups)
    # nodes: 0 source, 1..G groups, G+1..G+R racks, G+R+1 sink
    g, r_count = len(group_list), len(racks)
    sink = g + r_count + 1
    graph: list[list[list[int]]] = [[] for _ in range(sink + 1)]  # edges: [to, cap, cost, rev]

    def edge(a: int, b: int, cap: int, cost: int) -> None:
        graph[a].append([b, cap, cost, len(graph[b])])
        graph[b].append([a, 0, -cost, len(graph[a]) - 1])

    for i, kind in enumerate(group_list, start=1):
        edge(0, i, groups[kind] * rf, 0)
        for j, rack in enumerate(racks):
            edge(i, g + 1 + j, groups[kind], 0 if rack in kind else 1)
    for j, rack in enumerate(racks):
        edge(g + 1 + j, sink, totals[rack], 0)
    need = sum(groups.values()) * rf
    cost = 0
    while need > 0:
        dist = [10**18] * (sink + 1)
        prev: list[tuple[int, int] | None] = [None] * (sink + 1)
        dist[0] = 0
        for _ in range(sink + 1):  # Bellman-Ford: the graph has a few dozen nodes
            changed = False
            for a in range(sink + 1):
                if dist[a] == 10**18:
                    continue
                for k, (b, cap, c, _) in enumerate(graph[a]):
                    if cap > 0 and dist[a] + c < dist[b]:
                        dist[b] = dist[a] + c
                        prev[b] = (a, k)
                        changed = True
            if not changed:
                break
        if dist[sink] == 10**18:
            raise AssertionError("rack totals not reachable (quotas inconsistent)")
        push = need
        node = sink
        while node != 0:
            a, k = prev[node]  # type: ignore[misc]
            push = min(push, graph[a][k][1])
            node = a
        node = sink
        while node != 0:
            a, k = prev[node]  # type: ignore[misc]
            graph[a][k][1] -= push
            back = graph[a][k][3]
            graph[node][back][1] += push
            node = a
        need -= push
        cost += push * dist[sink]
    return cost


def _matched_fresh(
    brokers: list[Broker], old: list[list[int]], rf: int, surviving: set[int]
) -> list[list[int]]:
    """A balanced placement from scratch, its replica sets matched to the current partitions by
    largest overlap (exact sets first, then sets sharing ``rf-1`` brokers, …)."""
    from itertools import combinations

    from kafka_placement.replicas.balanced import place_balanced

    fresh = [sorted(r) for r in place_balanced(brokers, len(old), rf)]
    free = set(range(len(fresh)))
    result: list[list[int] | None] = [None] * len(old)
    for k in range(rf, 0, -1):
        index: dict[tuple[int, ...], list[int]] = {}
        for i in sorted(free):
            for sub in combinations(fresh[i], k):
                index.setdefault(sub, []).append(i)
        for p, reps in enumerate(old):
            if result[p] is not None:
                continue
            for sub in combinations(sorted(b for b in reps if b in surviving), k):
                candidates = index.get(sub, [])
                while candidates and candidates[-1] not in free:
                    candidates.pop()
                if candidates:
                    i = candidates.pop()
                    free.discard(i)
                    result[p] = fresh[i]
                    break
    leftovers = sorted(free)
    return [r if r is not None else fresh[leftovers.pop()] for r in result]


def _rack_first(
    topic: _Topic, quotas: Mapping[int, int], kept: list[list[int]], old: list[list[int]]
) -> list[list[int]]:
    """``rf <= R``: every partition has at most one replica per rack. Plan rack totals first
    (moving a partition's replica from rack ``r`` to a rack it lacks), then brokers in each rack."""
    rack_of = topic.rack_of
    racks = list(topic.layout.racks)
    rf = topic.rf
    # entries[p][rack] = kept broker id, or -1 for a slot that still needs a broker of that rack
    entries: list[dict[str | None, int]] = [{rack_of[b]: b for b in k} for k in kept]
    target_rack = {r: sum(quotas[b] for b in topic.layout.racks[r]) for r in racks}
    load = {r: 0 for r in racks}
    for e in entries:
        for r in e:
            load[r] += 1
    held = {b: 0 for b in rack_of}
    for k in kept:
        for b in k:
            held[b] += 1
    leader_of = [o[0] for o in old]

    # 1. open slots take racks the partition lacks, preferring racks below their target.
    for e in entries:
        while len(e) < rf:
            options = [r for r in racks if r not in e]
            r = max(options, key=lambda x: (target_rack[x] - load[x], -racks.index(x)))
            e[r] = -1
            load[r] += 1

    def transfer_cost(p: int, r: str | None) -> int:
        b = entries[p][r]
        if b == -1:
            return 0  # an unfilled slot changes rack for free
        if held[b] > quotas[b]:
            return 1 if leader_of[p] != b else 2
        return 3 if leader_of[p] != b else 4

    # 2. racks above target hand replicas to racks below it, along the shortest chain of racks.
    holders: dict[str | None, set[int]] = {r: set() for r in racks}
    open_in: dict[str | None, set[int]] = {r: set() for r in racks}  # partitions with an unfilled slot in r
    by_broker: dict[int, set[int]] = {b: set() for b in rack_of}  # partitions a broker holds (kept)
    for p, e in enumerate(entries):
        for r, b in e.items():
            holders[r].add(p)
            if b == -1:
                open_in[r].add(p)
            else:
                by_broker[b].add(p)

    def best_partition(src: str | None, dst: str | None) -> int | None:
        # cost 0: an unfilled slot; cost 1: a replica of a broker above quota that does not lead;
        # only then scan everything for the cheapest.
        for p in open_in[src]:
            if dst not in entries[p]:
                return p
        for b in topic.layout.racks[src]:
            if held[b] > quotas[b]:
                for p in by_broker[b]:
                    if dst not in entries[p] and leader_of[p] != b:
                        return p
        best: tuple[int, int] | None = None
        for p in holders[src]:
            if dst in entries[p]:
                continue
            cost = transfer_cost(p, src)
            if best is None or (cost, p) < best:
                best = (cost, p)
        return None if best is None else best[1]

    while True:
        over = [r for r in racks if load[r] > target_rack[r]]
        if not over:
            break
        start = over[0]
        parent: dict[str | None, tuple[str | None, int]] = {}
        queue = deque([start])
        seen = {start}
        found: str | None = None
        found_any = False
        while queue and not found_any:
            r = queue.popleft()
            for r2 in sorted(racks, key=lambda x: load[x] >= target_rack[x]):  # racks below target first
                if r2 in seen:
                    continue
                chosen = best_partition(r, r2)
                if chosen is None:
                    continue
                seen.add(r2)
                parent[r2] = (r, chosen)
                if load[r2] < target_rack[r2]:
                    found, found_any = r2, True
                    break
                queue.append(r2)
        if not found_any:
            break  # rack totals cannot be fixed by transfers (cannot happen for valid quotas)
        node = found
        hops: list[tuple[str | None, str | None, int]] = []
        while node != start:
            src, p = parent[node]
            hops.append((src, node, p))
            node = src
        for src, dst, p in reversed(hops):
            b = entries[p].pop(src)
            if b != -1:
                held[b] -= 1
                by_broker[b].discard(p)
            open_in[src].discard(p)
            entries[p][dst] = -1
            open_in[dst].add(p)
            holders[src].discard(p)
            holders[dst].add(p)
        load[start] -= 1
        load[found] += 1

    # 3. inside each rack: brokers above quota free slots (not where they lead first), then slots
    #    go to the brokers below quota (any broker of the rack fits: one replica per rack).
    touched = [sum(1 for b in e.values() if b == -1) for e in entries]
    for r in racks:
        members = topic.layout.racks[r]
        for b in members:
            excess = held[b] - quotas[b]
            if excess <= 0:
                continue
            # not where it leads first; then partitions no other rack has changed yet (so brokers
            # receiving in different racks do not all land in the same partitions), scattered order
            mine = sorted(
                (p for p in holders[r] if entries[p][r] == b),
                key=lambda q: (leader_of[q] == b, touched[q], (q * 2654435761) & 0xFFFFFFFF),
            )
            for p in mine[:excess]:
                entries[p][r] = -1
                held[b] -= 1
                touched[p] += 1
        need = {b: quotas[b] - held[b] for b in members}
        heap = [b for b in members if need[b] > 0]
        for p in sorted(holders[r]):
            if entries[p][r] != -1:
                continue
            b = max(heap, key=lambda x: (need[x], -x)) if heap else min(members, key=lambda x: held[x])
            entries[p][r] = b
            held[b] += 1
            need[b] = need.get(b, 0) - 1
            if need[b] <= 0 and b in heap:
                heap.remove(b)
    return [[b for b in e.values()] for e in entries]
