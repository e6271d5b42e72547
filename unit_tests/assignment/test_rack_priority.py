"""The client.rack priority transport: round trips, and malformed values rank last without raising."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.assignment.rack_priority import (
    MAX_RACK_CHARS,
    RackPriority,
    decode_rack_priority,
    encode_rack_priority,
)
from kafka_placement.errors import InvalidArgumentError


def test_examples() -> None:
    assert encode_rack_priority("rack1", 10) == "rack1#priority=10"
    assert encode_rack_priority(None, -5) == "#priority=-5"
    assert decode_rack_priority("rack1#priority=10") == RackPriority("rack1", 10)
    assert decode_rack_priority("#priority=-5") == RackPriority(None, -5)
    assert decode_rack_priority("use1-az1") == RackPriority("use1-az1", None)
    assert decode_rack_priority(None) == RackPriority(None, None)
    assert decode_rack_priority("") == RackPriority(None, None)


@pytest.mark.parametrize(
    ("value", "rack"),
    [
        ("r#priority=", "r"),
        ("r#priority=ten", "r"),
        ("r#priority=+1", "r"),
        ("r#priority=2147483648", "r"),
        ("r#priority=-2147483649", "r"),
        ("r#priority=1.5", "r"),
        ("r#priority=\u0661", "r"),  # Arabic-Indic digit: isdigit() and parseInt accept it
        ("#priority=99999999999999999999", None),
    ],
)
def test_malformed_priority_ranks_last_and_says_why(value: str, rack: str | None) -> None:
    decoded = decode_rack_priority(value)
    assert decoded.priority is None and decoded.rack == rack and decoded.problem


def test_oversized_value_is_not_read() -> None:
    decoded = decode_rack_priority("r" * MAX_RACK_CHARS + "#priority=1")
    assert decoded.priority is None and decoded.problem and str(MAX_RACK_CHARS) in decoded.problem


def test_bad_encode_arguments_are_typed() -> None:
    with pytest.raises(InvalidArgumentError, match="'a#b'"):
        encode_rack_priority("a#b", 1)
    with pytest.raises(InvalidArgumentError, match="2147483648"):
        encode_rack_priority("r", 2**31)


@given(
    st.one_of(st.none(), st.text(alphabet=st.characters(blacklist_characters="#"), max_size=40)),
    st.integers(-(2**31), 2**31 - 1),
)
def test_round_trip(rack: str | None, priority: int) -> None:
    decoded = decode_rack_priority(encode_rack_priority(rack, priority))
    assert decoded == RackPriority(rack or None, priority)


@given(st.text(max_size=60))
def test_never_raises(value: str) -> None:
    decode_rack_priority(value)
