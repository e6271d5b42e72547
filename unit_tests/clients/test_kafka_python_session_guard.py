"""SessionGuard (clients/kafka_python/session_guard.py) on kafka-python's own Heartbeat, a fake coordinator
and consumer, and a fake clock. The rule checked is the classic protocol's own (KIP-62: the coordinator
removes a member whose heartbeats stop for session.timeout.ms): the member must not consume from the
moment its session may have ended until its membership is confirmed. Live: test_kafka_python_consumer_live."""

from __future__ import annotations

from typing import Any

import kafka
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.coordinator.base import BaseCoordinator
from kafka.coordinator.heartbeat import Heartbeat

from kafka_placement.clients.kafka_python.session_guard import MARGIN_S, SessionGuard

SESSION_S = 6.0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class FakeCoordinator:
    group_id = "g"

    def __init__(self, clock: Clock) -> None:
        self.heartbeat = Heartbeat(group_id="g", session_timeout_ms=6000, heartbeat_interval_ms=1000)
        self.generation = 3
        self._clock = clock

    def answer(self) -> None:
        self.heartbeat.last_receive = self._clock.now

    def group_metadata(self) -> Any:
        class Meta:
            generation_id = self.generation

        return Meta()


class FakeConsumer:
    def __init__(self, partitions: set[int]) -> None:
        self.assigned = set(partitions)
        self.paused_now: set[int] = set()

    def assignment(self) -> set[int]:
        return set(self.assigned)

    def paused(self) -> set[int]:
        return set(self.paused_now)

    def pause(self, *partitions: int) -> None:
        self.paused_now |= set(partitions)

    def resume(self, *partitions: int) -> None:
        self.paused_now -= set(partitions)

    def consumable(self) -> set[int]:
        return self.assigned - self.paused_now


def rig(partitions: set[int]) -> tuple[Clock, FakeCoordinator, FakeConsumer, SessionGuard]:
    clock = Clock()
    coordinator, consumer = FakeCoordinator(clock), FakeConsumer(partitions)
    coordinator.answer()
    return clock, coordinator, consumer, SessionGuard(consumer, coordinator, SESSION_S, clock=clock)


def test_silent_for_a_session_less_the_margin_pauses_what_the_application_had_not() -> None:
    clock, _coordinator, consumer, guard = rig({0, 1, 2})
    consumer.pause(2)  # the application's own
    told: list[tuple[frozenset[Any], float]] = []
    guard.on_suspect = lambda partitions, silent: told.append((partitions, silent))
    clock.now += SESSION_S - MARGIN_S - 0.1
    guard.check()
    assert consumer.consumable() == {0, 1} and not guard.suspected
    clock.now += 0.1
    guard.check()
    assert consumer.consumable() == set() and guard.paused == {0, 1}
    assert told == [(frozenset({0, 1}), SESSION_S - MARGIN_S)] and guard.suspicions == 1


def test_a_heartbeat_answered_resumes_exactly_what_it_paused_and_still_assigned() -> None:
    clock, coordinator, consumer, guard = rig({0, 1, 2})
    consumer.pause(2)
    clock.now += SESSION_S
    guard.check()
    consumer.assigned.discard(1)  # a cooperative revocation meanwhile
    resumed: list[frozenset[Any]] = []
    guard.on_cleared = resumed.append
    clock.now += 5
    guard.check()
    assert guard.suspected  # still silent: still paused
    coordinator.answer()
    guard.check()
    assert not guard.suspected and resumed == [frozenset({0})]
    assert consumer.paused_now == {1, 2}  # the application's pause stays; 1 is no longer ours to resume


def test_a_removal_is_not_a_rejoin_and_a_new_generation_is() -> None:
    clock, coordinator, consumer, guard = rig({0, 1})
    clock.now += SESSION_S
    guard.check()
    coordinator.generation = -1  # kafka-python's NO_GENERATION: the broker removed the member
    clock.now += 1
    guard.check()
    assert guard.suspected
    coordinator.generation = 4  # the rejoin completed
    clock.now += 1
    guard.check()
    assert not guard.suspected and consumer.consumable() == {0, 1}


def test_a_completed_join_counts_as_confirmation_until_its_first_heartbeat() -> None:
    clock, coordinator, _consumer, guard = rig({0})
    guard.check()
    clock.now += 30  # a long join: no heartbeat answers while it lasts (kafka-python pauses them)
    coordinator.generation = 4
    guard.check()
    assert not guard.suspected
    clock.now += SESSION_S - MARGIN_S - 0.1
    guard.check()
    assert not guard.suspected


def test_a_member_with_nothing_assigned_pauses_nothing() -> None:
    clock, _coordinator, _consumer, guard = rig(set())
    clock.now += 60
    guard.check()
    assert not guard.suspected and guard.suspicions == 0


def test_the_kafka_python_names_it_reads_are_there() -> None:
    # fails loudly when a kafka-python release renames what the guard reads
    assert Heartbeat().last_receive == float("-inf")
    assert callable(BaseCoordinator.group_metadata)
    for name in ("assignment", "paused", "pause", "resume"):
        assert callable(getattr(kafka.KafkaConsumer, name))


steps = st.lists(
    st.one_of(
        st.tuples(st.just("wait"), st.floats(0.05, 4.0)),
        st.tuples(st.just("answer"), st.just(0.0)),
        st.tuples(st.just("rejoin"), st.just(0.0)),
        st.tuples(st.just("removed"), st.just(0.0)),
        st.tuples(st.just("revoke"), st.integers(0, 3).map(float)),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(steps)
def test_never_consumable_once_the_session_may_have_ended_unless_confirmed_since(
    script: list[tuple[str, float]],
) -> None:
    clock, coordinator, consumer, guard = rig({0, 1, 2, 3})
    confirmed = clock.now  # the last heartbeat answer or completed join, by this test's own count
    for step, value in script:
        if step == "wait":
            clock.now += value
        elif step == "answer":
            coordinator.answer()
            confirmed = clock.now
        elif step == "rejoin":
            coordinator.generation = max(coordinator.generation, 0) + 1
            confirmed = clock.now
        elif step == "removed":
            coordinator.generation = -1
        else:
            consumer.assigned.discard(int(value))
        guard.check()
        if clock.now - confirmed >= SESSION_S - MARGIN_S:
            assert consumer.consumable() == set(), (clock.now - confirmed, consumer.consumable())
        elif not guard.suspected:
            assert consumer.consumable() == consumer.assigned
