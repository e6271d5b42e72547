"""The live workers' :class:`JoinWatchdog` (``kafka_python_member``) on a fake kafka-python
coordinator: each stuck state it must recover from, and the healthy states it must leave alone.
No cluster needed."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest
from kafka.coordinator.heartbeat import Heartbeat
from kafka.future import Future

from kafka_python_member import JoinWatchdog


class FakeCoordinator:
    """The attributes of kafka-python 3.0.12's ConsumerCoordinator the watchdog reads."""

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
        return SimpleNamespace(generation_id=2)


def _watchdog(coordinator: FakeCoordinator) -> tuple[JoinWatchdog, list[dict[str, Any]]]:
    events: list[dict[str, Any]] = []
    return JoinWatchdog(SimpleNamespace(_coordinator=coordinator), events.append, 6.0, grace_s=0.2), events


def test_a_finished_join_nobody_will_consume_is_rejoined() -> None:
    coordinator = FakeCoordinator()
    coordinator._heartbeat_enabled = False  # disabled for the join
    coordinator.state = "<rebalancing>"
    task = Future()
    coordinator._join_task = task
    watchdog, events = _watchdog(coordinator)
    watchdog.check()
    assert coordinator.rejoins == 0  # the join is still in flight: leave it alone
    task.success(b"assignment")
    coordinator.rejoin_needed = True  # join_group_async's loop will consume it
    watchdog.check()
    assert coordinator.rejoins == 0
    coordinator.rejoin_needed = False  # the kafka-python bug: nobody will
    watchdog.check()
    assert coordinator.rejoins == 1
    assert events == [{"ev": "unstick", "reason": "unconsumed-join", "generation": 2}]


def test_parked_without_heartbeats_and_no_join_is_rejoined_after_the_grace() -> None:
    coordinator = FakeCoordinator()
    coordinator._heartbeat_enabled = False
    coordinator.state = "<rebalancing>"
    watchdog, events = _watchdog(coordinator)
    watchdog.check()
    assert coordinator.rejoins == 0
    time.sleep(0.3)
    watchdog.check()
    assert coordinator.rejoins == 1 and events[0]["reason"] == "parked-without-heartbeats"


def test_no_heartbeat_success_for_longer_than_the_session_is_rejoined() -> None:
    coordinator = FakeCoordinator()
    watchdog, events = _watchdog(coordinator)
    watchdog.check()
    assert coordinator.rejoins == 0  # healthy: heartbeats succeed
    coordinator.heartbeat.last_receive -= 8.0
    coordinator.heartbeat.last_reset -= 8.0
    watchdog.check()
    assert coordinator.rejoins == 1 and events[0]["reason"] == "no-heartbeat-success"


@pytest.mark.parametrize("rejoin_needed", [False, True])
def test_healthy_or_already_rejoining_members_are_left_alone(rejoin_needed: bool) -> None:
    coordinator = FakeCoordinator()
    coordinator.rejoin_needed = rejoin_needed
    if rejoin_needed:
        coordinator._heartbeat_enabled = False
    watchdog, events = _watchdog(coordinator)
    for _ in range(3):
        watchdog.check()
        time.sleep(0.15)
    assert coordinator.rejoins == 0 and events == []
