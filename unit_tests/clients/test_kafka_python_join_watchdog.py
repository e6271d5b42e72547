"""The library's JoinWatchdog (the confluent Consumer's guard against kafka-python 3.0.12's stuck
joins) on a fake coordinator with a fake clock. The live workers' adapter is tested in
integration_tests/test_kafka_python_member.py."""

from __future__ import annotations

from typing import Any

from kafka.coordinator.heartbeat import Heartbeat
from kafka.future import Future

from kafka_placement.clients.kafka_python.join_watchdog import JoinWatchdog


class FakeCoordinator:
    def __init__(self) -> None:
        self._join_task: Future | None = None
        self._heartbeat_enabled = True
        self.rejoin_needed = False
        self.rejoins = 0
        self.state = "<stable>"
        self.heartbeat = Heartbeat(group_id="g", session_timeout_ms=6000, heartbeat_interval_ms=1000)
        self.heartbeat.received_heartbeat()

    def need_rejoin(self) -> bool:
        return self.rejoin_needed

    def request_rejoin(self) -> None:
        self.rejoins += 1
        self.rejoin_needed = True

    def group_metadata(self) -> Any:
        class Meta:
            generation_id = 4

        return Meta()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_join_awaited_by_the_caller_is_never_judged_stuck() -> None:
    coordinator, clock = FakeCoordinator(), Clock()
    coordinator._heartbeat_enabled = False  # off for the join
    fired: list[tuple[str, dict[str, Any]]] = []
    watchdog = JoinWatchdog(coordinator, 6.0, clock=clock, on_fire=lambda r, d: fired.append((r, d)))
    for _ in range(10):  # a long join (a rebalance waiting for slow members)
        clock.now += 3.0
        assert watchdog.check(join_in_flight=True) is None
    assert coordinator.rejoins == 0 and fired == []
    clock.now += 1.0
    assert watchdog.check() is None  # the join ended with heartbeats still off: grace starts
    clock.now += 2.5
    assert watchdog.check() == "parked-without-heartbeats" and coordinator.rejoins == 1


def test_unconsumed_join_reports_the_generation_and_refires_only_after_a_pause() -> None:
    coordinator, clock = FakeCoordinator(), Clock()
    task = Future()
    task.success(b"")
    coordinator._join_task = task
    fired: list[tuple[str, dict[str, Any]]] = []
    watchdog = JoinWatchdog(coordinator, 6.0, clock=clock, on_fire=lambda r, d: fired.append((r, d)))
    assert watchdog.check() == "unconsumed-join"
    assert fired == [("unconsumed-join", {"generation": 4})]
    coordinator.rejoin_needed = False
    clock.now += 0.5
    assert watchdog.check() is None  # the requested rejoin gets its chance first
    clock.now += 1.0
    assert watchdog.check() == "unconsumed-join" and coordinator.rejoins == 2


def test_silent_heartbeats_longer_than_the_session_rejoin() -> None:
    coordinator, clock = FakeCoordinator(), Clock()
    watchdog = JoinWatchdog(coordinator, 6.0, clock=clock)
    coordinator.heartbeat.last_receive = clock.now - 5.0
    coordinator.heartbeat.last_reset = clock.now - 5.0
    assert watchdog.check() is None
    clock.now += 2.5
    assert watchdog.check() == "no-heartbeat-success"


def test_the_consumer_runs_the_watchdog_only_while_it_is_subscribed(monkeypatch: Any) -> None:
    # an assign()-ed consumer with a group id (it commits there) never joins and never heartbeats:
    # the watchdog took it for a parked member and "rejoined" it every few seconds (run 17d's log)
    import kafka
    from kafka import TopicPartition
    from kafka.consumer.subscription_state import SubscriptionState

    from kafka_placement.clients.kafka_python import KafkaConsumer

    def no_records(self: Any, timer: Any, max_records: int, update_offsets: bool = True) -> dict[Any, Any]:
        return {}

    monkeypatch.setattr(kafka.KafkaConsumer, "_poll_once", no_records)
    # the state _poll_once reads, without a client (a real one leaves a socket to a refused bootstrap)
    consumer = KafkaConsumer.__new__(KafkaConsumer)
    checks: list[str] = []
    consumer._join_watchdog = type("Watchdog", (), {"check": lambda self: checks.append("watchdog")})()
    # the session guard too runs only in a group, and before the round (records of what it paused
    # must not be returned by it)
    consumer.session_guard = type("Guard", (), {"check": lambda self: checks.append("guard")})()
    consumer._closed = False
    consumer._subscription = SubscriptionState()
    consumer._subscription.assign_from_user([TopicPartition("t", 0)])
    consumer._poll_once(None, 10)
    assert checks == []
    consumer._subscription.unsubscribe()
    consumer._subscription.subscribe(topics=["t"])
    consumer._poll_once(None, 10)
    assert checks == ["guard", "watchdog"]
