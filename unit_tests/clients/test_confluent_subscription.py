"""subscribe()'s topics read by librdkafka's rules (clients/confluent/subscription.py)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.clients.confluent.subscription import read_subscription
from kafka_placement.errors import ConsumerConfigError

NO_CALLBACKS: dict[str, None] = {"on_assign": None}


def test_names_only_subscribe_to_the_names() -> None:
    wanted = read_subscription(["orders", "audit"], NO_CALLBACKS)
    assert wanted.literals == ["orders", "audit"] and wanted.pattern is None


def test_a_caret_makes_a_regex_and_the_names_beside_it_match_only_themselves() -> None:
    wanted = read_subscription(["^orders-.*", "a.b"], NO_CALLBACKS)
    assert wanted.literals == ["a.b"] and wanted.pattern is not None
    regex = re.compile(wanted.pattern)
    names = ["orders-1", "orders-", "a.b", "axb", "a.b2", "xorders-1"]
    assert [t for t in names if regex.match(t)] == ["orders-1", "orders-", "a.b"]


@given(st.lists(st.text(st.sampled_from("ab.-_"), min_size=1, max_size=6), min_size=1, max_size=4))
def test_with_a_regex_each_literal_matches_exactly_itself(literals: list[str]) -> None:
    pattern = read_subscription(["^zz$", *literals], NO_CALLBACKS).pattern
    assert pattern is not None
    regex = re.compile(pattern)
    for name in literals:
        assert regex.match(name)
        assert not regex.match(name + "q") and not regex.match("q" + name)


@pytest.mark.parametrize(
    ("topics", "callbacks", "message"),
    [
        ("orders", NO_CALLBACKS, "topics must be a list of topic names, got 'orders'"),
        (["orders", ""], NO_CALLBACKS, "topics must be a list of topic names, got ['orders', '']"),
        (["orders", 3], NO_CALLBACKS, "got ['orders', 3]"),
        (["^orders-("], NO_CALLBACKS, r"invalid topic regex in ['^orders-(']"),
        (["orders"], {"on_assign": None, "on_lost": 3}, "on_lost must be callable, got 3"),
    ],
)
def test_bad_input_is_named(topics: object, callbacks: dict[str, object], message: str) -> None:
    with pytest.raises(ConsumerConfigError) as raised:
        read_subscription(topics, callbacks)  # type: ignore[arg-type]
    assert message in str(raised.value)
