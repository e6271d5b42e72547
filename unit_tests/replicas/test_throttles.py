"""Throttle computation: expected values from Kafka's ReassignPartitionsUnitTest.testMoveMap and from
Java's TreeSet<String> order; rates from their definitions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.replicas.throttles import (
    JAVA_LONG_MAX,
    Movement,
    OngoingReassignment,
    bytes_to_copy,
    follower_throttles,
    human_rate,
    leader_throttles,
    movement_map,
    moving_partitions,
    parse_rate,
    reassigning_brokers,
)
from kafka_placement.vocabulary import TopicPartition as TP


def _kafka_test_move_map() -> dict[TP, Movement]:
    ongoing = {
        TP("foo", 0): OngoingReassignment((1, 2, 3, 4), (4,), (3,)),
        TP("foo", 1): OngoingReassignment((4, 5, 6, 7, 8), (7, 8), (4, 5)),
        TP("foo", 2): OngoingReassignment((1, 2, 3, 4), (3, 4), (1, 2)),
        TP("foo", 3): OngoingReassignment((1, 2, 3, 4), (3, 4), (1, 2)),
        TP("foo", 4): OngoingReassignment((1, 2, 3, 4), (3, 4), (1, 2)),
        TP("foo", 5): OngoingReassignment((1, 2, 3, 4), (3, 4), (1, 2)),
    }
    proposed = {
        TP("foo", 0): [1, 2, 5],
        TP("foo", 2): [3, 4],
        TP("foo", 3): [5, 6],
        TP("foo", 4): [3],
        TP("foo", 5): [3, 4, 5, 6],
        TP("bar", 0): [1, 2, 3],
    }
    current = {
        TP("foo", 0): [1, 2, 3, 4],
        TP("foo", 1): [4, 5, 6, 7, 8],
        TP("foo", 2): [1, 2, 3, 4],
        TP("foo", 3): [1, 2, 3, 4],
        TP("foo", 4): [1, 2, 3, 4],
        TP("foo", 5): [1, 2, 3, 4],
        TP("bar", 0): [2, 3, 4],
        TP("baz", 0): [1, 2, 3],
    }
    return movement_map(proposed, current, ongoing)


def test_move_map_matches_kafka_test_move_map() -> None:
    moves = _kafka_test_move_map()
    f = frozenset
    assert moves == {
        TP("foo", 0): Movement(f({1, 2, 3}), f({5})),
        TP("foo", 1): Movement(f({4, 5, 6}), f({7, 8})),
        TP("foo", 2): Movement(f({1, 2}), f({3, 4})),
        TP("foo", 3): Movement(f({1, 2}), f({5, 6})),
        TP("foo", 4): Movement(f({1, 2}), f({3})),
        TP("foo", 5): Movement(f({1, 2}), f({3, 4, 5, 6})),
        TP("bar", 0): Movement(f({2, 3, 4}), f({1})),
    }


def test_throttle_lists_match_kafka_test_move_map() -> None:
    moves = _kafka_test_move_map()
    assert leader_throttles(moves) == {
        "foo": "0:1,0:2,0:3,1:4,1:5,1:6,2:1,2:2,3:1,3:2,4:1,4:2,5:1,5:2",
        "bar": "0:2,0:3,0:4",
    }
    assert follower_throttles(moves) == {
        "foo": "0:5,1:7,1:8,2:3,2:4,3:5,3:6,4:3,5:3,5:4,5:5,5:6",
        "bar": "0:1",
    }
    assert reassigning_brokers(moves) == [1, 2, 3, 4, 5, 6, 7, 8]


def test_throttle_lists_are_in_java_string_order_not_numeric() -> None:
    # TreeSet<String>: "10:1" < "2:1" and "0:10" < "0:9" (character by character).
    moves = movement_map({TP("t", 2): [9, 10], TP("t", 10): [9, 10]}, {TP("t", 2): [1], TP("t", 10): [1]})
    assert leader_throttles(moves) == {"t": "10:1,2:1"}
    assert follower_throttles(moves) == {"t": "10:10,10:9,2:10,2:9"}


def test_a_reorder_only_move_has_no_follower_throttle_but_keeps_its_topic() -> None:
    moves = movement_map({TP("t", 0): [2, 1]}, {TP("t", 0): [1, 2]})
    assert follower_throttles(moves) == {"t": ""}
    assert leader_throttles(moves) == {"t": "0:1,0:2"}
    assert moving_partitions({TP("t", 0): [2, 1]}, {TP("t", 0): [1, 2]}) == []


def test_unknown_partition_is_refused_with_kafkas_text() -> None:
    with pytest.raises(InvalidArgumentError, match="Trying to reassign a topic partition t-3 with 0 repl"):
        movement_map({TP("t", 3): [1]}, {})


def test_original_replicas_of_an_ongoing_move() -> None:
    assert OngoingReassignment((1, 2, 3, 4), (4,), (3,)).original == (1, 2, 3)
    assert OngoingReassignment((5, 1, 2), (1, 2), (5,)).original == (5,)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1048576", 1048576),
        ("50MB/s", 50_000_000),
        ("10MiB", 10 * 2**20),
        ("1 MB/s", 10**6),
        ("1.5kB", 1500),
        ("2GiB/sec", 2 * 2**30),
        ("300b", 300),
        ("1KiB/s", 1024),
        ("7k", 7000),
        (str(JAVA_LONG_MAX), JAVA_LONG_MAX),
    ],
)
def test_parse_rate(text: str, expected: int) -> None:
    assert parse_rate(text) == expected


@pytest.mark.parametrize(
    "text",
    ["", "0", "-5MB", "fast", "5 parsecs", "1e6", str(JAVA_LONG_MAX + 1), "9" * 70, "0.0001kB", "10 XB/s"],
)
def test_parse_rate_refuses_with_the_option_and_the_range(text: str) -> None:
    with pytest.raises(InvalidArgumentError, match="--replica-alter-log-dirs-throttle"):
        parse_rate(text, "--replica-alter-log-dirs-throttle")


def test_human_rate() -> None:
    assert human_rate(1_000_000) == "1.0 MB/s"
    assert human_rate(999) == "999 B/s"


@given(
    st.dictionaries(
        st.integers(0, 20),
        st.tuples(
            st.sets(st.integers(0, 6), min_size=1, max_size=3),
            st.sets(st.integers(0, 6), min_size=1, max_size=3),
            st.integers(0, 10**9),
        ),
        max_size=8,
    ),
    st.integers(0, 10**9),
)
def test_bytes_to_copy_is_size_per_new_replica_minus_what_it_holds(parts: dict, held: int) -> None:
    current = {TP("t", p): sorted(src) for p, (src, _, _) in parts.items()}
    proposed = {TP("t", p): sorted(dst) for p, (_, dst, _) in parts.items()}
    sizes = {TP("t", p): size for p, (_, _, size) in parts.items()}
    moves = movement_map(proposed, current)
    expected_fresh = sum(len(dst - src) * size for src, dst, size in parts.values())
    assert bytes_to_copy(moves, sizes) == expected_fresh
    copied = {(TP("t", p), b): held for p, (src, dst, _) in parts.items() for b in dst - src}
    expected_partial = sum(len(dst - src) * max(0, size - held) for src, dst, size in parts.values())
    assert bytes_to_copy(moves, sizes, copied) == expected_partial
