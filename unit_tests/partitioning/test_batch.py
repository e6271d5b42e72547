"""partition_key / partition_keys entry points: input forms and typed errors."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from kafka.partitioner.default import DefaultPartitioner

from kafka_placement.errors import InvalidArgumentError, KeyTypeError
from kafka_placement.partitioning import partition_key, partition_keys


class _OneTopicCluster:
    """Just enough of kafka-python's ClusterMetadata for its DefaultPartitioner."""

    def __init__(self, n: int) -> None:
        self.n = n

    def topics(self) -> set[str]:
        return {"t"}

    def partitions_for_topic(self, topic: str) -> set[int]:
        return set(range(self.n))

    def available_partitions_for_topic(self, topic: str) -> set[int]:
        return set(range(self.n))


def test_java_keyed_partition_equals_kafka_python_default_partitioner() -> None:
    rng = np.random.default_rng(11)
    keys = [rng.bytes(int(n)) for n in rng.integers(0, 120, size=3000)]
    oracle = DefaultPartitioner()
    for n in (1, 2, 12, 13, 1000):
        cluster = _OneTopicCluster(n)
        expected = [oracle.partition("t", k, k, None, None, cluster) for k in keys]
        assert partition_keys(keys, n, "murmur2_random").tolist() == expected
        assert partition_keys(pa.array(keys, type=pa.binary()), n).tolist() == expected
        assert partition_keys(np.array(keys, dtype=object), n).tolist() == expected


def test_empty_inputs() -> None:
    assert partition_keys([], 3).tolist() == []
    assert partition_keys(pa.array([], type=pa.binary()), 3).tolist() == []
    assert partition_keys([b""] * 5, 3).tolist() == [partition_key(b"", 3)] * 5


@pytest.mark.parametrize("bad", [0, -1, 2**31, 1.5, True, "3", None])
def test_num_partitions_validated(bad: object) -> None:
    with pytest.raises(InvalidArgumentError, match="num_partitions"):
        partition_keys([b"a"], bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match=repr(bad) if not isinstance(bad, int) else str(bad)):
        partition_key(b"a", bad)  # type: ignore[arg-type]


def test_key_type_errors_name_the_value() -> None:
    assert partition_key("user-1", 3) == partition_key(b"user-1", 3)  # type: ignore[arg-type]
    with pytest.raises(KeyTypeError, match=r"got int: 17; serialize it first"):
        partition_key(17, 3)  # type: ignore[arg-type]
    with pytest.raises(KeyTypeError, match="key at index 2"):
        partition_keys([b"a", None, 42], 3)
