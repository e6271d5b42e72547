"""Audit of a cluster's replica placement (sans-I/O): what the admin API reported → findings.

The client adapters (``clients.kafka_python.admin`` / ``clients.confluent.admin``) only translate
describe_cluster / describe_topics answers into a :class:`ClusterSnapshot`; everything else is here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka_placement.errors import (
    InvalidArgumentError,
    InvalidBrokerError,
    KafkaPlacementError,
    UnknownTopicError,
)
from kafka_placement.replicas.leaders import balance_leaders
from kafka_placement.replicas.placement_quality import PlacementMetrics, placement_metrics
from kafka_placement.replicas.quotas import leader_quotas, replica_quotas
from kafka_placement.replicas.rack_rule import rack_shortfall, racks_wanted
from kafka_placement.vocabulary import Broker, TopicPartition


@dataclass(frozen=True)
class PartitionState:
    """One partition as describe_topics reports it: replicas (preferred leader first), the current
    leader (``None`` when offline) and the in-sync replicas."""

    replicas: tuple[int, ...]
    leader: int | None
    isr: tuple[int, ...]


@dataclass(frozen=True)
class ClusterSnapshot:
    """Brokers with racks (describe_cluster) and partitions (describe_topics)."""

    brokers: tuple[Broker, ...]
    partitions: dict[TopicPartition, PartitionState]

    def topics(self) -> list[str]:
        return sorted({tp.topic for tp in self.partitions})

    def assignment(self, topics: Iterable[str] | None = None) -> dict[TopicPartition, list[int]]:
        wanted = set(topics) if topics is not None else None
        if wanted is not None:
            missing = sorted(wanted - set(self.topics()))
            if missing:
                raise UnknownTopicError(f"Topic {missing[0]} not found. (known topics: {self.topics()})")
        return {
            tp: list(state.replicas)
            for tp, state in sorted(self.partitions.items())
            if wanted is None or tp.topic in wanted
        }

    def partitions_per_topic(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for tp in self.partitions:
            counts[tp.topic] = max(counts.get(tp.topic, 0), tp.partition + 1)
        return counts


@dataclass(frozen=True)
class TopicAudit:
    topic: str
    partitions: int
    replication_factor: int
    metrics: PlacementMetrics
    best_replica_spread: int | None
    findings: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partitions": self.partitions,
            "replication_factor": self.replication_factor,
            "best_replica_spread": self.best_replica_spread,
            "findings": list(self.findings),
            **self.metrics.summary(),
        }


@dataclass(frozen=True)
class AuditReport:
    brokers: tuple[Broker, ...]
    topics: list[TopicAudit]
    cluster: PlacementMetrics

    @property
    def findings(self) -> list[str]:
        return [f"{t.topic}: {f}" for t in self.topics for f in t.findings]

    def summary(self) -> dict[str, Any]:
        return {
            "brokers": {str(b.id): b.rack for b in self.brokers},
            "topics": [t.summary() for t in self.topics],
            "cluster": self.cluster.summary(),
            "findings": self.findings,
        }


def audit(snapshot: ClusterSnapshot, topics: Iterable[str] | None = None) -> AuditReport:
    """Per-topic and cluster-wide metrics plus findings: partitions short of rack diversity, replicas
    on unknown brokers, offline or non-preferred leaders, ISR shrink, and replica spreads above
    what the racks allow (our balanced placer's bound)."""
    brokers = list(snapshot.brokers)
    known = {b.id for b in brokers}
    assignment = snapshot.assignment(topics)
    by_topic: dict[str, list[TopicPartition]] = {}
    for tp in assignment:
        by_topic.setdefault(tp.topic, []).append(tp)
    leaders: dict[TopicPartition, int] = {}
    for tp in assignment:
        leader = snapshot.partitions[tp].leader
        leaders[tp] = leader if leader is not None else -1
    reports: list[TopicAudit] = []
    for topic, tps in sorted(by_topic.items()):
        part = {tp.partition: assignment[tp] for tp in tps}
        metrics = placement_metrics(part, brokers, leaders={tp.partition: leaders[tp] for tp in tps})
        rfs = {len(r) for r in part.values()}
        rf = max(rfs)
        findings: list[str] = []
        if len(rfs) > 1:
            findings.append(f"mixed replication factors {sorted(rfs)}")
        best: int | None = None
        if brokers and rf <= len(brokers) and len(rfs) == 1:
            try:
                best = replica_quotas(brokers, len(part), rf)[1].spread
            except KafkaPlacementError:  # e.g. only some brokers have racks: no bound to compare
                best = None
        if metrics.under_diverse:
            findings.append(
                f"{len(metrics.under_diverse)} partition(s) without full rack diversity: "
                f"{sorted(int(str(p)) for p in metrics.under_diverse)[:10]}"
            )
        unknown = sorted({b for r in part.values() for b in r} - known)
        if unknown:
            findings.append(f"replicas on brokers not in the cluster: {unknown}")
        offline = sorted(tp.partition for tp in tps if leaders[tp] < 0)
        if offline:
            findings.append(f"{len(offline)} partition(s) without a leader: {offline[:10]}")
        not_preferred = sorted(tp.partition for tp in tps if 0 <= leaders[tp] != assignment[tp][0])
        if not_preferred:
            findings.append(f"{len(not_preferred)} partition(s) not led by their preferred replica")
        shrunk = sorted(tp.partition for tp in tps if len(snapshot.partitions[tp].isr) < len(assignment[tp]))
        if shrunk:
            findings.append(f"{len(shrunk)} under-replicated partition(s) (ISR < replicas): {shrunk[:10]}")
        preferred = placement_metrics(part, brokers)  # leaders = first replicas
        if len(rfs) == 1 and set(known) >= {b for r in part.values() for b in r}:
            replica_sets = [part[p] for p in sorted(part)]
            low, high = leader_quotas(preferred.replicas_per_broker, len(part))
            firsts = [r[0] for r in replica_sets]
            balance_leaders(replica_sets, firsts, low, high)
            counts = dict.fromkeys(known, 0)
            for b in firsts:
                counts[b] += 1
            achievable = max(counts.values()) - min(counts.values())
            if preferred.leader_spread > achievable:
                findings.append(
                    f"preferred leaders per broker spread {preferred.leader_spread} > {achievable} "
                    "achievable by reordering replicas (KAFKA-15354)"
                )
        if best is not None and metrics.replica_spread > best:
            findings.append(
                f"replicas per broker spread {metrics.replica_spread} > {best} achievable with these racks"
            )
        reports.append(TopicAudit(topic, len(part), rf, metrics, best, findings))
    cluster = placement_metrics(
        {(tp.topic, tp.partition): r for tp, r in assignment.items()},
        brokers,
        leaders={(tp.topic, tp.partition): leaders[tp] for tp in assignment},
    )
    return AuditReport(tuple(brokers), reports, cluster)


def validate_explicit_assignment(
    assignment: Mapping[int, Sequence[int]] | Sequence[Sequence[int]],
    brokers: Sequence[Broker],
    *,
    require_rack_diversity: bool = True,
) -> dict[int, list[int]]:
    """Check a CreateTopics replica assignment before sending it — the broker does not rack-check
    explicit assignments. Partitions must be ``0..P-1``, one replication factor, known distinct
    brokers, and (by default) ``min(rf, racks)`` distinct racks per partition."""
    items = dict(enumerate(assignment)) if not isinstance(assignment, Mapping) else dict(assignment)
    if not items:
        raise InvalidArgumentError("replica assignment is empty; at least one partition is needed")
    if sorted(items) != list(range(len(items))):
        raise InvalidArgumentError(f"partition ids must be 0..{len(items) - 1}, got {sorted(items)}")
    rack_of = {b.id: b.rack for b in brokers}
    racks = {b.rack for b in brokers}
    racked = bool(brokers) and None not in racks
    rfs = {len(r) for r in items.values()}
    if len(rfs) != 1:
        raise InvalidArgumentError(f"all partitions need the same replication factor, got {sorted(rfs)}")
    result: dict[int, list[int]] = {}
    for p, reps in sorted(items.items()):
        reps = list(reps)
        if not reps:
            raise InvalidArgumentError(f"partition {p} has an empty replica list")
        if len(set(reps)) != len(reps):
            raise InvalidArgumentError(f"partition {p} lists a broker twice: {reps}")
        for b in reps:
            if b not in rack_of:
                raise InvalidBrokerError(
                    f"Unknown broker id {b} in partition {p} (cluster brokers: {sorted(rack_of)})"
                )
        if require_rack_diversity and racked:
            distinct = {rack_of[b] for b in reps}
            need = racks_wanted(len(reps), len(racks))
            if rack_shortfall(distinct, len(reps), len(racks)):
                raise InvalidArgumentError(
                    f"partition {p} replicas {reps} span racks {sorted(str(r) for r in distinct)}; "
                    f"{need} distinct racks are required (replication factor {len(reps)}, {len(racks)} racks)"
                )
        result[p] = reps
    return result
