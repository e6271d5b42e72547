"""Per-broker replica and leader quotas: the most even loads any rack-diverse placement can reach.

A placement is *valid* when every partition has ``rf`` distinct brokers spread over
``min(rf, R)`` distinct racks (``R`` = number of racks). Aggregated per rack that means, for ``P``
partitions:

* ``rf <= R`` — a rack holds at most one replica of a partition: rack total ``<= P``;
* ``rf >= R`` — every rack holds at least one replica of every partition: rack total ``>= P``;
* always — a broker holds at most one replica of a partition: broker total ``<= P``.

Conversely every integer load vector meeting those bounds is realisable (lay the brokers' replicas
out rack by rack in one sequence of length ``rf*P`` and give partition ``i`` the positions
``i, i+P, i+2P, …``: a block of at most ``P`` consecutive positions never hits a partition twice,
a block of at least ``P`` hits every partition). So the best achievable spread is found by
water-filling: raise a common level ``t`` while the racks' clamped totals stay within ``rf*P``;
racks whose bound binds keep their bound, the rest sit at ``t``/``t+1``. With uneven racks the
bounds force a spread (KAFKA-19507: a lone rack with ``rf >= R`` must hold a replica of every
partition); :func:`replica_quotas` returns the most even vector and :class:`QuotaBound` says what
was forced and why.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kafka_placement.errors import (
    AdminOperationError,
    InvalidBrokerError,
    InvalidPartitionsError,
    InvalidReplicationFactorError,
)
from kafka_placement.replicas.limits import check_placement_work
from kafka_placement.vocabulary import Broker


@dataclass(frozen=True)
class RackLayout:
    """Brokers grouped by rack (``None`` = the cluster has no rack labels at all)."""

    brokers: tuple[Broker, ...]
    racks: dict[str | None, tuple[int, ...]]
    rack_of: dict[int, str | None]

    @property
    def racked(self) -> bool:
        return None not in self.racks

    @property
    def num_racks(self) -> int:
        return len(self.racks) if self.racked else 1


def rack_layout(brokers: Sequence[Broker]) -> RackLayout:
    """Validate a target broker set: non-empty, unique ids, racks on all brokers or on none."""
    if not brokers:
        raise InvalidBrokerError("the broker list is empty; at least one broker is needed")
    seen: set[int] = set()
    for broker in brokers:
        if not isinstance(broker, Broker):
            raise InvalidBrokerError(f"brokers must be Broker instances, got {broker!r}")
        if broker.id in seen:
            raise InvalidBrokerError(
                f"duplicate broker id {broker.id} in the broker list; ids must be unique"
            )
        seen.add(broker.id)
    missing = sorted(b.id for b in brokers if b.rack is None)
    if missing and len(missing) < len(brokers):
        raise AdminOperationError(
            "Not all brokers have rack information for replica rack aware assignment. "
            f"Brokers without a rack: {missing}"
        )
    racks: dict[str | None, list[int]] = {}
    for broker in sorted(brokers):
        racks.setdefault(broker.rack, []).append(broker.id)
    return RackLayout(
        tuple(sorted(brokers)), {r: tuple(ids) for r, ids in racks.items()}, {b.id: b.rack for b in brokers}
    )


def check_sizes(layout: RackLayout, num_partitions: int, replication_factor: int) -> None:
    """Kafka's checks and texts for a partition count and replication factor."""
    for name, value in (("num_partitions", num_partitions), ("replication_factor", replication_factor)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidReplicationFactorError(f"{name} must be an int, got {value!r}")
    if num_partitions <= 0:
        raise InvalidPartitionsError("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise InvalidReplicationFactorError("Replication factor must be larger than 0.")
    if replication_factor > len(layout.brokers):
        raise InvalidReplicationFactorError(
            f"Replication factor: {replication_factor} larger than available brokers: {len(layout.brokers)}."
        )
    check_placement_work(num_partitions, replication_factor)


def rack_bounds(layout: RackLayout, num_partitions: int, rf: int) -> dict[str | None, tuple[int, int]]:
    """``{rack: (min total, max total)}`` replicas a valid placement can give each rack."""
    p = num_partitions
    bounds: dict[str | None, tuple[int, int]] = {}
    for rack, ids in layout.racks.items():
        low, high = 0, len(ids) * p
        if layout.racked:
            if rf <= layout.num_racks:
                high = min(high, p)
            if rf >= layout.num_racks:
                low = p
        bounds[rack] = (low, high)
    return bounds


@dataclass(frozen=True)
class QuotaBound:
    """What the water-filling found: the level, the spread any valid placement must have."""

    level: int
    min_load: int
    max_load: int
    forced_racks: dict[str | None, str]

    @property
    def spread(self) -> int:
        return self.max_load - self.min_load


def _clamp(value: int, bounds: tuple[int, int]) -> int:
    return max(bounds[0], min(bounds[1], value))


def replica_quotas(
    brokers: Sequence[Broker],
    num_partitions: int,
    replication_factor: int,
    *,
    current: Mapping[int, int] | None = None,
    tie_order: Sequence[int] | None = None,
) -> tuple[dict[int, int], QuotaBound]:
    """The most even per-broker replica counts a valid placement can have, and its bound.

    Where the split has freedom (which brokers get ``t+1``), brokers with more ``current`` replicas
    come first (fewest moves for a plan), then ``tie_order`` (a seeded order for a fresh placement).
    """
    layout = rack_layout(brokers)
    check_sizes(layout, num_partitions, replication_factor)
    p, total = num_partitions, num_partitions * replication_factor
    bounds = rack_bounds(layout, p, replication_factor)
    sizes = {rack: len(ids) for rack, ids in layout.racks.items()}

    def filled(level: int) -> int:
        return sum(_clamp(sizes[r] * level, bounds[r]) for r in sizes)

    lo, hi = 0, p  # largest level with filled(level) <= total
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if filled(mid) <= total else (lo, mid - 1)
    level = lo
    base = {r: _clamp(sizes[r] * level, bounds[r]) for r in sizes}
    spare = total - sum(base.values())
    room = {r: (_clamp(sizes[r] * (level + 1), bounds[r]) - base[r]) if level < p else 0 for r in sizes}

    current = current or {}
    rank = {b: i for i, b in enumerate(tie_order)} if tie_order is not None else {}

    def preference(broker_id: int) -> tuple[int, int, int]:
        return (-current.get(broker_id, 0), rank.get(broker_id, 0), broker_id)

    # Within a rack the +1s go to the preferred brokers; across racks a heap hands out the spare units.
    ordered = {r: sorted(ids, key=preference) for r, ids in layout.racks.items()}
    rack_total = dict(base)
    heap: list[tuple[tuple[int, int, int], str | None, int]] = []

    def push(rack: str | None) -> None:
        if room[rack] > 0:
            k = rack_total[rack] % sizes[rack]  # the next broker of this rack to get a +1
            heapq.heappush(heap, (preference(ordered[rack][k]), rack, k))

    for rack in sorted(sizes, key=lambda r: "" if r is None else r):
        push(rack)
    while spare > 0 and heap:
        _, rack, _ = heapq.heappop(heap)
        rack_total[rack] += 1
        room[rack] -= 1
        spare -= 1
        push(rack)
    quotas: dict[int, int] = {}
    for rack, ids in ordered.items():
        each, extra = divmod(rack_total[rack], sizes[rack])
        for index, broker_id in enumerate(ids):
            quotas[broker_id] = each + (1 if index < extra else 0)
    # A rack is "forced" when its bound keeps it away from the cluster-wide average load.
    forced: dict[str | None, str] = {}
    n = len(layout.brokers)
    for rack in sizes:
        if not layout.racked:
            continue
        if rack_total[rack] == bounds[rack][0] and bounds[rack][0] * n > sizes[rack] * total:
            forced[rack] = (
                f"rack {rack!r} has {sizes[rack]} broker(s) but must hold a replica of each of the "
                f"{p} partitions (replication factor {replication_factor} >= {layout.num_racks} racks)"
            )
        elif rack_total[rack] == bounds[rack][1] and bounds[rack][1] * n < sizes[rack] * total:
            forced[rack] = (
                f"rack {rack!r} has {sizes[rack]} brokers but may hold at most one replica of each of the "
                f"{p} partitions (replication factor {replication_factor} <= {layout.num_racks} racks)"
            )
    loads = list(quotas.values())
    return quotas, QuotaBound(level, min(loads), max(loads), forced)


def leader_quotas(
    replica_quota: Mapping[int, int],
    num_partitions: int,
) -> tuple[dict[int, int], dict[int, int]]:
    """``(low, high)`` leader counts per broker: ``floor(P/N)`` and ``ceil(P/N)``, never more than the
    broker's replicas. The sum of lows is at most ``P``, the sum of highs at least ``P``."""
    n = len(replica_quota)
    each, extra = divmod(num_partitions, n)
    low = {b: min(each, q) for b, q in replica_quota.items()}
    high = {b: min(each + (1 if extra else 0), q) for b, q in replica_quota.items()}
    return low, high
