"""Step 3 for ``rf <= R``: fix the racks' replica totals first, then the brokers inside each rack.

Rack totals move along the shortest chain of racks (a breadth-first search over racks), taking
unfilled slots first, then replicas of above-quota brokers that do not lead. Inside a rack any
broker fits any slot (one replica per rack), so brokers above quota free slots and brokers below
quota take them — never more moves than the bound.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

from kafka_placement.replicas.planner.state import TopicState

#: Knuth's multiplicative hash constant (2^32 / golden ratio): a scattered but deterministic order of
#: partitions, so brokers freeing slots in different racks do not all pick the same partitions.
SCATTER_MULTIPLIER = 2654435761


def rack_first(
    topic: TopicState, quotas: Mapping[int, int], kept: list[list[int]], old: list[list[int]]
) -> list[list[int]]:
    """``rf <= R``: every partition has at most one replica per rack. Plan rack totals first
    (moving a partition's replica from rack ``r`` to a rack it lacks), then brokers in each rack."""
    plan = _RackPlan(topic, quotas, kept, old)
    plan.open_slots()
    plan.index()
    plan.balance_racks()
    plan.fill_brokers()
    return [[b for b in e.values()] for e in plan.entries]


class _RackPlan:
    """One topic's partitions as rack → broker entries while :func:`rack_first` works on them."""

    def __init__(
        self, topic: TopicState, quotas: Mapping[int, int], kept: list[list[int]], old: list[list[int]]
    ) -> None:
        self.topic = topic
        self.quotas = quotas
        self.rack_of = rack_of = topic.rack_of
        self.racks = racks = list(topic.layout.racks)
        # entries[p][rack] = kept broker id, or -1 for a slot that still needs a broker of that rack
        self.entries: list[dict[str | None, int]] = [{rack_of[b]: b for b in k} for k in kept]
        self.target_rack = {r: sum(quotas[b] for b in topic.layout.racks[r]) for r in racks}
        self.load = {r: 0 for r in racks}
        for e in self.entries:
            for r in e:
                self.load[r] += 1
        self.held = {b: 0 for b in rack_of}
        for k in kept:
            for b in k:
                self.held[b] += 1
        self.leader_of = [o[0] for o in old]
        self.holders: dict[str | None, set[int]] = {}
        self.open_in: dict[str | None, set[int]] = {}  # partitions with an unfilled slot in r
        self.by_broker: dict[int, set[int]] = {}  # partitions a broker holds (kept)

    def open_slots(self) -> None:
        """1. open slots take racks the partition lacks, preferring racks below their target."""
        racks, load, target_rack = self.racks, self.load, self.target_rack
        for e in self.entries:
            while len(e) < self.topic.rf:
                options = [r for r in racks if r not in e]
                r = max(options, key=lambda x: (target_rack[x] - load[x], -racks.index(x)))
                e[r] = -1
                load[r] += 1

    def index(self) -> None:
        """Which partitions each rack holds, has an unfilled slot in, and each broker holds."""
        self.holders = {r: set() for r in self.racks}
        self.open_in = {r: set() for r in self.racks}
        self.by_broker = {b: set() for b in self.rack_of}
        for p, e in enumerate(self.entries):
            for r, b in e.items():
                self.holders[r].add(p)
                if b == -1:
                    self.open_in[r].add(p)
                else:
                    self.by_broker[b].add(p)

    def transfer_cost(self, p: int, r: str | None) -> int:
        b = self.entries[p][r]
        if b == -1:
            return 0  # an unfilled slot changes rack for free
        if self.held[b] > self.quotas[b]:
            return 1 if self.leader_of[p] != b else 2
        return 3 if self.leader_of[p] != b else 4

    def best_partition(self, src: str | None, dst: str | None) -> int | None:
        """The cheapest partition to hand from rack ``src`` to rack ``dst`` (one it lacks there)."""
        entries, held, quotas, leader_of = self.entries, self.held, self.quotas, self.leader_of
        # cost 0: an unfilled slot; cost 1: a replica of a broker above quota that does not lead;
        # only then scan everything for the cheapest.
        for p in self.open_in[src]:
            if dst not in entries[p]:
                return p
        for b in self.topic.layout.racks[src]:
            if held[b] > quotas[b]:
                for p in self.by_broker[b]:
                    if dst not in entries[p] and leader_of[p] != b:
                        return p
        best: tuple[int, int] | None = None
        for p in self.holders[src]:
            if dst in entries[p]:
                continue
            cost = self.transfer_cost(p, src)
            if best is None or (cost, p) < best:
                best = (cost, p)
        return None if best is None else best[1]

    def balance_racks(self) -> None:
        """2. racks above target hand replicas to racks below it, along the shortest chain of racks."""
        while True:
            over = [r for r in self.racks if self.load[r] > self.target_rack[r]]
            if not over:
                break
            start = over[0]
            chain = self.shortest_chain(start)
            if chain is None:
                break  # rack totals cannot be fixed by transfers (cannot happen for valid quotas)
            for src, dst, p in chain:
                self.shift(src, dst, p)
            self.load[start] -= 1
            self.load[chain[-1][1]] += 1

    def shortest_chain(self, start: str | None) -> list[tuple[str | None, str | None, int]] | None:
        """Breadth-first over racks from ``start`` to the nearest rack below its target: the hops
        (from rack, to rack, partition handed over), first hop first; None when there is none."""
        load, target_rack = self.load, self.target_rack
        parent: dict[str | None, tuple[str | None, int]] = {}
        queue = deque([start])
        seen = {start}
        found: str | None = None
        found_any = False
        while queue and not found_any:
            r = queue.popleft()
            for r2 in sorted(self.racks, key=lambda x: load[x] >= target_rack[x]):  # racks below target first
                if r2 in seen:
                    continue
                chosen = self.best_partition(r, r2)
                if chosen is None:
                    continue
                seen.add(r2)
                parent[r2] = (r, chosen)
                if load[r2] < target_rack[r2]:
                    found, found_any = r2, True
                    break
                queue.append(r2)
        if not found_any:
            return None
        node = found
        hops: list[tuple[str | None, str | None, int]] = []
        while node != start:
            src, p = parent[node]
            hops.append((src, node, p))
            node = src
        return list(reversed(hops))

    def shift(self, src: str | None, dst: str | None, p: int) -> None:
        """Partition ``p``'s replica in rack ``src`` becomes an unfilled slot in rack ``dst``."""
        b = self.entries[p].pop(src)
        if b != -1:
            self.held[b] -= 1
            self.by_broker[b].discard(p)
        self.open_in[src].discard(p)
        self.entries[p][dst] = -1
        self.open_in[dst].add(p)
        self.holders[src].discard(p)
        self.holders[dst].add(p)

    def fill_brokers(self) -> None:
        """3. inside each rack: brokers above quota free slots (not where they lead first), then slots
        go to the brokers below quota (any broker of the rack fits: one replica per rack)."""
        entries, held, quotas, leader_of = self.entries, self.held, self.quotas, self.leader_of
        touched = [sum(1 for b in e.values() if b == -1) for e in entries]
        for r in self.racks:
            members = self.topic.layout.racks[r]
            for b in members:
                excess = held[b] - quotas[b]
                if excess <= 0:
                    continue
                # not where it leads first; then partitions no other rack has changed yet (so brokers
                # receiving in different racks do not all land in the same partitions), scattered order
                mine = sorted(
                    (p for p in self.holders[r] if entries[p][r] == b),
                    key=lambda q: (leader_of[q] == b, touched[q], (q * SCATTER_MULTIPLIER) & 0xFFFFFFFF),
                )
                for p in mine[:excess]:
                    entries[p][r] = -1
                    held[b] -= 1
                    touched[p] += 1
            need = {b: quotas[b] - held[b] for b in members}
            heap = [b for b in members if need[b] > 0]
            for p in sorted(self.holders[r]):
                if entries[p][r] != -1:
                    continue
                b = max(heap, key=lambda x: (need[x], -x)) if heap else min(members, key=lambda x: held[x])
                entries[p][r] = b
                held[b] += 1
                need[b] = need.get(b, 0) - 1
                if need[b] <= 0 and b in heap:
                    heap.remove(b)
