"""Placement metrics: how even, how rack-diverse, and how costly a placement or a plan is.

Works on any ``{partition key: [broker ids, leader first]}`` mapping (keys: partition ids or
``TopicPartition``); brokers come from the cluster description so idle brokers count as zero.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from kafka_placement.replicas.rack_rule import rack_shortfall
from kafka_placement.vocabulary import Broker


def _spread(values: Mapping[Any, int]) -> int:
    return (max(values.values()) - min(values.values())) if values else 0


@dataclass(frozen=True)
class PlacementMetrics:
    """Counts and spreads (max − min) of one placement."""

    replicas_per_broker: dict[int, int]
    leaders_per_broker: dict[int, int]
    replicas_per_rack: dict[str | None, int]
    leaders_per_rack: dict[str | None, int]
    rack_diversity: dict[int, int]
    """``{distinct racks in a partition: number of partitions}``."""
    under_diverse: list[Hashable]
    """Partitions with fewer than ``min(rf, racks)`` distinct racks (or a repeated broker)."""
    pair_counts: dict[tuple[int, int], int] = field(repr=False)
    pair_spread: int = 0

    @property
    def replica_spread(self) -> int:
        return _spread(self.replicas_per_broker)

    @property
    def leader_spread(self) -> int:
        return _spread(self.leaders_per_broker)

    @property
    def rack_replica_spread(self) -> int:
        return _spread(self.replicas_per_rack)

    @property
    def rack_leader_spread(self) -> int:
        return _spread(self.leaders_per_rack)

    def summary(self) -> dict[str, Any]:
        """JSON-friendly summary (what ``kafka-placement audit --json`` prints)."""
        return {
            "replicas_per_broker": {str(k): v for k, v in sorted(self.replicas_per_broker.items())},
            "leaders_per_broker": {str(k): v for k, v in sorted(self.leaders_per_broker.items())},
            "replicas_per_rack": {str(k): v for k, v in sorted(self.replicas_per_rack.items(), key=str)},
            "leaders_per_rack": {str(k): v for k, v in sorted(self.leaders_per_rack.items(), key=str)},
            "replica_spread": self.replica_spread,
            "leader_spread": self.leader_spread,
            "rack_replica_spread": self.rack_replica_spread,
            "rack_leader_spread": self.rack_leader_spread,
            "rack_diversity": {str(k): v for k, v in sorted(self.rack_diversity.items())},
            "under_diverse_partitions": [str(k) for k in self.under_diverse],
            "pair_spread": self.pair_spread,
        }


def placement_metrics(
    assignment: Mapping[Any, Sequence[int]],
    brokers: Sequence[Broker],
    *,
    leaders: Mapping[Any, int] | None = None,
) -> PlacementMetrics:
    """Metrics of ``assignment`` on ``brokers``. ``leaders`` (actual leaders, e.g. from
    describe_topics) override the first replica; a leader of -1/None (offline) counts for nobody."""
    rack_of: dict[int, str | None] = {b.id: b.rack for b in brokers}
    racks = {b.rack for b in brokers}
    racked = bool(brokers) and None not in racks
    num_racks = len(racks) if racked else 1
    replicas = dict.fromkeys(rack_of, 0)
    leads = dict.fromkeys(rack_of, 0)
    rack_replicas: dict[str | None, int] = dict.fromkeys(racks, 0)
    rack_leads: dict[str | None, int] = dict.fromkeys(racks, 0)
    diversity: Counter[int] = Counter()
    under: list[Hashable] = []
    pairs: Counter[tuple[int, int]] = Counter()
    max_rf = 0
    for key, reps in assignment.items():
        max_rf = max(max_rf, len(reps))
        for b in reps:
            replicas[b] = replicas.get(b, 0) + 1
            rack = rack_of.get(b)
            rack_replicas[rack] = rack_replicas.get(rack, 0) + 1
        leader = leaders.get(key) if leaders is not None else (reps[0] if reps else None)
        if leader is not None and leader >= 0:
            leads[leader] = leads.get(leader, 0) + 1
            rack_leads[rack_of.get(leader)] = rack_leads.get(rack_of.get(leader), 0) + 1
        distinct = len({rack_of.get(b) for b in reps}) if racked else 1
        diversity[distinct] += 1
        if len(set(reps)) != len(reps) or (
            racked and rack_shortfall(map(rack_of.get, reps), len(reps), num_racks)
        ):
            under.append(key)
        for a, c in combinations(sorted(set(reps)), 2):
            pairs[(a, c)] += 1
    ids = sorted(rack_of)
    eligible = [
        (a, c)
        for a, c in combinations(ids, 2)
        if not (racked and max_rf <= num_racks and rack_of[a] == rack_of[c])
    ]
    pair_values = [pairs.get(pair, 0) for pair in eligible]
    return PlacementMetrics(
        replicas_per_broker=replicas,
        leaders_per_broker=leads,
        replicas_per_rack=rack_replicas,
        leaders_per_rack=rack_leads,
        rack_diversity=dict(diversity),
        under_diverse=under,
        pair_counts=dict(pairs),
        pair_spread=(max(pair_values) - min(pair_values)) if pair_values else 0,
    )


@dataclass(frozen=True)
class Moves:
    """The cost of going from one assignment to another."""

    replicas_added: int
    replicas_removed: int
    partitions_moved: int
    leader_changes: int
    bytes_moved: int | None

    def summary(self) -> dict[str, Any]:
        return {
            "replicas_added": self.replicas_added,
            "replicas_removed": self.replicas_removed,
            "partitions_moved": self.partitions_moved,
            "leader_changes": self.leader_changes,
            "bytes_moved": self.bytes_moved,
        }


def count_moves(
    current: Mapping[Any, Sequence[int]],
    target: Mapping[Any, Sequence[int]],
    *,
    sizes: Mapping[Any, int] | None = None,
) -> Moves:
    """Replicas added/removed, partitions touched, preferred-leader changes and (with ``sizes`` in
    bytes per partition) bytes that must be copied to the added replicas."""
    added = removed = moved = leader_changes = 0
    bytes_moved: int | None = 0 if sizes is not None else None
    for key, new in target.items():
        old = current.get(key, ())
        plus = len(set(new) - set(old))
        minus = len(set(old) - set(new))
        added += plus
        removed += minus
        if plus or minus:
            moved += 1
        if old and new and old[0] != new[0]:
            leader_changes += 1
        if sizes is not None and bytes_moved is not None:
            bytes_moved += plus * int(sizes.get(key, 0))
    return Moves(added, removed, moved, leader_changes, bytes_moved)
