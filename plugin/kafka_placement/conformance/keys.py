"""Key → partition checks: Java's murmur2 and partitionForKey, librdkafka's helpers."""

from __future__ import annotations

import random
from typing import Any

from kafka_placement.conformance import key_scenarios
from kafka_placement.conformance.bridge import JavaReference
from kafka_placement.conformance.outcome import OursUnavailable, _ours


# ---- key -> partition -------------------------------------------------------------------------------
def check_murmur2(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    """``Utils.murmur2`` vs our scalar ``murmur2`` on every key of a batch."""
    murmur2 = _ours("kafka_placement.partitioning", "murmur2")
    s = key_scenarios.key_batch_scenario(rng)
    problems = []
    for key in s.keys:
        java, ours = ref.murmur2(key), murmur2(key)
        if java != ours:
            problems.append(f"Utils.murmur2({key!r}) = {java}, ours = {ours}")
    return s, "; ".join(problems[:3]) or None


def check_partition_for_key(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    """``BuiltInPartitioner.partitionForKey`` vs our scalar ``partition_key`` and our vectorized
    ``partition_keys`` over the whole batch."""
    partition_key = _ours("kafka_placement.partitioning", "partition_key")
    partition_keys = _ours("kafka_placement.partitioning", "partition_keys")
    s = key_scenarios.key_batch_scenario(rng)
    vectorized = [int(p) for p in partition_keys(list(s.keys), s.num_partitions, scheme="murmur2")]
    problems = []
    for key, batched in zip(s.keys, vectorized, strict=True):
        java = ref.partition_for_key(key, s.num_partitions)
        scalar = int(partition_key(key, s.num_partitions, "murmur2"))
        if not java == scalar == batched:
            problems.append(f"partitionForKey({key!r}) = {java}, ours scalar {scalar}, vectorized {batched}")
    return s, "; ".join(problems[:3]) or None


def check_librdkafka(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    """confluent-kafka's helpers (librdkafka's own partitioners) vs our schemes of the same name,
    scalar and vectorized."""
    partition_key = _ours("kafka_placement.partitioning", "partition_key")
    partition_keys = _ours("kafka_placement.partitioning", "partition_keys")
    try:
        import confluent_kafka
    except ImportError as exc:  # pragma: no cover - the confluent extra installs it
        raise OursUnavailable(f"confluent-kafka not installed: {exc}") from exc
    s = key_scenarios.key_batch_scenario(rng)
    problems = []
    for scheme in ("murmur2", "consistent", "fnv1a"):
        helper = getattr(confluent_kafka, scheme)
        vectorized = [int(p) for p in partition_keys(list(s.keys), s.num_partitions, scheme=scheme)]
        for key, batched in zip(s.keys, vectorized, strict=True):
            theirs = int(helper(key, s.num_partitions))
            scalar = int(partition_key(key, s.num_partitions, scheme))
            if not theirs == scalar == batched:
                problems.append(
                    f"{scheme}({key!r}): confluent_kafka.{scheme} = {theirs}, ours scalar {scalar}, "
                    f"vectorized {batched}"
                )
    return s, "; ".join(problems[:3]) or None
