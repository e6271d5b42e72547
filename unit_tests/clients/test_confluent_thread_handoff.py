"""The rebalance bridge: kafka-python's listener awaits until the application thread handled the
event (no broker; kafka-python's own event loop on its IO thread)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from kafka.net.selector import NetworkSelector
from kafka.structs import TopicPartition

from kafka_placement.clients.confluent.thread_handoff import (
    ASSIGN,
    LOST,
    REVOKE,
    RebalanceBridge,
    ThreadHandoff,
)


@pytest.fixture()
def loop() -> Iterator[NetworkSelector]:
    net = NetworkSelector()
    net.start()
    yield net
    net.stop(2000)
    net.close()  # stop() leaves the wake-up socketpair open (a ResourceWarning when collected)


def _wait(predicate: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_listener_waits_for_the_application_thread_and_loop_keeps_running(loop: NetworkSelector) -> None:
    handoff = ThreadHandoff(loop.call_soon_with_future)
    bridge = RebalanceBridge(handoff)
    listener_done = loop.call_soon_with_future(
        bridge.on_partitions_revoked, {TopicPartition("t", 1), TopicPartition("t", 0)}
    )
    _wait(lambda: handoff.pending)
    # while the listener awaits, other work on the IO loop still runs (heartbeats, commits)
    assert loop.run(lambda: 42) == 42
    assert not listener_done.is_done
    event = handoff.take()
    assert event is not None and event.kind == REVOKE and event.partitions == [("t", 0), ("t", 1)]
    assert handoff.take() is None
    handoff.finish(event)
    _wait(lambda: listener_done.is_done)
    assert listener_done.succeeded()


def test_an_application_error_is_raised_in_the_listener(loop: NetworkSelector) -> None:
    handoff = ThreadHandoff(loop.call_soon_with_future)
    bridge = RebalanceBridge(handoff)
    done = loop.call_soon_with_future(bridge.on_partitions_assigned, {TopicPartition("t", 2)})
    _wait(lambda: handoff.pending)
    event = handoff.take()
    assert event is not None and event.kind == ASSIGN
    handoff.finish(event, RuntimeError("callback failed"))
    _wait(lambda: done.is_done)
    assert isinstance(done.exception, RuntimeError)


def test_close_releases_waiting_listeners_and_later_ones_do_not_wait(loop: NetworkSelector) -> None:
    handoff = ThreadHandoff(loop.call_soon_with_future)
    bridge = RebalanceBridge(handoff)
    first = loop.call_soon_with_future(bridge.on_partitions_lost, {TopicPartition("t", 0)})
    _wait(lambda: handoff.pending)
    handoff.close()  # close() gives everything up first; the waiting listener is released last
    assert handoff.pending and not first.is_done
    released = handoff.release_waiting()
    assert [e.kind for e in released] == [LOST]
    _wait(lambda: first.is_done)
    later = loop.call_soon_with_future(bridge.on_partitions_revoked, {TopicPartition("t", 0)})
    _wait(lambda: later.is_done)
    assert not handoff.pending


def test_nothing_to_revoke_or_lose_does_not_wait_for_the_application(loop: NetworkSelector) -> None:
    # every first join revokes the empty set: no round trip through the application's poll()
    handoff = ThreadHandoff(loop.call_soon_with_future)
    bridge = RebalanceBridge(handoff)
    revoked = loop.call_soon_with_future(bridge.on_partitions_revoked, set())
    lost = loop.call_soon_with_future(bridge.on_partitions_lost, set())
    _wait(lambda: revoked.is_done and lost.is_done)
    assert not handoff.pending
    # an empty assignment still reaches the application (confluent-kafka calls on_assign with [])
    assigned = loop.call_soon_with_future(bridge.on_partitions_assigned, set())
    _wait(lambda: handoff.pending)
    event = handoff.take()
    assert event is not None and event.kind == ASSIGN and event.partitions == []
    handoff.finish(event)
    _wait(lambda: assigned.is_done)
