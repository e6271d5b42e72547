"""soak/confluent_member.py: the confluent members' commits logged, and their consume loop ending on a
consumer that failed for good (shaped as librdkafka and confluent-kafka deliver it), or on a fetch stall;
the replaced consumer closed within a bound and its partitions released."""

from __future__ import annotations

import threading
import time


def test_a_confluent_commit_logs_each_accepted_offset_and_nothing_when_refused() -> None:
    from types import SimpleNamespace

    from kafka_placement.soak.confluent_member import confluent_commit
    from kafka_placement.soak.events import Committed

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

    from kafka_placement.soak.confluent_member import committed_logger
    from kafka_placement.soak.events import Committed

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

    from kafka_placement.soak.confluent_member import FatalConsumerError, consume_confluent

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

    from kafka_placement.soak.confluent_member import FatalConsumerError, consume_confluent

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

    from kafka_placement.soak.confluent_member import FatalConsumerError, consume_confluent

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


def test_a_fetch_stall_ends_the_consume_loop_for_the_member_to_replace_the_consumer() -> None:
    import pytest

    from kafka_placement.errors import FetchStalledError
    from kafka_placement.soak.confluent_member import consume_confluent

    class Stalled:
        def consume(self, n: int, timeout: float) -> list[object]:
            raise FetchStalledError("group g: librdkafka has not fetched t[0] (leader 0, 31 s) ...")

    with pytest.raises(FetchStalledError, match=r"t\[0\]"):
        consume_confluent(Stalled(), lambda: None, lambda event: None, "g", "m", threading.Event())


def test_a_replaced_consumer_that_never_closes_does_not_hold_the_member() -> None:
    from kafka_placement.soak.confluent_member import close_within

    release = threading.Event()

    class Hangs:
        def close(self) -> None:
            release.wait(10)

    class Closes:
        closed = False

        def close(self) -> None:
            self.closed = True

    started = time.monotonic()
    assert close_within(Hangs(), 0.2) is False
    assert time.monotonic() - started < 2
    release.set()
    closes = Closes()
    assert close_within(closes, 5) is True and closes.closed


def test_a_replaced_consumer_is_closed_and_releases_what_it_owned_and_a_closing_member_builds_no_other() -> (
    None
):
    from kafka_placement.soak.confluent_member import replaced
    from kafka_placement.soak.events import Ownership
    from kafka_placement.soak.member_events import OwnershipLog

    class Closes:
        closed = False

        def close(self) -> None:
            self.closed = True

    written: list[object] = []
    owned = OwnershipLog(written.append, "g", "m")
    owned.set({1, 2})
    closing = threading.Event()
    first = Closes()
    assert replaced(first, RuntimeError("stalled"), owned, closing) is True
    assert first.closed and owned.owned == frozenset()
    assert isinstance(written[-1], Ownership) and written[-1].released is not None

    closing.set()
    second = Closes()
    assert replaced(second, RuntimeError("fatal"), owned, closing) is False
    assert second.closed
