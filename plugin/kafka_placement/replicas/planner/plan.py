"""The planner's driver: validate the input, group partitions (per topic, or per replication factor
with ``scope="cluster"``), plan each group (:mod:`.topic`) and add up moves, bounds and metrics."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka_placement.errors import InvalidArgumentError, InvalidReplicationFactorError
from kafka_placement.java import INT_MAX
from kafka_placement.replicas.placement_quality import Moves, PlacementMetrics, count_moves, placement_metrics
from kafka_placement.replicas.planner.bounds import LowerBound
from kafka_placement.replicas.planner.topic import plan_topic
from kafka_placement.replicas.quotas import rack_layout
from kafka_placement.vocabulary import Broker, TopicPartition


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
                if self.lower_bound.replica_moves
                else (1.0 if self.moves.replicas_added == 0 else None)
            ),
            "topics": {t: m.summary() for t, m in sorted(self.metrics.items())},
            "warnings": list(self.warnings),
        }


Assignment = Mapping[TopicPartition, Sequence[int]] | Mapping[tuple[str, int], Sequence[int]]


def _as_assignment(current: Assignment) -> dict[TopicPartition, list[int]]:
    if not isinstance(current, Mapping):
        raise InvalidArgumentError(
            f"current must be a mapping {{(topic, partition): [replicas]}}, got {type(current).__name__}"
        )
    result: dict[TopicPartition, list[int]] = {}
    for key, replicas in current.items():
        if not (
            isinstance(key, tuple)
            and len(key) == 2
            and isinstance(key[0], str)
            and isinstance(key[1], int)
            and not isinstance(key[1], bool)
            and 0 <= key[1] <= INT_MAX
        ):
            raise InvalidArgumentError(
                f"partition key must be (topic: str, partition: int in [0, {INT_MAX}]), got {key!r:.80}"
            )
        if isinstance(replicas, str | bytes) or not isinstance(replicas, Iterable):
            raise InvalidArgumentError(f"partition {key[0]}-{key[1]}: replicas must be a list of broker ids")
        reps = list(replicas)
        if not reps:
            raise InvalidArgumentError(f"partition {key[0]}-{key[1]} has an empty replica list")
        if len(set(reps)) != len(reps):
            raise InvalidArgumentError(f"partition {key[0]}-{key[1]} lists a broker twice: {reps}")
        for b in reps:
            if isinstance(b, bool) or not isinstance(b, int) or not 0 <= b <= INT_MAX:
                raise InvalidArgumentError(
                    f"partition {key[0]}-{key[1]}: broker id must be an int in [0, {INT_MAX}], got {b!r:.40}"
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
    if isinstance(brokers, str | bytes) or not isinstance(brokers, Iterable):
        raise InvalidArgumentError(f"brokers must be a collection of Broker(id, rack), got {brokers!r:.60}")
    broker_list = list(brokers)
    for b in broker_list:
        if not isinstance(b, Broker):
            raise InvalidArgumentError(f"brokers must be Broker(id, rack) values, got {b!r:.60}")
    if sizes is not None:
        if not isinstance(sizes, Mapping):
            raise InvalidArgumentError(
                f"sizes must be a mapping {{TopicPartition: bytes}}, got {type(sizes).__name__}"
            )
        for tp, size in sizes.items():
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                raise InvalidArgumentError(f"size of {tp} must be an int >= 0 (bytes), got {size!r:.40}")
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
        new, bound, group_warnings = plan_topic(layout, broker_list, old, rf)
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
