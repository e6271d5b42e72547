"""range: javadoc, REFERENCE, Kafka's RangeAssignorTest vectors (incl. KIP-881) and kafka-python's
RangePartitionAssignor as an external oracle."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from unit_tests.assignment.javafixtures import (
    java_members,
    java_partition_racks,
    null_racks,
    rack_mismatches,
    racks,
    tps,
)

from kafka_placement.assignment import Member, TopicPartition, assign

TP = TopicPartition


def test_javadoc_example() -> None:
    members = {"C0": Member(["t0", "t1"]), "C1": Member(["t0", "t1"])}
    result = assign("range", {"t0": 3, "t1": 3}, members)
    assert result == {
        "C0": [TP("t0", 0), TP("t0", 1), TP("t1", 0), TP("t1", 1)],
        "C1": [TP("t0", 2), TP("t1", 2)],
    }


def test_kip54_example3_range_leaves_new_consumer_empty() -> None:
    members = {c: Member(["t0", "t1"]) for c in ("C0", "C1", "C2")}
    result = assign("range", {"t0": 2, "t1": 2}, members)
    assert result == {"C0": [TP("t0", 0), TP("t1", 0)], "C1": [TP("t0", 1), TP("t1", 1)], "C2": []}


def test_seed_002_chinese_example_8_partitions_3_consumers() -> None:
    # RangeAssignor's usual worked example: one topic, 8 partitions, 3 consumers → 3:3:2
    result = assign("range", {"t": 8}, {c: Member(["t"]) for c in ("c0", "c1", "c2")})
    assert [len(result[c]) for c in ("c0", "c1", "c2")] == [3, 3, 2]
    assert result["c0"] == [TP("t", 0), TP("t", 1), TP("t", 2)]


# --- RangeAssignorTest (Kafka, clients/src/test/.../RangeAssignorTest.java) ----------------------
def test_one_consumer_no_topic() -> None:
    assert assign("range", {}, {"consumer1": Member([])}) == {"consumer1": []}


def test_one_consumer_nonexistent_topic() -> None:
    assert assign("range", {}, {"consumer1": Member(["topic1"])}) == {"consumer1": []}


def test_only_assigns_partitions_from_subscribed_topics() -> None:
    result = assign("range", {"topic1": 3, "other": 3}, {"consumer1": Member(["topic1"])})
    assert result == {"consumer1": [TP("topic1", 0), TP("topic1", 1), TP("topic1", 2)]}


def test_multiple_consumers_mixed_topics() -> None:
    members = {
        "consumer1": Member(["topic1"]),
        "consumer2": Member(["topic1", "topic2"]),
        "consumer3": Member(["topic1"]),
    }
    result = assign("range", {"topic1": 3, "topic2": 2}, members)
    assert result == {
        "consumer1": [TP("topic1", 0)],
        "consumer2": [TP("topic1", 1), TP("topic2", 0), TP("topic2", 1)],
        "consumer3": [TP("topic1", 2)],
    }


def test_two_static_consumers_compare_on_instance_id() -> None:
    members = {
        "consumer-b": Member(["topic1", "topic2"], group_instance_id="instance1"),
        "consumer-a": Member(["topic1", "topic2"], group_instance_id="instance2"),
    }
    result = assign("range", {"topic1": 3, "topic2": 3}, members)
    assert result["consumer-b"] == [TP("topic1", 0), TP("topic1", 1), TP("topic2", 0), TP("topic2", 1)]
    assert result["consumer-a"] == [TP("topic1", 2), TP("topic2", 2)]


def test_static_member_beats_dynamic_member() -> None:
    members = {
        "consumer-b": Member(["topic1", "topic2"], group_instance_id="instance1"),
        "consumer-a": Member(["topic1", "topic2"]),
    }
    result = assign("range", {"topic1": 3, "topic2": 3}, members)
    assert result["consumer-b"] == [TP("topic1", 0), TP("topic1", 1), TP("topic2", 0), TP("topic2", 1)]
    assert result["consumer-a"] == [TP("topic1", 2), TP("topic2", 2)]


def test_static_member_range_assignment_persistent() -> None:
    topics = ["topic1", "topic2"]
    members = {f"consumer{i}": Member(topics, group_instance_id=f"instance{i}") for i in (1, 2, 3)}
    members["consumer4"] = Member(topics)
    expected = {
        "consumer1": [TP("topic1", 0), TP("topic1", 1), TP("topic2", 0)],
        "consumer2": [TP("topic1", 2), TP("topic2", 1)],
        "consumer3": [TP("topic1", 3), TP("topic2", 2)],
        "consumer4": [TP("topic1", 4), TP("topic2", 3)],
    }
    assert assign("range", {"topic1": 5, "topic2": 4}, members) == expected
    del members["consumer4"]
    members["consumer5"] = Member(topics)
    expected["consumer5"] = expected.pop("consumer4")
    assert assign("range", {"topic1": 5, "topic2": 4}, members) == expected


def test_rack_aware_static_member_assignment_persistent_after_member_id_changes() -> None:
    topics = ["topic1", "topic2"]
    # partitionInfos(topic, 5, rf=2, numBrokerRacks=3, nextNodeIndex=0) for both topics
    broker_racks = [racks(3)[i % 3] for i in range(6)]
    partition_racks = {
        TP(t, i): {broker_racks[(i + j) % 6] for j in range(2)} for t in topics for i in range(5)
    }
    members = {
        f"consumer{i}": Member(topics, group_instance_id=f"instance{i}", rack="abc"[i - 1]) for i in (1, 2, 3)
    }
    expected = {
        "instance1": [TP("topic1", 0), TP("topic1", 2), TP("topic2", 0), TP("topic2", 2)],
        "instance2": [TP("topic1", 1), TP("topic1", 3), TP("topic2", 1), TP("topic2", 3)],
        "instance3": [TP("topic1", 4), TP("topic2", 4)],
    }

    def by_instance(ms: dict[str, Member]) -> dict[str, list[TP]]:
        result = assign("range", {"topic1": 5, "topic2": 5}, ms, partition_racks=partition_racks)
        return {ms[mid].group_instance_id or "": parts for mid, parts in result.items()}

    assert by_instance(members) == expected
    members["consumer4"] = members.pop("consumer3")
    members["consumer5"] = members.pop("consumer2")
    assert by_instance(members) == expected


# verifyRackAssignment(assignor, topics, rf, brokerRacks, consumerRacks, consumerTopics, expected, mismatch)
ALL3 = ["t1", "t2", "t3"]
UNIFORM = {"t1": 6, "t2": 7, "t3": 2}
UNIFORM_NON_RACK = [
    "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0",
    "t1-2, t1-3, t2-3, t2-4, t3-1",
    "t1-4, t1-5, t2-5, t2-6",
]
NONEQ_TOPICS = [ALL3, ALL3, ["t1", "t3"]]
NONEQ_NON_RACK = [
    "t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0",
    "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1",
    "t1-4, t1-5",
]
UP = {"t1": 5, "t2": 5, "t3": 5}
UP_NON_RACK = ["t1-0, t1-1, t2-0, t2-1, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t2-4, t3-4"]
UPNE_NON_RACK = [
    "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1",
    "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3",
    "t1-4, t3-4",
]
COP = {"t1": 6, "t2": 6, "t3": 2, "t4": 2}
COP_TOPICS = [["t1", "t2"], ["t1", "t2"], ["t3", "t4"], ["t3", "t4"]]
COP_RACKS: list[str | None] = ["a", "b", "b", "a"]
COP_NON_RACK = [
    "t1-0, t1-1, t1-2, t2-0, t2-1, t2-2",
    "t1-3, t1-4, t1-5, t2-3, t2-4, t2-5",
    "t3-0, t4-0",
    "t3-1, t4-1",
]
ALL4 = ["t1", "t2", "t3", "t4"]
COP_ALL_NON_RACK = [
    "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0",
    "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1",
    "t1-4, t2-4",
    "t1-5, t2-5",
]


def _non_rack_cases(
    topics: dict[str, int], consumer_topics: list[list[str]], expected: list[str]
) -> list[Any]:
    """verifyNonRackAwareAssignment's calls (those with preferRackAwareLogic off)."""
    return [
        (topics, 3, null_racks(3), racks(3), consumer_topics, expected, -1),
        (topics, 3, racks(3), null_racks(3), consumer_topics, expected, -1),
        (topics, 3, racks(3), racks(3), consumer_topics, expected, 0),
        (topics, 4, racks(4), racks(3), consumer_topics, expected, 0),
        (topics, 3, racks(3), ["d", "e", "f"], consumer_topics, expected, -1),
        (topics, 3, racks(3), [None, "e", "f"], consumer_topics, expected, -1),
    ]


RACK_CASES = [
    # testRackAwareAssignmentWithUniformSubscription
    *_non_rack_cases(UNIFORM, [ALL3] * 3, UNIFORM_NON_RACK),
    (
        UNIFORM,
        1,
        racks(3),
        racks(3),
        [ALL3] * 3,
        ["t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0", "t1-2, t1-5, t2-2, t2-5, t3-1"],
        0,
    ),
    (
        UNIFORM,
        2,
        racks(3),
        racks(3),
        [ALL3] * 3,
        ["t1-0, t1-2, t2-0, t2-2, t2-3, t3-1", "t1-1, t1-3, t2-1, t2-4, t3-0", "t1-4, t1-5, t2-5, t2-6"],
        1,
    ),
    (UNIFORM, 3, racks(2), racks(3), [ALL3] * 3, UNIFORM_NON_RACK, 4),
    # testRackAwareAssignmentWithNonEqualSubscription
    *_non_rack_cases(UNIFORM, NONEQ_TOPICS, NONEQ_NON_RACK),
    (
        UNIFORM,
        1,
        racks(3),
        racks(3),
        NONEQ_TOPICS,
        ["t1-0, t1-3, t2-0, t2-2, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t2-5, t3-0", "t1-2, t1-5, t3-1"],
        2,
    ),
    (
        UNIFORM,
        2,
        racks(3),
        racks(3),
        NONEQ_TOPICS,
        ["t1-0, t1-2, t2-0, t2-2, t2-3, t2-5, t3-1", "t1-1, t1-3, t2-1, t2-4, t2-6, t3-0", "t1-4, t1-5"],
        0,
    ),
    (UNIFORM, 3, racks(2), racks(3), NONEQ_TOPICS, NONEQ_NON_RACK, 2),
    # testRackAwareAssignmentWithUniformPartitions: co-partitioning wins over rack alignment
    *_non_rack_cases(UP, [ALL3] * 3, UP_NON_RACK),
    (UP, 1, racks(3), racks(3), [ALL3] * 3, UP_NON_RACK, 10),
    (UP, 2, racks(3), racks(3), [ALL3] * 3, UP_NON_RACK, 5),
    (UP, 3, racks(2), racks(3), [ALL3] * 3, UP_NON_RACK, 3),
    # testRackAwareAssignmentWithUniformPartitionsNonEqualSubscription
    *_non_rack_cases(UP, NONEQ_TOPICS, UPNE_NON_RACK),
    (
        UP,
        1,
        racks(3),
        racks(3),
        NONEQ_TOPICS,
        ["t1-0, t1-1, t2-0, t2-1, t2-4, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t3-4"],
        9,
    ),
    (
        UP,
        2,
        racks(3),
        racks(3),
        NONEQ_TOPICS,
        ["t1-2, t2-0, t2-1, t2-3, t3-2", "t1-0, t1-3, t2-2, t2-4, t3-0, t3-3", "t1-1, t1-4, t3-1, t3-4"],
        0,
    ),
    (UP, 3, racks(2), racks(3), NONEQ_TOPICS, UPNE_NON_RACK, 2),
    # testRackAwareAssignmentWithCoPartitioning
    (COP, 3, racks(2), COP_RACKS, COP_TOPICS, COP_NON_RACK, -1),
    (COP, 2, racks(2), COP_RACKS, COP_TOPICS, COP_NON_RACK, 0),
    (
        COP,
        1,
        racks(2),
        COP_RACKS,
        COP_TOPICS,
        [
            "t1-0, t1-2, t1-4, t2-0, t2-2, t2-4",
            "t1-1, t1-3, t1-5, t2-1, t2-3, t2-5",
            "t3-1, t4-1",
            "t3-0, t4-0",
        ],
        0,
    ),
    (COP, 3, racks(2), COP_RACKS, [ALL4] * 4, COP_ALL_NON_RACK, -1),
    (COP, 2, racks(2), COP_RACKS, [ALL4] * 4, COP_ALL_NON_RACK, 0),
    (
        COP,
        1,
        racks(2),
        COP_RACKS,
        [ALL4] * 4,
        [
            "t1-0, t1-2, t2-0, t2-2, t3-0, t4-0",
            "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1",
            "t1-5, t2-5",
            "t1-4, t2-4",
        ],
        0,
    ),
    (
        COP,
        1,
        racks(3),
        COP_RACKS,
        [ALL4] * 4,
        [
            "t1-0, t1-3, t2-0, t2-3, t3-0, t4-0",
            "t1-1, t1-4, t2-1, t2-4, t3-1, t4-1",
            "t1-2, t2-2",
            "t1-5, t2-5",
        ],
        6,
    ),
    # testCoPartitionedAssignmentWithSameSubscription (the case without preferRackAwareLogic);
    # t7..t9 are subscribed but missing from metadata
    (
        {"t1": 6, "t2": 6, "t3": 2, "t4": 2, "t5": 4, "t6": 4},
        3,
        null_racks(3),
        ["a", "b", "c"],
        [[f"t{i}" for i in range(1, 10)]] * 3,
        [
            "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0, t5-0, t5-1, t6-0, t6-1",
            "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1, t5-2, t6-2",
            "t1-4, t1-5, t2-4, t2-5, t5-3, t6-3",
        ],
        -1,
    ),
]


@pytest.mark.parametrize(
    ("topics", "rf", "broker_racks", "consumer_racks", "consumer_topics", "expected", "mismatch"), RACK_CASES
)
def test_java_rack_aware_vectors(
    topics: dict[str, int],
    rf: int,
    broker_racks: list[str | None],
    consumer_racks: list[str | None],
    consumer_topics: list[list[str]],
    expected: list[str],
    mismatch: int,
) -> None:
    members = java_members(consumer_topics, consumer_racks)
    partition_racks = java_partition_racks(topics, rf, broker_racks)
    result = assign("range", topics, members, partition_racks=partition_racks)
    assert result == {f"consumer{i}": tps(text) for i, text in enumerate(expected)}
    if mismatch >= 0:
        assert rack_mismatches(result, members, partition_racks) == mismatch


def test_rack_aware_keeps_per_topic_balance_and_prefers_local() -> None:
    # 2 consumers in racks a/b; partition p lives only on rack "ab"[p % 2] (RF 1)
    members = {"c0": Member(["t"], rack="a"), "c1": Member(["t"], rack="b")}
    racks_of = {TP("t", p): {"ab"[p % 2]} for p in range(6)}
    result = assign("range", {"t": 6}, members, partition_racks=racks_of)
    assert result == {"c0": [TP("t", 0), TP("t", 2), TP("t", 4)], "c1": [TP("t", 1), TP("t", 3), TP("t", 5)]}
    plain = assign("range", {"t": 6}, members)
    assert plain == {"c0": [TP("t", 0), TP("t", 1), TP("t", 2)], "c1": [TP("t", 3), TP("t", 4), TP("t", 5)]}


def test_more_members_than_partitions_and_zero_partition_topic() -> None:
    members = {f"m{i}": Member(["t", "empty"]) for i in range(5)}
    result = assign("range", {"t": 2, "empty": 0}, members)
    assert result == {"m0": [TP("t", 0)], "m1": [TP("t", 1)], "m2": [], "m3": [], "m4": []}


def test_zero_members() -> None:
    assert assign("range", {"t": 3}, {}) == {}


# --- REFERENCE formula, over random inputs ----------------------------------------------------
def _reference_range(ppt: dict[str, int], members: dict[str, Member]) -> dict[str, list[TP]]:
    out: dict[str, list[TP]] = {m: [] for m in members}
    for topic, n in ppt.items():
        subs = sorted(m for m, member in members.items() if topic in member.topics)
        if not subs:
            continue
        q, r = divmod(n, len(subs))
        for i, m in enumerate(subs):
            start = q * i + min(i, r)
            out[m].extend(TP(topic, p) for p in range(start, start + q + (1 if i < r else 0)))
    return {m: sorted(v) for m, v in out.items()}


TOPICS = ["a", "b", "c", "d"]
inputs = st.tuples(
    st.dictionaries(st.sampled_from(TOPICS), st.integers(0, 12), max_size=4),
    st.dictionaries(
        st.text("xyzXYZ01-", min_size=1, max_size=6),
        st.lists(st.sampled_from([*TOPICS, "missing"]), max_size=5),
        max_size=7,
    ),
)


@given(inputs)
def test_matches_reference_formula(data: tuple[dict[str, int], dict[str, list[str]]]) -> None:
    ppt, subs = data
    members = {m: Member(t) for m, t in subs.items()}
    assert assign("range", ppt, members) == _reference_range(ppt, members)


# --- kafka-python's RangePartitionAssignor as an oracle ------------------------------------------
KMember = namedtuple("KMember", "member_id group_instance_id metadata")


class _Cluster:
    def __init__(self, ppt: dict[str, int]) -> None:
        self.ppt = ppt

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        n = self.ppt.get(topic)
        return None if n is None else set(range(n))


def kafka_python_result(
    assignor: Any, ppt: dict[str, int], members: dict[str, Member]
) -> dict[str, list[TP]]:
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    kmembers = [
        KMember(
            mid,
            m.group_instance_id,
            ConsumerProtocolSubscription(version=0, topics=list(m.topics), user_data=b""),
        )
        for mid, m in members.items()
    ]
    raw = assignor.assign(_Cluster(ppt), kmembers)
    return {mid: sorted(TP(t, p) for t, ps in a.assigned_partitions for p in ps) for mid, a in raw.items()}


@given(inputs, st.booleans())
def test_matches_kafka_python_range(data: tuple[dict[str, int], dict[str, list[str]]], static: bool) -> None:
    from kafka.coordinator.assignors.range import RangePartitionAssignor

    ppt, subs = data
    # kafka-python's itertools.groupby drops members when static and dynamic ones interleave,
    # so the oracle is asked about all-static or all-dynamic groups only.
    members = {m: Member(t, group_instance_id=f"i-{m[::-1]}" if static else None) for m, t in subs.items()}
    ppt_nonzero = {t: n for t, n in ppt.items() if n > 0}  # kafka-python: 0 partitions → None-like
    assert assign("range", ppt_nonzero, members) == kafka_python_result(
        RangePartitionAssignor, ppt_nonzero, members
    )


# --- Kafka's Java RangeAssignor (kafka-clients via JPype) as the oracle -------------------------
BROKER_RACKS = {0: "r1", 1: "r1", 2: "r2", 3: "r3", 4: None}
member_id_chars = st.sampled_from(["a", "b", "Z", "0", "-", "\ufffd", "\U0001f600"])
java_inputs = st.tuples(
    st.dictionaries(st.sampled_from(TOPICS), st.integers(0, 9), max_size=4),
    st.dictionaries(
        st.text(member_id_chars, min_size=1, max_size=4),
        st.tuples(
            st.lists(st.sampled_from([*TOPICS, "missing"]), max_size=5),
            st.one_of(st.none(), st.sampled_from(["r1", "r2", "r3", "r9", ""])),
            st.one_of(st.none(), st.text(member_id_chars, min_size=1, max_size=3)),
        ),
        max_size=6,
    ),
    st.randoms(use_true_random=False),
    st.integers(1, 3),
)


@given(java_inputs)
def test_matches_java_range_assignor(java: Any, data: Any) -> None:
    """Random topics, subscriptions, static members, racks and replica layouts (RF 1-3 over five
    brokers, one without rack): our range equals kafka-clients' RangeAssignor."""
    ppt, spec, rng, rf = data
    instances = [inst for _, _, inst in spec.values() if inst is not None]
    members = {
        mid: Member(topics, rack=rack, group_instance_id=inst if instances.count(inst) == 1 else None)
        for mid, (topics, rack, inst) in spec.items()
    }
    replicas = {TP(t, p): rng.sample(sorted(BROKER_RACKS), rf) for t, n in ppt.items() for p in range(n)}
    racks = {tp: {BROKER_RACKS[b] for b in bs if BROKER_RACKS[b] is not None} for tp, bs in replicas.items()}
    expected = java.assign("range", ppt, members, replicas=replicas, broker_racks=BROKER_RACKS)
    ours = assign("range", ppt, members, partition_racks=racks)
    assert ours == {m: sorted(parts) for m, parts in expected.items()}


@pytest.mark.full
@settings(max_examples=3000, deadline=None)
@given(java_inputs)
def test_matches_java_range_assignor_long(java: Any, data: Any) -> None:
    test_matches_java_range_assignor.hypothesis.inner_test(java, data)  # type: ignore[attr-defined]
