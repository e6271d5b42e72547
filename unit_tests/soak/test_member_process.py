"""The member process's word that its membership ended (``session-lost``), checked on kafka-python's own
``reset_generation`` and ``Heartbeat`` (the coordinator under both kinds of soak member)."""

from __future__ import annotations

import threading
import time

from kafka.coordinator.base import BaseCoordinator, Generation, MemberState
from kafka.coordinator.heartbeat import Heartbeat

from kafka_placement.soak.member_process import watch_membership


class Coordinator:
    """What ``reset_generation`` touches of kafka-python's coordinator, with its own method."""

    reset_generation = BaseCoordinator.reset_generation

    def __init__(self, generation: Generation) -> None:
        self._lock = threading.RLock()
        self._generation = generation
        self.rejoin_needed = False
        self.state = MemberState.STABLE
        self.heartbeat = Heartbeat(group_id="g", session_timeout_ms=6000, heartbeat_interval_ms=1000)


def watched(
    generation: Generation, closing: threading.Event | None = None
) -> tuple[Coordinator, list[float]]:
    coordinator = Coordinator(generation)
    told: list[float] = []
    watch_membership(coordinator, told.append, closing or threading.Event())
    return coordinator, told


def test_a_member_answered_unknown_member_id_says_so_once_with_its_last_good_heartbeat() -> None:
    coordinator, told = watched(Generation(7, "kp-high-1", "failover"))
    coordinator.heartbeat.received_heartbeat()
    good_at = time.time()
    time.sleep(0.3)
    coordinator.reset_generation()  # what kafka-python does on UNKNOWN_MEMBER_ID
    # kafka-python's own reset ran
    assert coordinator._generation.generation_id == -1 and coordinator.rejoin_needed
    assert len(told) == 1 and abs(told[0] - good_at) < 0.05  # since: the last good heartbeat, not now
    coordinator.reset_generation()  # again before it rejoined: no second membership to lose
    assert len(told) == 1


def test_an_illegal_generation_keeps_the_member_id_and_is_a_loss_too() -> None:
    coordinator, told = watched(Generation(3, "cf-high-1", "failover"))
    coordinator.reset_generation(member_id="cf-high-1")
    assert coordinator._generation.member_id == "cf-high-1" and len(told) == 1


def test_the_first_join_and_leaving_on_close_are_no_loss() -> None:
    # a first JoinGroup answered MEMBER_ID_REQUIRED: the broker hands out an id, nothing was held
    coordinator, told = watched(Generation(-1, "", None))
    coordinator.reset_generation(member_id="kp-low-1")
    assert told == []
    closing = threading.Event()
    coordinator, told = watched(Generation(5, "kp-low-1", "failover"), closing)
    closing.set()
    coordinator.reset_generation()  # LeaveGroup on close
    assert told == []


def test_a_confluent_commit_logs_each_accepted_offset_and_nothing_when_refused() -> None:
    from types import SimpleNamespace

    from kafka_placement.soak.events import Committed
    from kafka_placement.soak.member_process import confluent_commit

    class Refused(Exception):
        pass

    class Consumer:
        def __init__(self, answer: object) -> None:
            self.answer = answer

        def commit(self, asynchronous: bool) -> object:
            assert asynchronous is False  # the soak's members commit synchronously (at-least-once)
            if isinstance(self.answer, Exception):
                raise self.answer
            return self.answer

    written: list[object] = []
    done = [
        SimpleNamespace(partition=0, offset=12, error=None),
        SimpleNamespace(partition=1, offset=-1001, error=None),  # OFFSET_INVALID: nothing consumed
        SimpleNamespace(partition=2, offset=7, error="NOT_COORDINATOR"),
    ]
    confluent_commit(Consumer(done), (Refused,), written.append, "g", "m")
    assert [(e.partition, e.offset) for e in written if isinstance(e, Committed)] == [(0, 12)]
    confluent_commit(Consumer(Refused("fenced")), (Refused,), written.append, "g", "m")
    assert len(written) == 1


def test_an_asynchronous_commits_accepted_offsets_are_logged_by_on_commit() -> None:
    """The consumer-protocol members commit asynchronously (librdkafka's synchronous commit can hang)."""
    from types import SimpleNamespace

    from kafka_placement.soak.events import Committed
    from kafka_placement.soak.member_process import committed_logger

    written: list[object] = []
    on_commit = committed_logger(written.append, "g", "cp-high")
    on_commit(
        None,
        [
            SimpleNamespace(partition=3, offset=40, error=None),
            SimpleNamespace(partition=4, offset=-1001, error=None),  # nothing consumed there
            SimpleNamespace(partition=5, offset=9, error="UNKNOWN_MEMBER_ID"),
        ],
    )
    on_commit("REQUEST_TIMED_OUT", [SimpleNamespace(partition=6, offset=1, error=None)])  # request refused
    assert [(e.group, e.member, e.partition, e.offset) for e in written if isinstance(e, Committed)] == [
        ("g", "cp-high", 3, 40)
    ]
    assert len(written) == 1


class ErrorMessage:
    """What confluent-kafka's consume() returns for an error event."""

    def __init__(self, error: object) -> None:
        self._error = error

    def error(self) -> object:
        return self._error


def test_a_fatal_error_ends_the_consume_loop_and_a_passing_one_does_not() -> None:
    import confluent_kafka
    import pytest

    from kafka_placement.soak.member_process import FatalConsumerError, consume_confluent

    passing = confluent_kafka.KafkaError(confluent_kafka.KafkaError._TRANSPORT, "broker down")
    fatal = confluent_kafka.KafkaError(
        confluent_kafka.KafkaError.GROUP_ID_NOT_FOUND, "The group id does not exist", fatal=True
    )
    batches = [[ErrorMessage(passing)], [ErrorMessage(fatal)]]

    class FakeConsumer:
        closed = False

        def consume(self, n: int, timeout: float) -> list[object]:
            return batches.pop(0)

        def close(self) -> None:
            self.closed = True

    consumer = FakeConsumer()
    with pytest.raises(FatalConsumerError, match=r"failed for good: .*The group id does not exist"):
        consume_confluent(consumer, lambda: None, lambda event: None, "g", "m", threading.Event())
    assert batches == [] and not consumer.closed  # the caller closes it and builds a new one


def test_a_fatal_error_in_the_shape_librdkafka_delivers_it_ends_the_consume_loop() -> None:
    """librdkafka puts a consumer's fatal error on the consumer queue with the code ``_FATAL``, and
    confluent-kafka builds that message's error with ``fatal()`` False: the code alone says it."""
    import confluent_kafka
    import pytest

    from kafka_placement.soak.member_process import FatalConsumerError, consume_confluent

    as_delivered = confluent_kafka.KafkaError(
        confluent_kafka.KafkaError._FATAL,
        "Fatal error: Broker: The group id does not exist: ConsumerGroupHeartbeat fatal error",
    )
    assert not as_delivered.fatal()  # the shape that was missed
    batches = [[ErrorMessage(as_delivered)]]

    class FakeConsumer:
        def consume(self, n: int, timeout: float) -> list[object]:
            if not batches:
                raise AssertionError("the loop went on polling a dead consumer")
            return batches.pop(0)

    with pytest.raises(FatalConsumerError, match=r"failed for good: .*group id does not exist"):
        consume_confluent(FakeConsumer(), lambda: None, lambda event: None, "g", "m", threading.Event())


def test_a_fatal_error_raised_out_of_consume_ends_the_loop_and_another_exception_is_not_swallowed() -> None:
    import confluent_kafka
    import pytest

    from kafka_placement.soak.member_process import FatalConsumerError, consume_confluent

    raised = [
        confluent_kafka.KafkaException(
            confluent_kafka.KafkaError(
                confluent_kafka.KafkaError.FENCED_INSTANCE_ID, "Static consumer fenced", fatal=True
            )
        ),
        confluent_kafka.KafkaException(confluent_kafka.KafkaError(confluent_kafka.KafkaError._STATE, "x")),
    ]

    class FakeConsumer:
        def consume(self, n: int, timeout: float) -> list[object]:
            raise raised.pop(0)

    with pytest.raises(FatalConsumerError, match="Static consumer fenced"):
        consume_confluent(FakeConsumer(), lambda: None, lambda event: None, "g", "m", threading.Event())
    with pytest.raises(confluent_kafka.KafkaException, match="x"):
        consume_confluent(FakeConsumer(), lambda: None, lambda event: None, "g", "m", threading.Event())
