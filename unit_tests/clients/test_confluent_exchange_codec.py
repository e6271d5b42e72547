"""The commit connection's codec: every request it frames is byte for byte what kafka-python's own
one-call encoding (``ApiMessage.encode(framed=True, header=True)``) makes of it, and every answer it
returns is what kafka-python's own decoding makes of the bytes, whether decoded again or known."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka import errors as kafka_errors
from kafka.protocol.consumer import OffsetCommitResponse

from kafka_placement.clients.confluent.commit_connection import offset_commit_request
from kafka_placement.clients.confluent.exchange_codec import CORRELATION_IDS, KEPT_ANSWERS, ExchangeCodec

VERSIONS = range(0, 9)  # what the commit connection negotiates within (OFFSET_COMMIT_MAX_VERSION 8)
NOT_COORDINATOR = 16  # https://kafka.apache.org/protocol#protocol_error_codes


def _request(version: int, offsets: dict[tuple[str, int], int], member: str = "member-1") -> Any:
    return offset_commit_request(
        "group-a", 7, member, None if version < 7 else "instance-1", offsets, version
    )


def _answer(
    version: int,
    correlation_id: int,
    offsets: dict[tuple[str, int], int],
    error_code: int = 0,
    throttle_ms: int = 0,
) -> bytes:
    """The broker's answer as kafka-python encodes it (framed, with its header)."""
    response_cls = OffsetCommitResponse[version]
    topic_cls = response_cls.OffsetCommitResponseTopic
    by_topic: dict[str, list[Any]] = {}
    for topic, partition in offsets:
        by_topic.setdefault(topic, []).append(
            topic_cls.OffsetCommitResponsePartition(partition_index=partition, error_code=error_code)
        )
    fields: dict[str, Any] = {"throttle_time_ms": throttle_ms} if version >= 3 else {}
    response = response_cls(
        **fields, topics=[topic_cls(name=t, partitions=parts) for t, parts in by_topic.items()]
    )
    response.with_header(correlation_id=correlation_id)
    return bytes(response.encode(framed=True, header=True))


def _kafka_pythons_encoding(request: Any, correlation_id: int, client_id: str) -> bytes:
    request.with_header(correlation_id=correlation_id, client_id=client_id)
    return bytes(request.encode(framed=True, header=True))


offsets_strategy = st.dictionaries(
    st.tuples(st.sampled_from(["orders", "audit", "ünïcode-topic"]), st.integers(0, 2**31 - 1)),
    st.integers(-1, 2**63 - 1),
    min_size=1,
    max_size=8,
)


@settings(max_examples=200, deadline=None)
@given(
    version=st.sampled_from(VERSIONS), offsets=offsets_strategy, commits=st.integers(1, 3 * CORRELATION_IDS)
)
def test_every_request_is_kafka_pythons_own_encoding(
    version: int, offsets: dict[tuple[str, int], int], commits: int
) -> None:
    codec = ExchangeCodec("client-ü")
    request = _request(version, offsets)
    for _ in range(commits):  # headers kept from the second cycle of correlation ids on
        correlation_id = codec.next_correlation_id()
        framed = codec.encode(request, correlation_id)
    expected = _kafka_pythons_encoding(_request(version, offsets), correlation_id, "client-ü")
    assert framed == expected


def test_correlation_ids_cycle_within_their_bound() -> None:
    codec = ExchangeCodec("c")
    ids = [codec.next_correlation_id() for _ in range(2 * CORRELATION_IDS + 1)]
    assert ids[: CORRELATION_IDS + 1] == [*range(1, CORRELATION_IDS + 1), 1]
    assert all(a != b for a, b in itertools.pairwise(ids))  # consecutive exchanges differ


@pytest.mark.parametrize("version", VERSIONS)
def test_an_accepted_answer_is_decoded_once_then_known(version: int) -> None:
    codec = ExchangeCodec("c")
    offsets = {("orders", 0): 5, ("audit", 3): 9}
    request = _request(version, offsets)
    results = []
    for _ in range(2 * CORRELATION_IDS + 2):
        correlation_id = codec.next_correlation_id()
        codec.encode(request, correlation_id)
        frame = _answer(version, correlation_id, offsets)
        response, known = codec.decode(frame, request, correlation_id)
        assert (
            response.to_dict()
            == OffsetCommitResponse[version].decode(frame, framed=True, header=True).to_dict()
        )
        results.append(known)
    assert results[0] is False and all(results[1:])
    assert codec.answers_decoded == 1


@pytest.mark.parametrize("kind", ["error", "throttle"], ids=["an-error-answer", "a-throttled-answer"])
def test_an_error_or_throttled_answer_is_decoded_every_time(kind: str) -> None:
    codec = ExchangeCodec("c")
    offsets = {("orders", 0): 5}
    request = _request(8, offsets)
    for n in range(1, 4):
        correlation_id = codec.next_correlation_id()
        codec.encode(request, correlation_id)
        frame = (
            _answer(8, correlation_id, offsets, error_code=NOT_COORDINATOR)
            if kind == "error"
            else _answer(8, correlation_id, offsets, throttle_ms=250)
        )
        response, known = codec.decode(frame, request, correlation_id)
        assert not known and codec.answers_decoded == n
        if kind == "error":
            assert response.topics[0].partitions[0].error_code == NOT_COORDINATOR
        else:
            assert response.throttle_time_ms == 250


def test_a_known_answer_under_another_correlation_id_is_refused() -> None:
    codec = ExchangeCodec("c")
    offsets = {("orders", 0): 5}
    request = _request(8, offsets)
    first = codec.next_correlation_id()
    codec.encode(request, first)
    codec.decode(_answer(8, first, offsets), request, first)  # now known
    second = codec.next_correlation_id()
    codec.encode(request, second)
    with pytest.raises(kafka_errors.CorrelationIdError, match=f"sent {second}, recv {first}"):
        codec.decode(_answer(8, first, offsets), request, second)


def test_an_answer_for_other_partitions_is_not_taken_for_a_known_one() -> None:
    codec = ExchangeCodec("c")
    request = _request(8, {("orders", 0): 5})
    correlation_id = codec.next_correlation_id()
    codec.encode(request, correlation_id)
    codec.decode(_answer(8, correlation_id, {("orders", 0): 5}), request, correlation_id)
    correlation_id = codec.next_correlation_id()
    codec.encode(request, correlation_id)
    other = _answer(8, correlation_id, {("orders", 1): 5}, error_code=NOT_COORDINATOR)
    response, known = codec.decode(other, request, correlation_id)
    assert not known and response.topics[0].partitions[0].partition_index == 1


def test_the_known_answers_stay_bounded() -> None:
    codec = ExchangeCodec("c")
    for partition in range(3 * KEPT_ANSWERS):
        offsets = {("many", partition): 1}
        request = _request(8, offsets)
        correlation_id = codec.next_correlation_id()
        codec.encode(request, correlation_id)
        codec.decode(_answer(8, correlation_id, offsets), request, correlation_id)
        assert len(codec._answers) <= KEPT_ANSWERS
        assert len(codec._headers) <= CORRELATION_IDS
