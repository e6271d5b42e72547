# ruff: noqa: E501  (long literal JSON vectors read better on one line)
"""kafka-reassign-partitions JSON: the tool's format, strict parsing, Kafka's validation texts."""

from __future__ import annotations

import json

import pytest

from kafka_placement.errors import InvalidBrokerError, ReassignmentFormatError, UnknownTopicError
from kafka_placement.replicas.reassignment_json import (
    PartitionMove,
    as_assignment,
    check_against_cluster,
    format_reassignment,
    log_dir_moves,
    parse_reassignment,
)
from kafka_placement.vocabulary import TopicPartition

# The documented example of kafka-reassign-partitions (--execute input).
KAFKA_EXAMPLE = """{"version":1,
  "partitions":[{"topic":"foo","partition":0,"replicas":[5,6],"log_dirs":["any","any"]},
                {"topic":"foo","partition":1,"replicas":[5,6]}]}"""


def test_parse_documented_example() -> None:
    moves = parse_reassignment(KAFKA_EXAMPLE)
    assert moves == [
        PartitionMove("foo", 0, (5, 6), ("any", "any")),
        PartitionMove("foo", 1, (5, 6), None),
    ]
    assert as_assignment(moves) == {TopicPartition("foo", 0): [5, 6], TopicPartition("foo", 1): [5, 6]}


def test_format_like_the_tool_and_round_trip() -> None:
    text = format_reassignment({TopicPartition("b", 1): [3, 1], TopicPartition("a", 0): [1, 2]})
    assert text == (
        '{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},'
        '{"topic":"b","partition":1,"replicas":[3,1],"log_dirs":["any","any"]}]}'
    )
    assert as_assignment(parse_reassignment(text)) == {
        TopicPartition("a", 0): [1, 2],
        TopicPartition("b", 1): [3, 1],
    }
    assert "log_dirs" not in format_reassignment({TopicPartition("a", 0): [1]}, log_dirs=False)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"version":1,\n "partitions":[\n  {"topic":"a" "partition":0}]}', "line 3, column 16"),
        ("[1,2]", "top level must be a JSON object, got list"),
        ('{"partitions":[]}', "Partition reassignment list cannot be empty"),  # version defaults to 1
        ('{"version":"1","partitions":[]}', 'Not supported version field value "1"'),
        ('{"version":2,"partitions":[]}', "Not supported version field value 2"),
        ('{"version":1}', "top level: missing field 'partitions'"),
        ('{"version":1,"partitions":[]}', "Partition reassignment list cannot be empty"),
        (
            '{"version":1,"partitions":[{"partition":0,"replicas":[1]}]}',
            r"partitions\[0\]: missing field 'topic'",
        ),
        (
            '{"version":1,"partitions":[{"topic":"a","partition":"0","replicas":[1]}]}',
            r'partitions\[0\].partition must be an int in \[0, 2147483647\], got "0"',
        ),
        (
            '{"version":1,"partitions":[{"topic":"a","partition":2147483648,"replicas":[1]}]}',
            r"partitions\[0\].partition must be an int in \[0, 2147483647\], got 2147483648",
        ),
        (
            '{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[99999999999999999999]}]}',
            r"partitions\[0\].replicas must be a list of broker ids \(ints in \[0, 2147483647\]\)",
        ),
        (
            '{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1,-2]}]}',
            r"partitions\[0\].replicas must be a list of broker ids",
        ),
        (
            '{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[]}]}',
            "Partition replica list cannot be empty",
        ),
        (
            '{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1,1]}]}',
            "Partition replica lists may not contain duplicate entries: a-0",
        ),
        (
            '{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}',
            r"Size of replicas list \[1, 2\] is different from size of log dirs list \[\'any\'\] for partition a-0",
        ),
        (
            '{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1]},'
            '{"topic":"a","partition":0,"replicas":[2]}]}',
            "Partition reassignment contains duplicate topic partitions: a-0",
        ),
        (
            '{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1],"replica":[2]}]}',
            r"partitions\[0\]: unknown field\(s\) \['replica'\]",
        ),
    ],
)
def test_malformed_input_names_line_or_field(text: str, message: str) -> None:
    with pytest.raises(ReassignmentFormatError, match=message):
        parse_reassignment(text)


def test_check_against_cluster() -> None:
    moves = parse_reassignment(
        json.dumps({"version": 1, "partitions": [{"topic": "t", "partition": 1, "replicas": [0, 1]}]})
    )
    check_against_cluster(moves, {"t": 2}, [0, 1, 2])
    with pytest.raises(UnknownTopicError, match=r"Topic t not found\."):
        check_against_cluster(moves, {"u": 2}, [0, 1])
    with pytest.raises(
        UnknownTopicError, match=r"Unable to find partition: t-1 \(topic 't' has partitions 0..0\)"
    ):
        check_against_cluster(moves, {"t": 1}, [0, 1])
    with pytest.raises(
        InvalidBrokerError, match=r"Unknown broker id 1 \(in t-1; cluster brokers: \[0, 2\]\)"
    ):
        check_against_cluster(moves, {"t": 2}, [0, 2])


def test_an_empty_plan_is_refused_like_kafka_unless_allowed() -> None:
    empty = '{"version":1,"partitions":[]}'
    with pytest.raises(ReassignmentFormatError, match="Partition reassignment list cannot be empty"):
        parse_reassignment(empty)
    assert parse_reassignment(empty, allow_empty=True) == []


def test_log_dir_moves_are_the_replicas_with_a_named_dir() -> None:
    moves = parse_reassignment(
        '{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1,2],"log_dirs":["any","/d/b"]},'
        '{"topic":"a","partition":1,"replicas":[3]}]}'
    )
    assert log_dir_moves(moves) == {(TopicPartition("a", 0), 2): "/d/b"}


def test_deep_nesting_and_oversized_text_are_typed_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ReassignmentFormatError, match="nested too deeply"):
        parse_reassignment("[" * 100_000 + "]" * 100_000)
    import kafka_placement.replicas.reassignment_json as rj

    monkeypatch.setattr(rj, "MAX_JSON_CHARS", 10)
    with pytest.raises(ReassignmentFormatError, match="the limit is 10"):
        parse_reassignment('{"version": 1, "partitions": []}')
