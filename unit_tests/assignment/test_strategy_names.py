"""``partition.assignment.strategy`` as Java users write it: Kafka names and Java class names, in order."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.assignment import parse_strategies, strategy_name
from kafka_placement.assignment.strategy_names import JAVA_CLASSES, STRATEGY_NAMES
from kafka_placement.errors import UnknownStrategyError

JAVA = "org.apache.kafka.clients.consumer."


def test_java_class_names_and_kafka_names_in_order_of_preference() -> None:
    config = f" {JAVA}CooperativeStickyAssignor ,{JAVA}RangeAssignor,failover"
    assert parse_strategies(config) == ["cooperative-sticky", "range", "failover"]
    assert parse_strategies(["roundrobin", f"{JAVA}StickyAssignor"]) == ["roundrobin", "sticky"]
    assert parse_strategies("sticky,failover") == ["sticky", "failover"]


def test_unset_is_javas_default() -> None:
    # ConsumerConfig's default since Kafka 3.0: RangeAssignor, CooperativeStickyAssignor
    assert parse_strategies(None) == ["range", "cooperative-sticky"]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("range,fastest", "unknown assignment strategy 'fastest'; allowed: range, roundrobin, sticky"),
        (
            f"{JAVA}rangeassignor",
            "unknown assignment strategy 'org.apache.kafka.clients.consumer.rangeassignor'",
        ),
        ("range,,sticky", "unknown assignment strategy ''"),
        (f"range,{JAVA}RangeAssignor", "'range' appears twice"),
        ("  ", "names no strategy"),
        ([], "names no strategy"),
        (["range"] * 65, "lists 65 items; at most 64"),
    ],
)
def test_bad_lists_are_named(config: object, message: str) -> None:
    with pytest.raises(UnknownStrategyError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_strategies(config)  # type: ignore[arg-type]


def test_the_java_table_names_kafkas_own_classes() -> None:
    # each class's simple name is Kafka's class for that strategy name (RangeAssignor.name() == "range", …)
    simple = {cls.rsplit(".", 1)[1]: name for cls, name in JAVA_CLASSES.items()}
    assert simple == {
        "RangeAssignor": "range",
        "RoundRobinAssignor": "roundrobin",
        "StickyAssignor": "sticky",
        "CooperativeStickyAssignor": "cooperative-sticky",
    }


@given(st.text(max_size=40))
def test_any_text_is_a_known_name_or_a_typed_error(text: str) -> None:
    try:
        name = strategy_name(text)
    except UnknownStrategyError:
        return
    assert name in STRATEGY_NAMES
