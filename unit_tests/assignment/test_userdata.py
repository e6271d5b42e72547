"""userData codecs: failover priority (``ByteBuffer.allocate(4).putInt(priority)``), Java StickyAssignor
V0/V1, cooperative generation; round trips, byte layouts from the spec, kafka-python's (version-prefixed)
codec as a body oracle, and hostile input that must never crash nor allocate without bound."""

from __future__ import annotations

import logging
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.assignment.userdata import (
    DEFAULT_GENERATION,
    MAX_USER_DATA_BYTES,
    FailoverAssignment,
    StickyUserData,
    decode_cooperative_user_data,
    decode_failover_assignment,
    decode_priority,
    decode_sticky_user_data,
    encode_cooperative_user_data,
    encode_failover_assignment,
    encode_priority,
    encode_sticky_user_data,
    read_cooperative_generation,
    read_priority,
    read_sticky_user_data,
)
from kafka_placement.errors import UserDataError
from kafka_placement.vocabulary import TopicPartition

TP = TopicPartition
INT32 = st.integers(-(2**31), 2**31 - 1)


# --- priority (Java: ByteBuffer.allocate(4).putInt(priority)) -----------------------------------
def test_priority_is_four_bytes_big_endian() -> None:
    assert encode_priority(10) == b"\x00\x00\x00\x0a"
    assert encode_priority(-1) == b"\xff\xff\xff\xff"
    assert encode_priority(2**31 - 1) == b"\x7f\xff\xff\xff"
    assert decode_priority(b"\x80\x00\x00\x00") == -(2**31)


@given(INT32)
def test_priority_round_trip(p: int) -> None:
    assert decode_priority(encode_priority(p)) == p
    assert encode_priority(p) == struct.pack(">i", p)


def test_priority_absent_and_bad() -> None:
    assert decode_priority(None) is None
    assert decode_priority(b"") is None
    with pytest.raises(UserDataError, match=r"exactly 4 bytes .* got 3 bytes"):
        decode_priority(b"\x00\x00\x01")
    with pytest.raises(UserDataError, match="got 5 bytes"):
        decode_priority(b"\x00\x00\x00\x01\x00")
    with pytest.raises(UserDataError, match="must be bytes, got str"):
        decode_priority("10")  # type: ignore[arg-type]
    for bad in (2**31, "10", 1.5, True):
        with pytest.raises(UserDataError, match="priority"):
            encode_priority(bad)  # type: ignore[arg-type]


def test_read_priority_falls_back_to_lowest_with_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert read_priority(b"\x01", member_id="m-1") is None
    assert "m-1" in caplog.text and "ranking it lowest" in caplog.text
    assert read_priority(object()) is None


# --- sticky V1/V0 -------------------------------------------------------------------------------
def _spec_v0(entries: list[tuple[str, list[int]]]) -> bytes:
    """Bytes straight from the spec: ARRAY(INT32 count) of (STRING(INT16 len + utf8), ARRAY(INT32))."""
    out = struct.pack(">i", len(entries))
    for topic, parts in entries:
        raw = topic.encode()
        out += struct.pack(">h", len(raw)) + raw + struct.pack(">i", len(parts))
        out += b"".join(struct.pack(">i", p) for p in parts)
    return out


def test_sticky_v1_layout_matches_spec() -> None:
    parts = [TP("t0", 0), TP("t1", 2), TP("t0", 3)]
    encoded = encode_sticky_user_data(parts, 7)
    assert encoded == _spec_v0([("t0", [0, 3]), ("t1", [2])]) + struct.pack(">i", 7)
    assert decode_sticky_user_data(encoded) == StickyUserData((TP("t0", 0), TP("t0", 3), TP("t1", 2)), 7)


def test_sticky_v0_is_readable() -> None:
    data = _spec_v0([("topic", [5, 1])])
    assert decode_sticky_user_data(data) == StickyUserData((TP("topic", 5), TP("topic", 1)), None)
    assert encode_sticky_user_data([TP("topic", 5), TP("topic", 1)], None) == data


def test_sticky_trailing_bytes_like_java() -> None:
    base = _spec_v0([("t", [1])])
    # 1..3 trailing bytes: V1 underflows, V0 succeeds (Java ignores the rest)
    assert decode_sticky_user_data(base + b"\x00\x00").generation is None
    # >= 4 trailing bytes: V1 succeeds and the rest is ignored
    assert decode_sticky_user_data(base + struct.pack(">i", 3) + b"junk").generation == 3


def test_sticky_empty_means_no_previous_assignment() -> None:
    assert decode_sticky_user_data(b"") == StickyUserData((), None)
    assert read_sticky_user_data(None) == StickyUserData((), None)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (struct.pack(">i", -1), "Array size -1 cannot be negative"),
        (struct.pack(">i", 5), "Error reading array of size 5, only 0 bytes available"),
        (struct.pack(">ih", 1, -3) + b"\x00" * 8, "String length -3 cannot be negative"),
        (
            struct.pack(">ih", 1, 50) + b"ab" + b"\x00" * 6,
            "Error reading string of length 50, only 8 bytes available",
        ),
        (
            struct.pack(">ih", 1, 1) + b"t" + struct.pack(">i", 1000) + b"\x00" * 4,
            "Error reading array of size 1000",
        ),
        (
            struct.pack(">ih", 1, 1) + b"t" + struct.pack(">i", 2) + b"\x00" * 5,
            "Error reading array of size 2",
        ),
        (b"\x00\x00", "Error reading INT32 at offset 0, only 2 bytes available"),
    ],
)
def test_sticky_malformed_raises_java_texts(data: bytes, message: str) -> None:
    with pytest.raises(UserDataError, match=message):
        decode_sticky_user_data(data)


def test_sticky_unparseable_falls_back_like_java(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        result = read_sticky_user_data(struct.pack(">i", 2**31 - 1), member_id="evil")
    assert result == StickyUserData((), DEFAULT_GENERATION)
    assert "evil" in caplog.text


def test_hostile_lengths_do_not_allocate() -> None:
    # a 4-byte claim of 2^31-1 topics, and a topic claiming 2^31-1 partitions, fail before any
    # list of that size exists (the check is against remaining bytes)
    with pytest.raises(UserDataError):
        decode_sticky_user_data(struct.pack(">i", 2**31 - 1) + b"\x00" * 100)
    with pytest.raises(UserDataError):
        decode_sticky_user_data(struct.pack(">ih", 1, 1) + b"t" + struct.pack(">i", 2**31 - 1))


def test_oversized_user_data_is_refused() -> None:
    blob = _spec_v0([("t", [0])]) + b"\x00" * MAX_USER_DATA_BYTES
    with pytest.raises(UserDataError, match="larger than the allowed maximum"):
        decode_sticky_user_data(blob)
    assert read_sticky_user_data(blob) == StickyUserData((), DEFAULT_GENERATION)
    with pytest.raises(UserDataError, match="larger than the allowed maximum of 16 bytes"):
        decode_sticky_user_data(b"\x00" * 17, max_bytes=16)


def test_invalid_utf8_topic_is_replaced_like_java() -> None:
    data = struct.pack(">ih", 1, 2) + b"\xff\xfe" + struct.pack(">ii", 1, 0)
    (tp,) = decode_sticky_user_data(data).partitions
    assert tp == TP("\ufffd\ufffd", 0)


def test_encode_rejects_unencodable() -> None:
    with pytest.raises(UserDataError, match="larger than the maximum string length"):
        encode_sticky_user_data([TP("x" * 40000, 0)], 1)
    with pytest.raises(UserDataError, match="partition of topic 't'"):
        encode_sticky_user_data([TP("t", 2**31)], 1)
    with pytest.raises(UserDataError, match="generation"):
        encode_sticky_user_data([], 2**40)


partitions_st = st.lists(
    st.builds(TP, st.text(min_size=0, max_size=12), st.integers(-(2**31), 2**31 - 1)), max_size=30
)


@given(partitions_st, st.one_of(st.none(), INT32))
def test_sticky_round_trip(parts: list[TP], generation: int | None) -> None:
    decoded = decode_sticky_user_data(encode_sticky_user_data(parts, generation))
    assert decoded.generation == generation
    assert sorted(decoded.partitions) == sorted(parts)


@given(partitions_st, INT32)
def test_body_matches_kafka_python_codec(parts: list[TP], generation: int) -> None:
    """kafka-python 3.0.12's StickyAssignorUserData writes a 2-byte version header that Java's
    StickyAssignor does not have; after it, the body is the same V1 layout."""
    from kafka.coordinator.assignors.sticky.user_data import StickyAssignorUserData

    by_topic: dict[str, list[int]] = {}
    for tp in parts:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    theirs = StickyAssignorUserData(sorted(by_topic.items()), generation).encode()
    ours = encode_sticky_user_data(parts, generation)
    assert theirs[:2] == b"\x00\x01"
    assert theirs[2:] == ours
    back = StickyAssignorUserData.decode(b"\x00\x01" + ours)
    assert back.generation == generation
    assert sorted(TP(t.topic, p) for t in back.previous_assignment for p in t.partitions) == sorted(parts)


@given(st.binary(max_size=200))
def test_hostile_bytes_never_crash(data: bytes) -> None:
    try:
        decoded = decode_sticky_user_data(data)
    except UserDataError:
        decoded = None
    lenient = read_sticky_user_data(data)
    if decoded is None:
        assert lenient == StickyUserData((), DEFAULT_GENERATION)
    else:
        assert lenient == decoded
        # every decoded partition consumed at least 4 bytes
        assert 4 * len(decoded.partitions) <= len(data)
    assert read_cooperative_generation(data) is not None
    read_priority(data)


@given(
    st.lists(st.tuples(st.text(max_size=5), st.lists(INT32, max_size=5)), max_size=5), st.binary(max_size=12)
)
def test_structured_garbage_never_crashes(entries: list[tuple[str, list[int]]], tail: bytes) -> None:
    data = _spec_v0(entries) + tail
    result = read_sticky_user_data(data)
    assert len(result.partitions) == sum(len(p) for _, p in entries)


# --- cooperative generation ---------------------------------------------------------------------
@given(INT32)
def test_cooperative_round_trip(generation: int) -> None:
    assert encode_cooperative_user_data(generation) == struct.pack(">i", generation)
    assert decode_cooperative_user_data(encode_cooperative_user_data(generation)) == generation


def test_cooperative_fallbacks_like_java() -> None:
    assert read_cooperative_generation(None) is None  # no userData: Optional.empty()
    assert read_cooperative_generation(b"") == DEFAULT_GENERATION  # unparseable: DEFAULT_GENERATION
    assert read_cooperative_generation(b"\x00\x01") == DEFAULT_GENERATION
    assert read_cooperative_generation(struct.pack(">i", 9) + b"x") == 9
    with pytest.raises(UserDataError, match="only 0 bytes available"):
        decode_cooperative_user_data(b"")


# --- failover assignment userData (leader → member): INT16 version 0, INT8 ranked, INT32 priority ---
def test_failover_assignment_layout() -> None:
    # the layout spelled out byte by byte, not through our own struct
    assert encode_failover_assignment(10) == bytes([0, 0, 1, 0, 0, 0, 10])
    assert encode_failover_assignment(-2) == bytes([0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFE])
    assert encode_failover_assignment(None) == bytes(7)
    with pytest.raises(UserDataError, match="out of range"):
        encode_failover_assignment(2**31)


@given(st.one_of(st.none(), INT32))
def test_failover_assignment_round_trip(priority: int | None) -> None:
    data = encode_failover_assignment(priority)
    assert data  # never empty: that is what keeps Kafka from converting the group
    assert decode_failover_assignment(data) == FailoverAssignment(priority)
    # a later version may append fields: ignored
    assert decode_failover_assignment(data + b"more") == FailoverAssignment(priority)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "at least 7 bytes, got 0"),
        (b"\x00\x00\x01\x00", "at least 7 bytes, got 4"),
        (b"\xff\xff\x01\x00\x00\x00\x01", "version -1 is negative"),
        (b"\x00\x00\x02\x00\x00\x00\x01", "flag 2 is not 0 or 1"),
    ],
)
def test_failover_assignment_malformed(data: bytes, message: str) -> None:
    with pytest.raises(UserDataError, match=message):
        decode_failover_assignment(data)


@given(st.binary(max_size=64))
def test_failover_assignment_hostile_bytes_raise_only_user_data_error(data: bytes) -> None:
    try:
        decoded = decode_failover_assignment(data)
    except UserDataError:
        return
    assert decoded.priority is None or -(2**31) <= decoded.priority < 2**31
