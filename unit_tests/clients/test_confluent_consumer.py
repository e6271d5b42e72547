"""The confluent Consumer's public calls with fake librdkafka and kafka-python clients (no broker):
commits, the group metadata for transactions, subscriptions, close."""

from __future__ import annotations

from typing import Any

import confluent_kafka
import pytest
from confluent_consumer_fakes import (  # this directory is on sys.path
    CONF,
    Record,
    _event,
    _make,
    install_fakes,
)
from confluent_kafka.cimpl import (
    Consumer as RdKafkaConsumer,  # the binding itself (the fakes replace the alias)
)
from kafka import errors as kafka_errors

from kafka_placement.clients.confluent import consumer as consumer_module
from kafka_placement.clients.confluent.thread_handoff import ASSIGN
from kafka_placement.errors import CommitFailedError


@pytest.fixture(autouse=True)
def fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    install_fakes(monkeypatch)


def test_consumer_group_metadata_carries_the_generation_and_is_refused_while_not_in_one() -> None:
    """What librdkafka reads back from ``consumer_group_metadata()`` (the bytes
    ``send_offsets_to_transaction`` takes) is kafka-python's generation and member id; after a loss
    (generation -1, which the broker would not fence) it is refused until the next assignment."""
    from kafka_placement.clients.confluent.consumer_group_metadata import GroupMetadata, read_group_metadata

    consumer, _ = _make()
    _event(consumer, ASSIGN, [0])
    assert read_group_metadata(consumer.consumer_group_metadata()) == GroupMetadata("g", 3, "m-1", None)
    consumer._coordinator._generation.lost = True
    consumer._loop.next_drive = 0.0
    consumer.poll(0)  # on_lost
    with pytest.raises(CommitFailedError, match=r"not in a generation \(generation -1, member id ''\)"):
        consumer.consumer_group_metadata()
    consumer._coordinator._generation.lost = False  # rejoined
    with pytest.raises(CommitFailedError):  # lost until the next assignment, as commits are
        consumer.consumer_group_metadata()
    _event(consumer, ASSIGN, [0])
    assert read_group_metadata(consumer.consumer_group_metadata()).generation_id == 3
    consumer.close()
    with pytest.raises(RuntimeError, match="closed"):
        consumer.consumer_group_metadata()


def test_commits_refused_by_the_coordinator_are_typed_errors() -> None:
    consumer, _ = _make()
    _event(consumer, ASSIGN, [0])
    consumer._coordinator.commit_error = kafka_errors.CommitFailedError("kicked out")
    with pytest.raises(CommitFailedError, match="commit refused for generation 3"):
        consumer.commit(offsets=[confluent_kafka.TopicPartition("t", 0, 5)], asynchronous=False)


def test_a_commit_per_record_commits_the_next_offset_and_is_refused_once_closed() -> None:
    consumer, _ = _make()
    _event(consumer, ASSIGN, [0, 1])
    assert consumer.commit(Record(1, 41), asynchronous=True) is None
    assert consumer._coordinator.commits == [{("t", 1): 42}]  # what librdkafka commits: offset + 1
    consumer.close()
    with pytest.raises(RuntimeError, match="Consumer closed"):
        consumer.commit(Record(1, 42), asynchronous=True)


def test_commit_without_arguments_uses_positions_and_nothing_stored_is_no_offset() -> None:
    consumer, _ = _make()
    _event(consumer, ASSIGN, [0, 1])
    with pytest.raises(confluent_kafka.KafkaException) as info:
        consumer.commit()
    assert info.value.args[0].code() == confluent_kafka.KafkaError._NO_OFFSET
    consumer._rk.positions[("t", 1)] = 17
    done = consumer.commit(asynchronous=False)
    assert [(tp.partition, tp.offset) for tp in done] == [(1, 17)]


def test_close_revokes_then_leaves_and_closes_both_clients() -> None:
    consumer, app = _make()
    _event(consumer, ASSIGN, [3])
    consumer.close()
    assert app.seen[-1] == ("revoke", [3])
    assert consumer._kc.closed and consumer._rk.closed
    with pytest.raises(RuntimeError, match="closed"):
        consumer.poll(0)


def test_poll_hands_out_fetched_messages_and_takes_the_groups_turn_only_when_due(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    consumer, _ = _make()
    _event(consumer, ASSIGN, [0])
    turns: list[float] = []
    monkeypatch.setattr(consumer._driver, "drive", turns.append)
    consumer._rk_poll = lambda timeout: "record"  # librdkafka has records fetched
    consumer._rk.poll = consumer._rk_poll
    consumer._loop.next_drive = float("inf")  # the group's next turn not due
    assert [consumer.poll(1.0) for _ in range(100)] == ["record"] * 100
    assert turns == []
    consumer._loop.next_drive = 0.0  # due: the turn comes before the next record
    assert consumer.poll(1.0) == "record"
    assert len(turns) == 1 and consumer._loop.next_drive > 0


def test_regex_subscriptions_are_librdkafkas_names_starting_with_a_caret() -> None:
    import re

    from kafka_placement.errors import ConsumerConfigError

    consumer = consumer_module.Consumer(CONF, assignor="range")
    consumer.subscribe(["^orders-.*", "audit"])
    regex = re.compile(consumer._kc.pattern)
    # kafka-python's coordinator matches topics with pattern.match, re-evaluated per metadata update
    assert [t for t in ["orders-1", "orders-", "audit", "audit2", "xorders-1", "t"] if regex.match(t)] == [
        "orders-1",
        "orders-",
        "audit",
    ]
    with pytest.raises(ConsumerConfigError, match="invalid topic regex"):
        consumer.subscribe(["^orders-("])


def test_librdkafkas_methods_are_offered_by_name_and_nothing_else_is_forwarded() -> None:
    consumer, _ = _make()
    for name in consumer_module.SUPPORTED_LIBRDKAFKA_METHODS:  # each one librdkafka's, and ours
        assert callable(getattr(RdKafkaConsumer, name)) and callable(getattr(consumer_module.Consumer, name))
    calls: list[tuple[str, Any]] = []
    consumer._rk.seek = lambda tp: calls.append(("seek", tp.offset))
    consumer._rk.pause = lambda tps: calls.append(("pause", len(tps)))
    consumer.seek(confluent_kafka.TopicPartition("t", 0, 42))
    consumer.pause([confluent_kafka.TopicPartition("t", 0)])
    assert calls == [("seek", 42), ("pause", 1)]
    with pytest.raises(AttributeError):
        consumer.memberid_of_someone_else  # noqa: B018 (no __getattr__ forwarding any more)


def test_close_from_a_rebalance_callback_is_refused_and_close_after_it_works() -> None:
    consumer = consumer_module.Consumer(CONF, assignor="range")
    refused: list[Exception] = []

    def on_assign(c: Any, partitions: list[Any]) -> None:
        try:
            c.close()
        except RuntimeError as exc:
            refused.append(exc)

    consumer.subscribe(["t"], on_assign=on_assign)
    _event(consumer, ASSIGN, [0])
    assert refused and "from a rebalance callback" in str(refused[0])
    consumer.close()
    assert consumer.phase.value == "closed" and consumer._rk.closed
