"""KIP-881 rack-awareness helpers (Kafka 3.4+), shared by range and sticky.

A consumer's rack is its ``client.rack`` (subscription v3 ``RackId``); a partition's racks are the
``broker.rack`` of *all* its replicas (Java counts offline and out-of-sync replicas too). Java only
switches to rack-aware logic when it can change something: some consumer has a rack, that rack
holds replicas, and not every partition lives on the same set of racks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kafka_placement.vocabulary import Member, TopicPartition


def consumer_rack(member: Member) -> str | None:
    """The member's rack; an empty ``client.rack`` counts as none (Java filters ``""``)."""
    return member.rack if member.rack else None


def use_rack_aware_assignment(
    consumer_racks: set[str] | frozenset[str],
    partition_racks: set[str] | frozenset[str],
    racks_per_partition: Mapping[TopicPartition, frozenset[str] | set[str]],
) -> bool:
    """Java ``AbstractPartitionAssignor.useRackAwareAssignment`` (without its test-only switch).

    ``consumer_racks``: racks of the consumers considered; ``partition_racks``: union of the
    replica racks of the partitions considered; ``racks_per_partition``: racks of each partition.
    """
    if not consumer_racks or consumer_racks.isdisjoint(partition_racks):
        return False
    return not all(racks == partition_racks for racks in racks_per_partition.values())


def partition_racks_from_replicas(
    replicas: Mapping[TopicPartition, Iterable[int]],
    broker_racks: Mapping[int, str | None],
) -> dict[TopicPartition, frozenset[str]]:
    """Racks of every partition from its replica broker ids; brokers without rack (or unknown
    to ``broker_racks``) contribute nothing, as Java's ``Node.rack() == null`` does."""
    result: dict[TopicPartition, frozenset[str]] = {}
    for tp, broker_ids in replicas.items():
        racks = {broker_racks.get(b) for b in broker_ids}
        result[tp] = frozenset(r for r in racks if r is not None)
    return result


def is_rack_local(rack: str | None, racks: Iterable[str] | None) -> bool:
    """True when ``rack`` is set and one of the partition's replicas lives on it."""
    return rack is not None and racks is not None and rack in racks
