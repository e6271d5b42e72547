"""Every public library function, fed out-of-domain values by hypothesis: it returns a correct result
or raises a typed error from ``kafka_placement.errors`` — never an untyped exception, never a hang
(each call runs under a 10 s alarm)."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_placement.assignment import Member, assign
from kafka_placement.assignment.inputs import MAX_GROUP_PARTITIONS
from kafka_placement.errors import InvalidArgumentError, KafkaPlacementError
from kafka_placement.partitioning import (
    TopicView,
    jump_hash,
    keys_moved_fraction,
    murmur2,
    partition_key,
    partition_keys,
)
from kafka_placement.replicas import (
    Broker,
    JavaRandom,
    UsableBroker,
    assign_replicas_to_brokers,
    format_reassignment,
    parse_reassignment,
    place_striped,
    plan_reassignment,
)
from kafka_placement.replicas.balanced import place_balanced
from kafka_placement.replicas.limits import BALANCED_FIXED_COST, MAX_BALANCED_WORK, MAX_REPLICAS_PER_CALL
from kafka_placement.replicas.throttles import movement_map, parse_rate
from kafka_placement.vocabulary import TopicPartition

#: Values no function expects: wrong types, huge and negative numbers, NaN, odd strings and bytes.
HOSTILE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([-1, 0, 2**31, 2**31 - 1, 2**63, -(2**31) - 1, 10**12]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.binary(max_size=12),
    st.lists(st.integers(-3, 2**40), max_size=4),
    st.dictionaries(st.text(max_size=3), st.integers(-3, 3), max_size=3),
    st.just(object()),
)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class Hung(Exception):
    pass


@contextmanager
def _alarm(seconds: int = 10) -> Iterator[None]:
    def fire(signum: int, frame: Any) -> None:
        raise Hung(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _typed_or_ok(fn: Callable[[], Any], seconds: int = 10) -> None:
    with _alarm(seconds), contextlib.suppress(KafkaPlacementError):
        fn()


#: Every strategy answers the largest group it accepts (MAX_GROUP_PARTITIONS) in under 4 s of CPU here
#: (test_group_assignment_answers_at_its_limit runs exactly that case): a hang alarm for group assignment
#: has to leave a loaded 2-core machine room above that, or a large draw fails the test at random.
GROUP_ALARM_S = 30
#: Likewise for the replica placers: each answers its limit in under 4 s of CPU here.
PLACER_ALARM_S = 30
FOUR_BROKERS = [Broker(i, f"r{i % 2}") for i in range(4)]
#: The most replicas the balanced placer takes on four brokers.
BALANCED_AT_LIMIT = MAX_BALANCED_WORK // (4 + BALANCED_FIXED_COST)


@SETTINGS
@given(HOSTILE, HOSTILE)
def test_partitioning_entry_points(a: Any, b: Any) -> None:
    _typed_or_ok(lambda: partition_key(a, b))
    _typed_or_ok(lambda: partition_key(b"k", a))
    _typed_or_ok(lambda: partition_keys([a, b], 7))
    _typed_or_ok(lambda: partition_keys([b"k"], a))
    _typed_or_ok(lambda: partition_keys(a, 7))
    _typed_or_ok(lambda: murmur2(a))
    _typed_or_ok(lambda: jump_hash(a, b))
    _typed_or_ok(lambda: jump_hash(5, a))
    _typed_or_ok(lambda: TopicView.build("t", [a, 0]))
    _typed_or_ok(lambda: TopicView.of_count("t", a))
    _typed_or_ok(lambda: keys_moved_fraction([b"a", b"b"], a, b))


PLACERS_AT_LIMIT = {
    # (call at the limit, call one replica over it, replicas placed at the limit)
    "adminutils": (
        lambda: assign_replicas_to_brokers(FOUR_BROKERS, MAX_REPLICAS_PER_CALL, 1),
        lambda: assign_replicas_to_brokers(FOUR_BROKERS, MAX_REPLICAS_PER_CALL + 1, 1),
        MAX_REPLICAS_PER_CALL,
    ),
    "striped": (
        lambda: place_striped(
            [UsableBroker(i, None) for i in range(4)], MAX_REPLICAS_PER_CALL, 1, JavaRandom(1)
        ),
        lambda: place_striped(
            [UsableBroker(i, None) for i in range(4)], MAX_REPLICAS_PER_CALL + 1, 1, JavaRandom(1)
        ),
        MAX_REPLICAS_PER_CALL,
    ),
    "balanced": (
        lambda: place_balanced(FOUR_BROKERS, BALANCED_AT_LIMIT, 1),
        lambda: place_balanced(FOUR_BROKERS, BALANCED_AT_LIMIT + 1, 1),
        BALANCED_AT_LIMIT,
    ),
}


@pytest.mark.parametrize("placer", sorted(PLACERS_AT_LIMIT))
def test_replica_placers_answer_at_their_limit(placer: str) -> None:
    """Each placer's stated limit is a size it answers (on the fewest brokers, where its per-replica
    cost is highest); one replica more is refused up front."""
    at_limit, over, replicas = PLACERS_AT_LIMIT[placer]
    with _alarm(PLACER_ALARM_S):
        placed = at_limit()
    lists = placed.values() if isinstance(placed, dict) else placed  # AdminUtils: {partition: replicas}
    assert sum(len(r) for r in lists) == replicas
    del placed, lists
    with _alarm(PLACER_ALARM_S), pytest.raises(InvalidArgumentError, match="limit"):
        over()


@SETTINGS
@given(HOSTILE, HOSTILE, HOSTILE)
def test_replica_placers(a: Any, b: Any, c: Any) -> None:
    brokers = FOUR_BROKERS
    _typed_or_ok(lambda: Broker(a, b))
    _typed_or_ok(lambda: assign_replicas_to_brokers(brokers, a, b), PLACER_ALARM_S)
    _typed_or_ok(lambda: assign_replicas_to_brokers(a, 3, 2))
    _typed_or_ok(lambda: assign_replicas_to_brokers(brokers, 3, 2, a, b), PLACER_ALARM_S)
    _typed_or_ok(
        lambda: place_striped([UsableBroker(i, None) for i in range(3)], a, b, JavaRandom(1)), PLACER_ALARM_S
    )
    _typed_or_ok(lambda: place_balanced(brokers, a, b), PLACER_ALARM_S)
    _typed_or_ok(lambda: place_balanced(a, 3, 2))


@SETTINGS
@given(HOSTILE, HOSTILE)
def test_planner_and_reassignment_files(a: Any, b: Any) -> None:
    brokers = [Broker(i) for i in range(3)]
    current = {TopicPartition("t", 0): [0, 1]}
    _typed_or_ok(lambda: plan_reassignment(a, brokers))
    _typed_or_ok(lambda: plan_reassignment({("t", 0): a}, brokers))
    if isinstance(a, str | int | bytes | float | type(None)):  # hashable: usable as a mapping key
        _typed_or_ok(lambda: plan_reassignment({a: [0]}, brokers))
    _typed_or_ok(lambda: plan_reassignment(current, a))
    _typed_or_ok(lambda: plan_reassignment(current, brokers, sizes={TopicPartition("t", 0): a}))
    _typed_or_ok(lambda: plan_reassignment(current, brokers, scope=a))
    _typed_or_ok(lambda: parse_reassignment(a))
    _typed_or_ok(
        lambda: parse_reassignment(f'{{"partitions":[{{"topic":"t","partition":0,"replicas":[{a!r}]}}]}}')
    )
    _typed_or_ok(lambda: format_reassignment({TopicPartition("t", 0): [0]}))
    _typed_or_ok(lambda: parse_rate(a))
    _typed_or_ok(lambda: movement_map({TopicPartition("t", 0): [1]}, {TopicPartition("t", 0): a}))


STRATEGIES_UNDER_TEST = ("range", "roundrobin", "sticky", "cooperative-sticky", "failover")


@pytest.mark.parametrize("strategy", STRATEGIES_UNDER_TEST)
def test_group_assignment_answers_at_its_limit(strategy: str) -> None:
    """The stated limit is a size every strategy answers (not only refuses above): exactly
    MAX_GROUP_PARTITIONS partitions are all handed out, one more is refused up front with its count."""
    members = {"m1": Member(["t"]), "m2": Member(["t"])}
    with _alarm(GROUP_ALARM_S):
        result = assign(strategy, {"t": MAX_GROUP_PARTITIONS}, members)
    assert sum(len(owned) for owned in result.values()) == MAX_GROUP_PARTITIONS
    del result
    with _alarm(GROUP_ALARM_S), pytest.raises(InvalidArgumentError, match=f"{MAX_GROUP_PARTITIONS + 1:,}"):
        assign(strategy, {"t": MAX_GROUP_PARTITIONS + 1}, members)


@SETTINGS
@given(HOSTILE, HOSTILE)
def test_group_assignment(a: Any, b: Any) -> None:
    members = {"m1": Member(["t"]), "m2": Member(["t"])}
    for strategy in STRATEGIES_UNDER_TEST:
        _typed_or_ok(lambda s=strategy: assign(s, {"t": a}, members), GROUP_ALARM_S)
        _typed_or_ok(lambda s=strategy: assign(s, a, members), GROUP_ALARM_S)
        _typed_or_ok(lambda s=strategy: assign(s, {"t": 3}, a))
        _typed_or_ok(lambda s=strategy: assign(s, {"t": 3}, {"m": a}))
    _typed_or_ok(lambda: assign(a, {"t": 3}, members))
    _typed_or_ok(lambda: Member(a))
    _typed_or_ok(lambda: Member(["t"], owned=a))
    _typed_or_ok(lambda: Member(["t"], priority=a))
    _typed_or_ok(lambda: Member(["t"], rack=a))


def test_the_documented_bad_inputs_give_typed_errors_naming_value_and_range() -> None:
    # the examples found when the issue was filed
    cases: list[tuple[Callable[[], Any], str]] = [
        (lambda: Broker(2**63), r"broker id must be an int in \[0, 2147483647\], got 9223372036854775808"),
        (lambda: TopicView.build("t", [-1, 0]), r"partition ids in \[0, 2147483647\], got -1"),
        (lambda: jump_hash(5, 0), r"num_buckets must be in \[1, 2147483647\], got 0"),
        (lambda: plan_reassignment(None, [Broker(0)]), "current must be a mapping"),  # type: ignore[arg-type]
        (
            lambda: plan_reassignment(
                {TopicPartition("t", 0): [0]}, [Broker(1)], sizes={TopicPartition("t", 0): -5}
            ),
            "must be an int >= 0 \\(bytes\\), got -5",
        ),
        (
            lambda: assign_replicas_to_brokers(range(3), 2**31 - 1, 3),
            "exceeds the limit of 1,000,000 replicas",
        ),
        (lambda: place_balanced([Broker(i) for i in range(3)], 2**31 - 1, 3), "exceeds the limit"),
        (
            lambda: place_striped([UsableBroker(i, None) for i in range(3)], 2**31 - 1, 3, JavaRandom(1)),
            "exceeds the limit",
        ),
    ]
    for call, message in cases:
        with _alarm(5), pytest.raises(KafkaPlacementError, match=message):
            call()


def test_pyarrow_containers_are_refused_by_name() -> None:
    pa = pytest.importorskip("pyarrow")
    for value, name in (
        (pa.table({"k": [b"a"]}), "Table"),
        (pa.RecordBatch.from_pydict({"k": [b"a"]}), "RecordBatch"),
        (pa.scalar(b"a"), "BinaryScalar"),
    ):
        with pytest.raises(KafkaPlacementError, match=name):
            partition_keys(value, 3)
    assert partition_keys(pa.array(["a", "b"]), 5).tolist() == partition_keys([b"a", b"b"], 5).tolist()
    assert isinstance(partition_keys(np.array([b"a"], dtype=object), 3), np.ndarray)
