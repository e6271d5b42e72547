"""Our balanced replica placer: rack diversity first, then the most even brokers, leaders and pairs.

Guarantees (proved in ``unit_tests/replicas/test_balanced.py`` against brute force on small
clusters and against :mod:`.quotas` bounds on random ones):

* every partition has ``rf`` distinct brokers on ``min(rf, R)`` distinct racks;
* replicas per broker reach the quotas of :func:`~.quotas.replica_quotas` — max−min ≤ 1 whenever
  any rack-diverse placement achieves it, otherwise the smallest spread the racks allow
  (KAFKA-19507: a lone-rack broker gets no more than the rack rules force on it);
* leaders per broker within ``floor(P/N)``/``ceil(P/N)`` whenever the replica sets allow it;
* co-replica pairs spread evenly: among the choices that keep the above, each replica goes to the
  broker that has shared the fewest partitions with the ones already chosen;
* deterministic for a seed (the seed only orders ties).

Construction: partition by partition, keep each broker's and rack's *remaining* quota feasible for
the partitions still to place (a broker may need at most one replica per remaining partition; a rack
at most one when ``rf <= R``, at least one when ``rf >= R``). The quotas module shows every vector
obeying those bounds is realisable, so choosing the forced brokers/racks first and anything else
freely never paints the placer into a corner.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from kafka_placement.replicas.leaders import balance_leaders, greedy_leaders
from kafka_placement.replicas.limits import check_balanced_work
from kafka_placement.replicas.quotas import RackLayout, leader_quotas, rack_layout, replica_quotas
from kafka_placement.vocabulary import Broker


def _normalise(brokers: Iterable[Broker | int]) -> list[Broker]:
    from kafka_placement.replicas.adminutils import as_brokers  # one broker-list check for every placer

    return as_brokers(brokers)


def place_balanced(
    brokers: Iterable[Broker | int],
    num_partitions: int,
    replication_factor: int,
    *,
    seed: int = 0,
) -> list[list[int]]:
    """Replica lists (leader first) for ``num_partitions`` partitions of a new topic."""
    broker_list = _normalise(brokers)
    layout = rack_layout(broker_list)
    tie = [b.id for b in layout.brokers]
    random.Random(seed).shuffle(tie)
    quotas, _ = replica_quotas(broker_list, num_partitions, replication_factor, tie_order=tie)
    check_balanced_work(len(broker_list), num_partitions, replication_factor)
    replica_sets = fill_partitions(layout, quotas, num_partitions, replication_factor, tie)
    low, high = leader_quotas(quotas, num_partitions)
    leaders = greedy_leaders(replica_sets, high)
    balance_leaders(replica_sets, leaders, low, high)
    return [
        [leader] + [b for b in replicas if b != leader]
        for leader, replicas in zip(leaders, replica_sets, strict=True)
    ]


def fill_partitions(
    layout: RackLayout,
    quotas: dict[int, int],
    num_partitions: int,
    rf: int,
    tie_order: Sequence[int],
) -> list[list[int]]:
    """Choose ``rf`` brokers per partition so every broker ends exactly at its quota.

    Raises ``AssertionError`` only if the quotas were not realisable (a bug, never bad input).
    """
    ids = [b.id for b in layout.brokers]
    index = {b: i for i, b in enumerate(ids)}
    rack_of = layout.rack_of
    racks = list(layout.racks)
    demand = dict(quotas)
    rack_demand = {r: sum(demand[b] for b in layout.racks[r]) for r in racks}
    racked = layout.racked
    num_racks = layout.num_racks
    pairs = [[0] * len(ids) for _ in ids]
    rank = {b: i for i, b in enumerate(tie_order)}
    result: list[list[int]] = []
    for p in range(num_partitions):
        remaining = num_partitions - p  # partitions left including this one
        chosen: list[int] = []
        taken_racks: dict[str | None, int] = {}

        def score(b: int, chosen: list[int] = chosen, p: int = p) -> tuple[int, int, int]:
            i = index[b]
            return (-demand[b], sum(pairs[i][index[c]] for c in chosen), (rank[b] + p) % len(ids))

        def add(b: int, chosen: list[int] = chosen, taken_racks: dict[str | None, int] = taken_racks) -> None:
            chosen.append(b)
            taken_racks[rack_of[b]] = taken_racks.get(rack_of[b], 0) + 1

        def can_take(
            b: int,
            chosen: list[int] = chosen,
            taken_racks: dict[str | None, int] = taken_racks,
            remaining: int = remaining,
        ) -> bool:
            if demand[b] <= 0 or b in chosen:
                return False
            if not racked:
                return True
            r = rack_of[b]
            if rf <= num_racks and taken_racks.get(r, 0) >= 1:
                return False
            # rf > R: a rack may give extra replicas only while it keeps >= 1 per remaining partition.
            return not (
                rf > num_racks
                and taken_racks.get(r, 0) >= 1
                and rack_demand[r] - taken_racks.get(r, 0) - 1 < remaining - 1
            )

        # 1. brokers whose quota needs every remaining partition.
        for b in ids:
            if demand[b] >= remaining and b not in chosen:
                add(b)
        # 2. racks that need this partition (rf <= R: demand == remaining; rf >= R: every rack).
        if racked:
            for r in racks:
                needs = (rack_demand[r] - taken_racks.get(r, 0) >= remaining) if rf <= num_racks else True
                if needs and taken_racks.get(r, 0) == 0 and len(chosen) < rf:
                    options = [b for b in layout.racks[r] if can_take(b)]
                    if options:
                        add(min(options, key=score))
        # 3. the rest: best score among the admissible.
        while len(chosen) < rf:
            options = [b for b in ids if can_take(b)]
            if not options:
                break
            add(min(options, key=score))
        if len(chosen) != rf:
            raise AssertionError(f"partition {p}: quotas not realisable ({chosen} of {rf})")
        for b in chosen:
            demand[b] -= 1
            rack_demand[rack_of[b]] -= 1
        for a in chosen:
            for c in chosen:
                if a != c:
                    pairs[index[a]][index[c]] += 1
        result.append(chosen)
    return result
