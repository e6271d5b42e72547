"""Argument checks shared by every partitioning entry point; each raises a typed error naming the value.

The explicit-partition message is the Java producer's text to the letter (Kafka 0.8.2
``Partitioner`` / 0.9+ ``KafkaProducer``): ``"Invalid partition given with record: N is not in the range
[0...P]."`` where P is the partition count.
"""

from __future__ import annotations

from kafka_placement.errors import InvalidArgumentError, InvalidPartitionError, KeyTypeError
from kafka_placement.java import INT_MAX

MAX_PARTITIONS = INT_MAX  # a partition count is a Java int


def check_num_partitions(num_partitions: object, name: str = "num_partitions") -> int:
    """Return ``num_partitions`` if it is an int in [1, 2**31-1], else raise InvalidArgumentError."""
    if isinstance(num_partitions, bool) or not isinstance(num_partitions, int):
        raise InvalidArgumentError(
            f"{name} must be an int in [1, {MAX_PARTITIONS}], got {num_partitions!r:.40}"
        )
    if not 1 <= num_partitions <= MAX_PARTITIONS:
        raise InvalidArgumentError(f"{name} must be in [1, {MAX_PARTITIONS}], got {num_partitions}")
    return num_partitions


def check_explicit_partition(partition: object, num_partitions: int) -> int:
    """Validate an explicit record partition against the topic's partition count (Java semantics)."""
    if isinstance(partition, bool) or not isinstance(partition, int):
        raise InvalidPartitionError(
            f"Invalid partition given with record: {partition!r} is not an int "
            f"(allowed: an int in the range [0...{num_partitions}))"
        )
    if partition < 0 or partition >= num_partitions:
        raise InvalidPartitionError(
            f"Invalid partition given with record: {partition} is not in the range [0...{num_partitions}]."
        )
    return partition


def check_key(key: object) -> bytes | None:
    """The key's bytes, the same for every adapter and for ``partition_keys``: bytes as they are;
    bytearray and memoryview (any format or shape) by their raw bytes in C order; ``str`` as UTF-8 (what
    confluent-kafka sends for a str key); None stays None. Anything else is refused, never ``str()``-ed."""
    if key is None or type(key) is bytes:
        return key  # type: ignore[return-value]
    if isinstance(key, bytes | bytearray):
        return bytes(key)
    if isinstance(key, memoryview):
        return key.tobytes()  # len(memoryview) counts items, not bytes, when itemsize > 1
    if isinstance(key, str):
        return key.encode("utf-8", "surrogatepass")
    raise KeyTypeError(
        f"key must be bytes-like, str (sent as UTF-8) or None, got {type(key).__name__}: {key!r:.80}; "
        "serialize it first"
    )
