"""Rebalance events applied to librdkafka, through the confluent Consumer with fake librdkafka and
kafka-python clients (no broker): what reaches librdkafka, from which offsets, which application
callback runs, the commit before a revocation."""

from __future__ import annotations

from typing import Any

import confluent_kafka
import pytest
from confluent_consumer_fakes import CONF, _event, _make, install_fakes  # this directory is on sys.path
from kafka import errors as kafka_errors
from kafka.future import Future

from kafka_placement.clients.confluent import consumer as consumer_module
from kafka_placement.clients.confluent.thread_handoff import ASSIGN, LOST, REVOKE, RebalanceEvent


@pytest.fixture(autouse=True)
def fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    install_fakes(monkeypatch)


def test_eager_assign_then_revoke_reach_librdkafka_and_the_callbacks_in_order() -> None:
    consumer, app = _make()
    consumer.poll(0)
    assert len(consumer._kc.joins) == 1  # the join started, kept in flight across polls
    consumer.poll(0)
    assert len(consumer._kc.joins) == 1
    consumer._coordinator.committed = {("t", 1): 17}
    first = _event(consumer, ASSIGN, [0, 1, 2])
    assert first.done.is_done  # the join may continue
    # librdkafka starts from the committed offsets our coordinator read; none → auto.offset.reset
    # (librdkafka's default "largest": OFFSET_END)
    end = confluent_kafka.OFFSET_END
    assert consumer._rk.calls == [("assign", [("t", 0, end), ("t", 1, 17), ("t", 2, end)])]
    assert [tp.partition for tp in consumer.assignment()] == [0, 1, 2]
    _event(consumer, REVOKE, [0, 1, 2])
    assert consumer._rk.calls[-1] == ("unassign", [])
    assert app.seen == [("assign", [0, 1, 2]), ("revoke", [0, 1, 2])]
    assert consumer.assignment() == []


def test_a_callback_that_assigns_itself_is_not_overridden() -> None:
    consumer = consumer_module.Consumer(CONF, assignor="cooperative-sticky")

    def on_assign(c: Any, partitions: list[Any]) -> None:
        for tp in partitions:
            tp.offset = 42
        c.incremental_assign(partitions)

    consumer.subscribe(["t"], on_assign=on_assign)
    _event(consumer, ASSIGN, [4])
    assert consumer._rk.calls == [("incremental_assign", [("t", 4, 42)])]


def test_cooperative_moves_only_the_partitions_that_change() -> None:
    consumer, _ = _make("cooperative-sticky")
    _event(consumer, ASSIGN, [0, 1, 2, 3])
    _event(consumer, REVOKE, [3])
    _event(consumer, ASSIGN, [5])
    end = confluent_kafka.OFFSET_END
    assert consumer._rk.calls == [
        ("incremental_assign", [("t", p, end) for p in (0, 1, 2, 3)]),
        ("incremental_unassign", [("t", 3, -1001)]),
        ("incremental_assign", [("t", 5, end)]),
    ]
    assert consumer._coordinator.fetches == [[("t", p) for p in (0, 1, 2, 3)], [("t", 5)]]  # only the new
    assert [tp.partition for tp in consumer.assignment()] == [0, 1, 2, 5]
    assert consumer.rebalance_protocol() == "COOPERATIVE"


@pytest.mark.parametrize(
    ("reset", "expected"),
    [
        ("earliest", confluent_kafka.OFFSET_BEGINNING),
        ("smallest", confluent_kafka.OFFSET_BEGINNING),
        ("beginning", confluent_kafka.OFFSET_BEGINNING),
        ("latest", confluent_kafka.OFFSET_END),
        ("largest", confluent_kafka.OFFSET_END),
        ("end", confluent_kafka.OFFSET_END),
        ("error", confluent_kafka.OFFSET_INVALID),  # librdkafka applies its own rule
    ],
)
def test_no_committed_offset_starts_where_auto_offset_reset_says(reset: str, expected: int) -> None:
    consumer, _ = _make(conf={"auto.offset.reset": reset})
    consumer._coordinator.committed = {("t", 0): 5}
    _event(consumer, ASSIGN, [0, 1])
    assert consumer._rk.calls == [("assign", [("t", 0, 5), ("t", 1, expected)])]


def _retry_due(consumer: Any) -> None:
    """The next poll is the group's turn, and the committed offsets' next read is due."""
    consumer._rebalance._next_start_try = 0.0
    consumer._loop.next_drive = 0.0
    consumer.poll(0)


def test_partitions_whose_committed_offsets_were_not_read_wait_until_they_are() -> None:
    # never OFFSET_INVALID: librdkafka would read them through its own coordinator, and a read answered
    # NOT_COORDINATOR for the whole request leaves them unfetched for good (librdkafka #5586)
    consumer, app = _make()
    consumer._coordinator.fetch_error = kafka_errors.KafkaTimeoutError("no coordinator")
    _event(consumer, ASSIGN, [0, 1])
    assert consumer._rk.calls == [("assign", [])]
    assert app.seen == [("assign", [0, 1])]  # the group's word: the member owns them
    assert [tp.partition for tp in consumer.assignment()] == [0, 1]
    consumer.poll(0)  # not due yet: no read
    assert len(consumer._coordinator.fetches) == 1
    _retry_due(consumer)  # still failing: still not fetched
    assert len(consumer._coordinator.fetches) == 2
    assert consumer._rk.calls == [("assign", [])]
    consumer._coordinator.fetch_error = None
    consumer._coordinator.committed = {("t", 0): 5}
    _retry_due(consumer)
    end = confluent_kafka.OFFSET_END
    assert consumer._rk.calls[-1] == ("incremental_assign", [("t", 0, 5), ("t", 1, end)])
    _retry_due(consumer)  # started: never read again
    assert len(consumer._coordinator.fetches) == 3


def test_a_cooperative_member_unassigns_only_what_librdkafka_fetches() -> None:
    consumer, _ = _make("cooperative-sticky")
    _event(consumer, ASSIGN, [0])
    consumer._coordinator.fetch_error = kafka_errors.KafkaTimeoutError("no coordinator")
    _event(consumer, ASSIGN, [0, 1, 2])
    end = confluent_kafka.OFFSET_END
    assert consumer._rk.calls == [("incremental_assign", [("t", 0, end)])]
    _event(consumer, REVOKE, [0, 1])
    # librdkafka refuses to unassign a partition it was never given ("not in the current assignment")
    assert consumer._rk.calls[-1] == ("incremental_unassign", [("t", 0, -1001)])
    consumer._coordinator.fetch_error = None
    _retry_due(consumer)
    assert consumer._rk.calls[-1] == ("incremental_assign", [("t", 2, end)])  # 1 was revoked meanwhile


def test_a_member_that_lost_its_partitions_does_not_read_their_offsets_again() -> None:
    consumer, app = _make()
    consumer._coordinator.fetch_error = kafka_errors.KafkaTimeoutError("no coordinator")
    _event(consumer, ASSIGN, [0, 1])
    _event(consumer, LOST, [0, 1])
    assert app.seen == [("assign", [0, 1]), ("lost", [0, 1])]
    consumer._coordinator.fetch_error = None
    _retry_due(consumer)
    assert len(consumer._coordinator.fetches) == 1
    assert consumer._rk.calls == [("assign", []), ("unassign", [])]


def test_without_on_lost_on_revoke_is_called_as_confluent_kafka_does() -> None:
    consumer, app = _make(lost_cb=False)
    _event(consumer, ASSIGN, [2])
    _event(consumer, LOST, [2])
    assert app.seen == [("assign", [2]), ("revoke", [2])]


def test_auto_commit_commits_before_revocation_and_not_after_a_loss() -> None:
    consumer, _ = _make(conf={"enable.auto.commit": True})
    _event(consumer, ASSIGN, [0, 1])
    consumer._rk.positions.update({("t", 0): 5, ("t", 1): 9})
    _event(consumer, REVOKE, [0, 1])
    assert consumer._coordinator.commits == [{("t", 0): 5, ("t", 1): 9}]
    _event(consumer, ASSIGN, [0])
    consumer._coordinator._generation.lost = True
    consumer._loop.next_drive = 0.0
    consumer.poll(0)
    assert consumer._coordinator.commits == [{("t", 0): 5, ("t", 1): 9}]


def test_librdkafka_learns_the_assigned_topics_leaders_before_the_assign() -> None:
    # assigned a topic it has no metadata for, librdkafka waits for its offset-query timer before
    # the first fetch: one metadata request (that topic's) comes first
    consumer, _ = _make()
    _event(consumer, ASSIGN, [0, 1])
    assert consumer._rk.metadata_requests == ["t"]
    assert consumer._rk.calls[-1][0] == "assign"


def test_several_topics_take_one_metadata_request_and_a_failure_does_not_stop_the_assign() -> None:
    consumer, _ = _make("cooperative-sticky")
    event = RebalanceEvent(ASSIGN, [("a", 0), ("b", 0), ("b", 1)], Future())
    assert consumer._handoff.post(event)
    consumer._loop.next_drive = 0.0
    consumer.poll(0)
    assert consumer._rk.metadata_requests == [None]  # the cluster's metadata, once

    def refused(topic: str | None = None, timeout: float = -1) -> Any:
        error = confluent_kafka.KafkaError(confluent_kafka.KafkaError._TRANSPORT)
        raise confluent_kafka.KafkaException(error)

    consumer._rk.list_topics = refused
    _event(consumer, ASSIGN, [7])
    assert consumer._rk.calls[-1] == ("incremental_assign", [("t", 7, confluent_kafka.OFFSET_END)])
    assert event.done.is_done
