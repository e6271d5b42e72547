"""The baseline: Cruise Control's greedy as its sources state it (the default goals in
linkedin/cruise-control's config/cruisecontrol.properties, the wiki's "Pluggable Components" page,
ResourceDistributionGoal.rebalanceForBroker: leadership, then replica moves), on our load model and our
bands, for the benchmark only.

Goals one after another in Cruise Control's default order restricted to ours (DiskUsageDistribution,
NetworkInboundUsageDistribution, NetworkOutboundUsageDistribution, LeaderReplicaDistribution,
LeaderBytesInDistribution); for each, brokers above the band (highest first) shed load and brokers
below it (lowest first) take load; leadership moves are tried before replica moves; candidate
replicas largest first (by the goal's resource), destinations least loaded first; a move must keep
the rack rule, keep the destination within the goal's upper end, and not push any broker out of the
band of a goal already optimized. No term for bytes moved.

How it is made fast without deciding differently (unit_tests/benchmarks/test_rebalance_baseline.py
compares every step with the plain reading of these rules): loads, replica lists and values are
plain Python floats and lists, updated move by move with the same float operations; per goal, each
broker keeps its candidates (replicas with a positive load in the goal) as a sorted list of ranks in
the goal's (largest first, then partition) order, so "largest first" is a slice instead of a sort;
brokers are sorted once per attempt (loads only change when an attempt acts); the scans stop
where the band checks, monotone in the load added or removed, can no longer hold; the rack rule's
passing candidates are cached per giver and rack, and a broker's leaderships list while it only
loses members.
"""

from __future__ import annotations

from bisect import bisect_left, insort

import numpy as np

from kafka_placement.replicas.loads.goals import Goals, make_bands
from kafka_placement.replicas.loads.model import (
    BYTES_IN,
    BYTES_OUT,
    DISK,
    LEADER_BYTES_IN,
    LEADERS,
    LoadModel,
    broker_loads,
)

ORDER = (DISK, BYTES_IN, BYTES_OUT, LEADERS, LEADER_BYTES_IN)
LEADER_SIDE = (BYTES_OUT, LEADERS, LEADER_BYTES_IN)
TOLERANCE = 1e-9  # a done goal's band, widened for float noise
PASSES = 4

Step = tuple[str, int, int, int]  # ("move", partition, from, to) or ("lead", partition, old, new)
Load = tuple[float, float, float, float, float]


def baseline_plan(
    model: LoadModel, goals: Goals | None = None, max_tries: int = 400, steps: list[Step] | None = None
) -> np.ndarray:
    """The target replica matrix (broker indices, leader first); ``steps`` receives every step in order."""
    goals = goals or Goals()
    soft = {RESOURCES_INDEX[r] for r in goals.soft}
    greedy = _Greedy(model, goals, max_tries, steps)
    for g in ORDER:
        if g in soft:
            greedy.optimize(g)
    return greedy.target()


class _Greedy:
    """The greedy's state: replica lists, per-broker loads and, for the goal being optimized, candidates."""

    def __init__(self, model: LoadModel, goals: Goals, max_tries: int, steps: list[Step] | None) -> None:
        reps = model.replicas
        self.shape, self.dtype = reps.shape, reps.dtype
        self.rows: list[list[int]] = reps.tolist()
        loads = broker_loads(model)
        bands = make_bands(loads, model.capacity, np.zeros(model.num_brokers, dtype=bool), goals)
        self.lower: list[float] = bands.lower[0].tolist()
        self.upper: list[float] = bands.upper[0].tolist()
        self.low_tol = [x - TOLERANCE for x in self.lower]
        self.high_tol = [x + TOLERANCE for x in self.upper]
        self.loads: list[list[float]] = loads.tolist()
        self.rack: list[int] = model.rack_index()[0].tolist()
        self.n = model.num_brokers
        # built as the plain reading builds them: iterating a set follows its add/discard history, and the
        # leadership step's order among equal leaders is that iteration order
        self.hosted = [set(np.flatnonzero((reps == b).any(axis=1)).tolist()) for b in range(self.n)]
        self.size: list[float] = model.size.tolist()
        self.bytes_in: list[float] = model.bytes_in.tolist()
        self.bytes_out: list[float] = model.bytes_out.tolist()
        self.max_tries = max_tries
        self.steps = steps
        self.done: list[int] = []
        self.goal = DISK
        self.value: list[float] = []  # per partition: its load in the goal where it counts (as leader)
        self.rank: list[int] = []  # per partition: its place in the goal's order
        self.order: list[int] = []  # partitions by (-value, partition)
        self.by_rank: list[float] = []  # value by rank
        self.candidates: list[list[int]] = []  # per broker: sorted ranks of its replicas with value > 0
        self.version = [0] * self.n  # per broker: bumped when its candidates or their replica lists change
        self.allowed: dict[tuple[int, int], tuple[int, list[int]]] = {}  # rack_allowed's, by (broker, rack)
        self.hosting = [0] * self.n  # per broker: bumped when its hosted set changes or it gains a leadership
        self.led: dict[int, tuple[int, list[int]]] = {}  # leaders_by_value's, by broker

    def target(self) -> np.ndarray:
        return np.array(self.rows, dtype=self.dtype).reshape(self.shape)

    # --- one goal ---

    def optimize(self, g: int) -> None:
        self.start_goal(g)
        loads, n = self.loads, self.n
        for _ in range(PASSES):
            changed = False
            for b in sorted(range(n), key=lambda x: -loads[x][g]):
                tries = 0
                while loads[b][g] > self.upper[g] and tries < self.max_tries:
                    tries += 1
                    if not (g in LEADER_SIDE and self.shed_leadership(b)) and not self.shed_replica(b):
                        break
                    changed = True
            for b in sorted(range(n), key=lambda x: loads[x][g]):
                tries = 0
                while loads[b][g] < self.lower[g] and tries < self.max_tries:
                    tries += 1
                    if not self.take_replica(b):
                        break
                    changed = True
            if not changed:
                break
        self.done.append(g)

    def start_goal(self, g: int) -> None:
        """The goal's order of partitions and each broker's candidates in it."""
        self.goal = g
        reps = np.array(self.rows, dtype=np.int64).reshape(self.shape)
        value = {
            DISK: np.array(self.size),
            BYTES_IN: np.array(self.bytes_in),
            BYTES_OUT: np.array(self.bytes_out),
            LEADER_BYTES_IN: np.array(self.bytes_in),
            LEADERS: np.ones(len(self.rows)),
        }[g]
        partitions = np.arange(len(self.rows))
        order = np.lexsort((partitions, -value))
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        if g in LEADER_SIDE:
            brokers, parts = reps[:, 0], partitions
        else:
            held = reps >= 0
            brokers, parts = reps[held], np.broadcast_to(partitions[:, None], reps.shape)[held]
        keep = value[parts] > 0
        brokers, ranks = brokers[keep], rank[parts[keep]]
        by_broker = np.lexsort((ranks, brokers))
        ends = np.cumsum(np.bincount(brokers, minlength=self.n))[:-1]
        self.candidates = [a.tolist() for a in np.split(ranks[by_broker], ends)]
        self.allowed, self.led = {}, {}
        self.value, self.rank, self.order = value.tolist(), rank.tolist(), order.tolist()
        self.by_rank = value[order].tolist()

    # --- the three kinds of attempt; each acts at most once and says whether it did ---

    def shed_leadership(self, b: int) -> bool:
        """Hand one of b's leaderships (largest first) to a follower (least loaded first)."""
        g, loads, rows = self.goal, self.loads, self.rows
        for p in self.leaders_by_value(b)[: self.max_tries]:
            delta = self.leadership_change(p)
            for f in sorted((x for x in rows[p][1:] if x >= 0), key=lambda x: loads[x][g]):
                if (
                    loads[f][g] + delta[g] <= self.upper[g]
                    and self.keeps_done(f, delta, 1.0)
                    and self.keeps_done(b, delta, -1.0)
                ):
                    self.lead(p, f)
                    return True
        return False

    def leaders_by_value(self, b: int) -> list[int]:
        """The partitions b leads, largest value first, equal ones in the order b's hosted set iterates
        (kept while that set and b's leaderships only lose members: the order of the rest stays)."""
        cached = self.led.get(b)
        if cached is not None and cached[0] == self.hosting[b]:
            return cached[1]
        rows, value = self.rows, self.value
        led = [p for p in self.hosted[b] if rows[p][0] == b]
        led.sort(key=lambda q: -value[q])  # stable
        self.led[b] = (self.hosting[b], led)
        return led

    def shed_replica(self, b: int) -> bool:
        """Move one of b's replicas (largest first) to another broker (least loaded first)."""
        g, loads, upper = self.goal, self.loads, self.upper[self.goal]
        by_load = sorted(range(self.n), key=lambda x: loads[x][g])
        for r in self.candidates[b][: self.max_tries]:
            p = self.order[r]
            delta = self.carried(p, self.rows[p][0] == b)
            row = self.rows[p]
            for d in by_load:
                if loads[d][g] + delta[g] > upper:
                    break  # loads ascending: no later broker fits either
                if (
                    d not in row
                    and self.racks_allow(row, b, self.rack[d])
                    and self.keeps_done(d, delta, 1.0)
                    and self.keeps_done(b, delta, -1.0)
                ):
                    self.move(p, b, d)
                    return True
        return False

    def take_replica(self, b: int) -> bool:
        """Bring b one replica from another broker (most loaded first; its replicas largest first)."""
        g, loads, lower = self.goal, self.loads, self.lower[self.goal]
        here, to_rack = loads[b][g], self.rack[b]
        for s in sorted(range(self.n), key=lambda x: -loads[x][g]):
            there = loads[s][g]
            if there <= lower:
                break  # loads descending: no later broker can give either
            if s == b:
                continue
            ranks = self.candidates[s][: self.max_tries]
            start = self.first_within(ranks, here, there)
            if start == len(ranks):
                continue
            allowed = self.rack_allowed(s, to_rack)
            for r in allowed[bisect_left(allowed, ranks[start]) :]:
                p = self.order[r]
                delta = self.carried(p, self.rows[p][0] == s)
                if (
                    b not in self.rows[p]
                    and self.keeps_done(b, delta, 1.0)
                    and self.keeps_done(s, delta, -1.0)
                ):
                    self.move(p, s, b)
                    return True
        return False

    def rack_allowed(self, s: int, to_rack: int) -> list[int]:
        """The ranks among s's first ``max_tries`` candidates whose replica on s may move to a broker of
        ``to_rack`` by the rack rule (kept until s's candidates or their replica lists change)."""
        ranks = self.candidates[s][: self.max_tries]
        if to_rack == self.rack[s]:
            return ranks
        key = (s, to_rack)
        cached = self.allowed.get(key)
        if cached is not None and cached[0] == self.version[s]:
            return cached[1]
        rows, order = self.rows, self.order
        allowed = [r for r in ranks if self.racks_allow(rows[order[r]], s, to_rack)]
        self.allowed[key] = (self.version[s], allowed)
        return allowed

    def first_within(self, ranks: list[int], here: float, there: float) -> int:
        """The first of ``ranks`` whose load the taker (at ``here``) takes within the upper end and the giver
        (at ``there``) gives staying within the lower end: loads fall along the ranks, so both checks hold
        from some rank on."""
        lower, upper, by_rank = self.lower[self.goal], self.upper[self.goal], self.by_rank
        lo, hi = 0, len(ranks)
        while lo < hi:
            mid = (lo + hi) // 2
            load = by_rank[ranks[mid]]
            if here + load <= upper and there - load >= lower:
                hi = mid
            else:
                lo = mid + 1
        return lo

    # --- rules ---

    def carried(self, p: int, leading: bool) -> Load:
        lead = 1.0 if leading else 0.0
        return (self.size[p], self.bytes_in[p], self.bytes_out[p] * lead, self.bytes_in[p] * lead, lead)

    def leadership_change(self, p: int) -> Load:
        new, old = self.carried(p, True), self.carried(p, False)
        return (new[0] - old[0], new[1] - old[1], new[2] - old[2], new[3] - old[3], new[4] - old[4])

    def keeps_done(self, b: int, delta: Load, sign: float) -> bool:
        """No goal already optimized has b leave its band (b outside it already: no constraint)."""
        now = self.loads[b]
        for g in self.done:
            new = now[g] + delta[g] if sign > 0 else now[g] - delta[g]
            low, high = self.low_tol[g], self.high_tol[g]
            if not low <= new <= high and low <= now[g] <= high:
                return False
        return True

    def racks_allow(self, row: list[int], src: int, to_rack: int) -> bool:
        """Whether moving the replica on src of ``row`` to a broker of ``to_rack`` (not in ``row``) keeps
        as many racks: it loses one only if src's rack has no other replica and ``to_rack`` has one."""
        rack = self.rack
        from_rack = rack[src]
        if to_rack == from_rack:
            return True
        to_taken = from_kept = False
        for x in row:
            if x >= 0 and x != src:
                if rack[x] == to_rack:
                    to_taken = True
                elif rack[x] == from_rack:
                    from_kept = True
        return from_kept or not to_taken

    # --- steps ---

    def move(self, p: int, src: int, dst: int) -> None:
        row = self.rows[p]
        pos = row.index(src)
        change = self.carried(p, pos == 0)
        row[pos] = dst
        self.shift(src, dst, change)
        self.hosted[src].discard(p)
        self.hosted[dst].add(p)
        self.hosting[src] += 1
        self.hosting[dst] += 1
        for x in (*row, src):  # their candidates' replica lists changed
            if x >= 0:
                self.version[x] += 1
        if (pos == 0 or self.goal not in LEADER_SIDE) and self.value[p] > 0:
            self.hand_over(p, src, dst)
        if self.steps is not None:
            self.steps.append(("move", p, src, dst))

    def lead(self, p: int, new: int) -> None:
        row = self.rows[p]
        old = row[0]
        pos = row.index(new)
        row[0], row[pos] = new, old
        self.shift(old, new, self.leadership_change(p))
        self.hosting[new] += 1
        cached = self.led.get(old)
        if cached is not None and cached[0] == self.hosting[old]:
            cached[1].remove(p)
        if self.goal in LEADER_SIDE and self.value[p] > 0:
            self.hand_over(p, old, new)
        if self.steps is not None:
            self.steps.append(("lead", p, old, new))

    def shift(self, src: int, dst: int, change: Load) -> None:
        giver, taker = self.loads[src], self.loads[dst]
        for i, c in enumerate(change):
            giver[i] -= c
            taker[i] += c

    def hand_over(self, p: int, src: int, dst: int) -> None:
        r, given = self.rank[p], self.candidates[src]
        del given[bisect_left(given, r)]
        insort(self.candidates[dst], r)
        self.version[src] += 1
        self.version[dst] += 1


RESOURCES_INDEX = {
    "disk": DISK,
    "bytes_in": BYTES_IN,
    "bytes_out": BYTES_OUT,
    "leader_bytes_in": LEADER_BYTES_IN,
    "leaders": LEADERS,
}
