"""Replica → broker/rack placement (sans-I/O).

* :func:`assign_replicas_to_brokers` — Java ``AdminUtils.assignReplicasToBrokers`` (``--generate`` up
  to Kafka 4.0, ZooKeeper-era topic creation), identical for every fixed start index;
* :mod:`.striped` — KRaft's ``StripedReplicaPlacer`` (controller topic creation; ``--generate``
  since Kafka 4.1), exact under a seeded :mod:`.javarandom` generator;
* :mod:`.balanced` — our placer: full rack diversity with the most even broker and leader loads any
  valid placement can reach (also with uneven racks, KAFKA-19507);
* :mod:`.planner` — minimal-movement reassignment plans with the lower bound they are measured
  against; :mod:`.reassignment_json` reads/writes kafka-reassign-partitions JSON;
* :mod:`.metrics` — per-broker/per-rack spreads, rack diversity, co-replica pairs, moves;
* :mod:`.audit` — findings from an admin-API snapshot (the client adapters build the snapshot).

Imports no Kafka client, no Spark and does no I/O (docs/architecture.md).
"""

from __future__ import annotations

from kafka_placement.replicas.adminutils import assign_replicas_to_brokers, rack_alternated_broker_list
from kafka_placement.replicas.balanced import place_balanced
from kafka_placement.replicas.javarandom import JavaRandom, MockRandom
from kafka_placement.replicas.placement_quality import count_moves, placement_metrics
from kafka_placement.replicas.planner import plan_reassignment
from kafka_placement.replicas.quotas import replica_quotas
from kafka_placement.replicas.reassignment_json import format_reassignment, parse_reassignment
from kafka_placement.replicas.striped import UsableBroker, place_striped
from kafka_placement.vocabulary import Broker

__all__ = [
    "Broker",
    "JavaRandom",
    "MockRandom",
    "UsableBroker",
    "assign_replicas_to_brokers",
    "count_moves",
    "format_reassignment",
    "parse_reassignment",
    "place_balanced",
    "place_striped",
    "placement_metrics",
    "plan_reassignment",
    "rack_alternated_broker_list",
    "replica_quotas",
]
