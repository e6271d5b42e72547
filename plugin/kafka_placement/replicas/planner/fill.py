"""Step 4, generic fill (``rf > R`` or no racks; also what rack-first leaves open).

Open slots, then above-quota replicas, go straight to a broker below quota that fits; a slot nothing
fits is solved by the cheapest chain a 0-1 breadth-first search finds (:func:`reroute`). A slot that
still cannot be filled goes above quota for now — later moves often bring that broker back;
:meth:`SlotFiller.missed_quotas` says what is above quota at the end (the caller then falls back to a
fresh placement).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

from kafka_placement.errors import InvalidReplicationFactorError
from kafka_placement.replicas.planner.state import TopicState


class SlotFiller:
    """Moves replicas of one topic onto brokers below quota; ``need`` is quota minus replicas held
    (negative = above quota), ``added_to[b]`` the partitions this plan gave broker ``b``."""

    def __init__(self, topic: TopicState, quotas: Mapping[int, int], old: list[list[int]]) -> None:
        self.topic = topic
        self.quotas = quotas
        self.old = old
        self.surviving = set(topic.rack_of)
        self.need = dict(quotas)
        for reps in topic.sets:
            for x in reps:
                self.need[x] -= 1
        self.added_to: dict[int, set[int]] = {x: set() for x in self.surviving}

    def _add(self, p: int, x: int) -> None:
        self.topic.sets[p].append(x)
        self.need[x] -= 1
        self.added_to[x].add(p)

    def fill(self, p: int) -> None:
        """Give partition ``p`` replicas until it has ``rf``."""
        topic, need = self.topic, self.need
        while len(topic.sets[p]) < topic.rf:
            options = [x for x in self.surviving if need[x] > 0 and topic.fits(p, x)]
            if options:
                self._add(p, max(options, key=lambda y: (need[y], -y)))
                continue
            if reroute(topic, p, need, self.added_to, self.old):
                continue
            fallback = [x for x in self.surviving if topic.fits(p, x)]
            if not fallback:
                raise InvalidReplicationFactorError(
                    f"cannot place replication factor {topic.rf} on the target brokers under the rack rule"
                )
            # above quota for now: a later above-quota move may free a slot this broker can give up
            self._add(p, max(fallback, key=lambda y: (need[y], -y)))

    def missed_quotas(self) -> list[str]:
        """Brokers still above quota (the needs sum to zero, so none is then below)."""
        return [
            f"broker {x} holds {self.quotas[x] - self.need[x]} replicas, above its quota of {self.quotas[x]}"
            for x in sorted(self.surviving)
            if self.need[x] < 0
        ]

    def fill_open_slots(self) -> None:
        """Open slots: replicas on removed brokers or dropped for rack diversity (emptiest first)."""
        for p in sorted(range(len(self.topic.sets)), key=lambda q: len(self.topic.sets[q])):
            self.fill(p)

    def move_over_quota(self) -> None:
        """Above-quota replicas move straight to a broker below quota that fits the partition, taking
        partitions the broker does not lead first; what is still above quota frees a slot anyway and
        lets :meth:`fill` route it."""
        topic, need, old = self.topic, self.need, self.old
        for b in sorted(self.surviving, key=lambda x: (need[x], x)):
            if need[b] >= 0:
                continue
            holders = sorted(
                (p for p in range(len(topic.sets)) if b in topic.sets[p]), key=lambda q: (old[q][0] == b, q)
            )
            for p in holders:
                if need[b] >= 0:
                    break
                options = [d for d in self.surviving if need[d] > 0 and topic.fits(p, d, without=b)]
                if options:
                    d = max(options, key=lambda y: (need[y], -y))
                    topic.sets[p].remove(b)
                    need[b] += 1
                    self._add(p, d)
            for p in holders:
                if need[b] >= 0:
                    break
                if b in topic.sets[p]:
                    topic.sets[p].remove(b)
                    need[b] += 1
                    self.fill(p)


def reroute(
    topic: TopicState, start: int, need: dict[int, int], added_to: dict[int, set[int]], old: list[list[int]]
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
