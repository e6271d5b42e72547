"""The member process's word that its membership ended (``session-lost``), checked on kafka-python's own
``reset_generation`` and ``Heartbeat`` (the coordinator under both kinds of soak member)."""

from __future__ import annotations

import threading
import time

from kafka.coordinator.base import BaseCoordinator, Generation, MemberState
from kafka.coordinator.heartbeat import Heartbeat

from kafka_placement.soak.member_events import watch_membership


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
