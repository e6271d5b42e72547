"""One key, every form it can take (bytes, bytearray, memoryview of any item format, str as UTF-8), every
adapter: kafka-python's partitioner, aiokafka's, the confluent Producer wrapper, ``partition_keys`` on a
list and on a pyarrow array (the Spark writer's input) — all pick the same partition. The oracle for the
Java scheme is kafka-python's own murmur2 (an independent implementation); librdkafka's ``consistent``
and ``fnv1a`` are checked against the plain bytes through the scalar ``partition_key``, whose values are
tested against librdkafka elsewhere."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.partitioner.default import murmur2 as kafka_python_murmur2

from kafka_placement.clients.aiokafka.partitioner import PlacementPartitioner as AiokafkaPartitioner
from kafka_placement.clients.confluent.producer import Producer
from kafka_placement.clients.kafka_python.partitioners import SchemePartitioner
from kafka_placement.partitioning import partition_key, partition_keys
from kafka_placement.partitioning.topicview import TopicView

N = 13
SCHEMES = ("murmur2", "murmur2_random", "consistent", "fnv1a", "consistent_random", "fnv1a_random")


class _Cluster:
    """kafka-python ClusterMetadata: one topic, N partitions, all led."""

    def partitions_for_topic(self, topic: str) -> set[int]:
        return set(range(N))

    def available_partitions_for_topic(self, topic: str) -> set[int]:
        return set(range(N))

    def leader_for_partition(self, tp: Any) -> int:
        return 0

    def broker_metadata(self, broker_id: int) -> None:
        return None


def _forms(raw: bytes) -> list[Any]:
    forms: list[Any] = [raw, bytearray(raw), memoryview(raw), memoryview(bytearray(raw))]
    for fmt, size in (("H", 2), ("I", 4), ("Q", 8)):
        if raw and len(raw) % size == 0:
            forms.append(memoryview(raw).cast(fmt))  # len() counts items here, not bytes
    return forms


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=1, max_size=40), st.text(min_size=1, max_size=12))
def test_every_form_of_a_key_lands_in_the_same_partition_in_every_adapter(raw: bytes, text: str) -> None:
    for scheme in SCHEMES:
        producer = Producer({"bootstrap.servers": "127.0.0.1:1", "log_level": 0}, partitioner=scheme)
        producer.metadata.fetch_view = lambda topic: TopicView(topic, tuple(range(N)), tuple(range(N)), {})
        kafka_python = SchemePartitioner(scheme)
        aiokafka = AiokafkaPartitioner(scheme)
        for key_bytes, forms in ((raw, _forms(raw)), (text.encode(), [text])):
            expected = partition_key(key_bytes, N, scheme)
            if scheme.startswith("murmur2"):  # independent oracle: kafka-python's own murmur2
                assert expected == (kafka_python_murmur2(key_bytes) & 0x7FFFFFFF) % N
            for form in forms:
                assert partition_keys([form], N, scheme).tolist() == [expected], (scheme, form)
                if not isinstance(form, str):
                    assert kafka_python.partition("t", form, form, None, None, _Cluster()) == expected
                    assert aiokafka(form, list(range(N)), list(range(N))) == expected
                partition, sent = producer._place("t", form, b"v", -1)  # what produce() hands to confluent
                assert partition == expected, (scheme, form)
                assert isinstance(sent, bytes | str)  # what confluent-kafka accepts
                assert (sent.encode() if isinstance(sent, str) else sent) == key_bytes
            as_arrow = pa.array([key_bytes], pa.binary())  # the Spark writer hashes Arrow batches
            assert partition_keys(as_arrow, N, scheme).tolist() == [expected]
            assert partition_keys(pa.array([key_bytes], pa.large_binary()), N, scheme).tolist() == [expected]
        utf8 = partition_key(text.encode(), N, scheme)
        assert partition_keys(pa.array([text]), N, scheme).tolist() == [utf8]
