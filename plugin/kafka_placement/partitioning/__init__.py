"""Key → partition: Kafka's and librdkafka's producer partitioning, exact, scalar and vectorized (sans I/O).

Quick start::

    from kafka_placement.partitioning import murmur2, partition_keys
    murmur2(b"21")                           # -973932308, Java Utils.murmur2
    partition_keys([b"a", b"b"], 12)         # numpy array of partitions, murmur2 scheme
    partition_keys(arrow_binary_array, 12, scheme="consistent")

Imports no Kafka client, no Spark and does no I/O (docs/architecture.md).
"""

from kafka_placement.partitioning.batch import partition_key, partition_keys
from kafka_placement.partitioning.jump import jump_hash, jump_hash_array
from kafka_placement.partitioning.keybatch import KeyBatch, to_key_batch
from kafka_placement.partitioning.librdkafka_hashes import crc32, fnv1a
from kafka_placement.partitioning.moves import keys_moved_fraction
from kafka_placement.partitioning.murmur2 import murmur2, murmur2_unsigned, to_positive
from kafka_placement.partitioning.record import (
    RandomKeyless,
    RecordPartitioner,
    RoundRobinPartitioner,
    default_partitioner,
    legacy_default_partitioner,
    rack_aware_partitioner,
)
from kafka_placement.partitioning.roundrobin import RoundRobin
from kafka_placement.partitioning.schemes import SCHEMES, Scheme, get_scheme
from kafka_placement.partitioning.sticky import RackAwareSticky, UniformSticky
from kafka_placement.partitioning.topicview import TopicView
from kafka_placement.partitioning.validation import check_explicit_partition, check_key, check_num_partitions

__all__ = [
    "SCHEMES",
    "KeyBatch",
    "RackAwareSticky",
    "RandomKeyless",
    "RecordPartitioner",
    "RoundRobin",
    "RoundRobinPartitioner",
    "Scheme",
    "TopicView",
    "UniformSticky",
    "check_explicit_partition",
    "check_key",
    "check_num_partitions",
    "crc32",
    "default_partitioner",
    "fnv1a",
    "get_scheme",
    "jump_hash",
    "jump_hash_array",
    "keys_moved_fraction",
    "legacy_default_partitioner",
    "murmur2",
    "murmur2_unsigned",
    "partition_key",
    "partition_keys",
    "rack_aware_partitioner",
    "to_key_batch",
    "to_positive",
]
