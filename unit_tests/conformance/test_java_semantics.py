"""kafka_placement.java against the JDK itself: HashMap iteration order (treeified buckets included),
String.hashCode and String.compareTo."""

from __future__ import annotations

import random
from itertools import product

import pytest

from kafka_placement.conformance.bridge import JavaReference
from kafka_placement.conformance.generators import unicode_name
from kafka_placement.java import java_hashmap_order, java_sorted, java_string_hash

pytestmark = pytest.mark.conformance


def test_hashmap_order_matches_java_util_hashmap(java: JavaReference) -> None:
    import jpype

    hash_map = jpype.JClass("java.util.HashMap")
    colliding = ["".join(p) for p in product(("Aa", "BB"), repeat=6)]
    for seed in range(300):
        rng = random.Random(seed)
        keys = rng.sample(colliding, rng.randint(0, 40)) + [
            unicode_name(rng) for _ in range(rng.randint(0, 70))
        ]
        keys = list(dict.fromkeys(keys))
        rng.shuffle(keys)
        m = hash_map()
        for k in keys:
            m.put(k, 1)
        assert [str(k) for k in m.keySet()] == [keys[i] for i in java_hashmap_order(keys)], seed


def test_string_hash_and_order_match_java(java: JavaReference) -> None:
    import jpype

    jstring = jpype.JClass("java.lang.String")
    rng = random.Random(7)
    names = [unicode_name(rng, 6) for _ in range(300)]
    for name in names:
        assert int(jstring(name).hashCode()) == java_string_hash(name)
    collections = jpype.JClass("java.util.Collections")
    array_list = jpype.JClass("java.util.ArrayList")
    listed = array_list([jstring(n) for n in names])
    collections.sort(listed)
    assert [str(s) for s in listed] == java_sorted(names)


def test_topic_partition_hash_set_first_element_matches_java(java: JavaReference) -> None:
    """The replay of Java's general sticky builder takes ``HashSet<TopicPartition>.iterator().next()``
    (PartitionMovements): our model of it under random adds and removes against the real one."""
    import jpype

    from kafka_placement.assignment.sticky.java_general import _JavaHashSet
    from kafka_placement.java import hashmap_spread, java_string_hash_unsigned, to_int32

    hash_set = jpype.JClass("java.util.HashSet")
    topic_partition = jpype.JClass("org.apache.kafka.common.TopicPartition")
    rng = random.Random(3)
    topics = ["t0", "orders", "x_y", "\U0001f600"]
    for _ in range(200):
        real, ours = hash_set(), _JavaHashSet()
        keys: dict[int, tuple[str, int]] = {}
        for _ in range(rng.randint(1, 40)):
            topic, partition = rng.choice(topics), rng.randint(0, 30)
            gid = topics.index(topic) * 100 + partition
            keys[gid] = (topic, partition)
            if rng.random() < 0.7:
                real.add(topic_partition(topic, partition))
                spread = hashmap_spread(to_int32(31 * (31 + partition) + java_string_hash_unsigned(topic)))
                ours.add(gid, spread)
            else:
                real.remove(topic_partition(topic, partition))
                ours.remove(gid)
            if not real.isEmpty():
                first = real.iterator().next()
                assert keys[ours.first()] == (str(first.topic()), int(first.partition()))


def test_rebalance_protocol_of_a_strategy_list_is_javas(java: JavaReference) -> None:
    """Each of Java's assignors' ``supportedProtocols()`` (from its class) against ours, and the
    protocol a list runs: ConsumerCoordinator's rule applied to Java's values (intersection, the
    highest by RebalanceProtocol id) against :func:`rebalance_protocol`."""
    from itertools import permutations

    import jpype

    from kafka_placement.clients.group_assignor import rebalance_protocol, supported_protocols

    classes = {
        "range": "org.apache.kafka.clients.consumer.RangeAssignor",
        "roundrobin": "org.apache.kafka.clients.consumer.RoundRobinAssignor",
        "sticky": "org.apache.kafka.clients.consumer.StickyAssignor",
        "cooperative-sticky": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
    }
    java_protocols = {}
    for name, cls in classes.items():
        protocols = jpype.JClass(cls)().supportedProtocols()
        java_protocols[name] = {str(p.name()).lower(): int(p.id()) for p in protocols}
        assert set(supported_protocols(name)) == set(java_protocols[name]), name  # type: ignore[arg-type]
    for size in (1, 2, 3):
        for names in permutations(classes, size):
            common = set.intersection(*(set(java_protocols[n].items()) for n in names))
            expected = max(common, key=lambda item: item[1])[0]
            assert rebalance_protocol(names) == expected, names  # type: ignore[arg-type]


def test_migration_ready_failover_group_is_what_kafka_converts(java: JavaReference) -> None:
    """What the broker reads (Kafka's own ``ConsumerProtocol``, the class ``ConsumerGroup#fromClassicGroup``
    uses): a migration-ready member's rack id carries its priority, and the assignment of a fully ready
    group has no userData — the KAFKA-18134 refusal (``userData != null && userData.hasRemaining()``) does
    not apply; an old-setting member's assignment still trips it."""
    import jpype
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    from kafka_placement.clients.kafka_python import FailoverAssignor

    protocol = jpype.JClass("org.apache.kafka.clients.consumer.internals.ConsumerProtocol")
    wrap = jpype.JClass("java.nio.ByteBuffer").wrap

    def java_bytes(data: bytes) -> object:
        return wrap(jpype.JArray(jpype.JByte)(data))

    ready = {
        "a": FailoverAssignor(30, rack="az1", migration_ready=True),
        "b": FailoverAssignor(20, migration_ready=True),
    }
    members = [
        type(
            "M",
            (),
            {
                "member_id": m,
                "group_instance_id": None,
                "metadata": ConsumerProtocolSubscription.decode(a.metadata({"t"}).encode()),
            },
        )()
        for m, a in ready.items()
    ]
    subscription = protocol.deserializeSubscription(java_bytes(ready["a"].metadata({"t"}).encode()))
    assert str(subscription.rackId().get()) == "az1#priority=30"

    class Cluster:
        def partitions_for_topic(self, topic: str) -> set[int]:
            return {0, 1}

        def brokers(self) -> list[object]:
            return []

    for assignment in ready["b"].assign(Cluster(), members).values():
        data = protocol.deserializeConsumerProtocolAssignment(java_bytes(assignment.encode())).userData()
        assert data is None or not data.hasRemaining()
    old = {"a": FailoverAssignor(30), "b": FailoverAssignor(20)}
    assignment = old["b"].assign(Cluster(), members)["a"]
    decoded = protocol.deserializeConsumerProtocolAssignment(java_bytes(assignment.encode()))
    assert decoded.userData().hasRemaining()
