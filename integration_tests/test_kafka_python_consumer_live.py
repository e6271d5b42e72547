"""kafka-python's join race, end state reproduced live: a member whose coordinator sits with heartbeats
off, no join in flight and no rejoin requested — what a JoinGroup/SyncGroup finishing while nobody
consumes it leaves behind. Plain ``kafka.KafkaConsumer`` is dropped by the broker and never notices
(its partitions go to the other member while it still holds them); ours rejoins and nobody is lost."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import kafka
import pytest

from kafka_placement.clients.kafka_python import KafkaConsumer, RangeAssignor

SESSION_MS = 6000  # the broker's group.min.session.timeout.ms


def _members(factory: Callable[..., Any], bootstrap: str, topic: str, group: str) -> list[Any]:
    members = [
        factory(
            group_id=group,
            bootstrap_servers=bootstrap,
            session_timeout_ms=SESSION_MS,
            heartbeat_interval_ms=1000,
            enable_auto_commit=False,  # a commit would reveal the loss; many consumers commit rarely
            partition_assignment_strategy=[RangeAssignor()],
        )
        for _ in range(2)
    ]
    # The topic is in every member's metadata before anyone joins: a leader that learns of it only after
    # its first assignment hits kafka-python's join race while the group forms (not what this test is about).
    for member in members:
        deadline = time.monotonic() + 30
        while not member.partitions_for_topic(topic) and time.monotonic() < deadline:
            time.sleep(0.2)
        member.subscribe([topic])
    return members


def _poll_until(members: list[Any], done: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for member in members:
            member.poll(timeout_ms=100)
        if done():
            return True
    return False


def _group_size(admin: Any, group: str) -> int:
    return len(admin.describe_groups([group])[group].get("members", []))


@pytest.mark.parametrize("factory", [kafka.KafkaConsumer, KafkaConsumer], ids=["plain", "ours"])
def test_a_parked_member(
    factory: Callable[..., Any], kafka_cluster: Any, kafka_admin: Any, kafka_topic_factory: Callable[..., str]
) -> None:
    topic = kafka_topic_factory(partitions=6)
    group = f"race-{uuid.uuid4().hex[:8]}"
    members = _members(factory, kafka_cluster.bootstrap_servers, topic, group)
    try:

        def both_assigned() -> bool:
            owned = [{tp.partition for tp in m.assignment()} for m in members]
            return all(owned) and owned[0] | owned[1] == set(range(6)) and not owned[0] & owned[1]

        assert _poll_until(members, both_assigned, 60), "the group never formed"
        parked, other = members
        before = list(getattr(parked, "join_rescues", []))  # the race may already have struck while forming
        parked._coordinator._disable_heartbeat()  # the race's end state
        # longer than the session timeout: the broker expels a member that stays parked
        _poll_until(members, lambda: False, SESSION_MS / 1000 + 6)
        size = _group_size(kafka_admin, group)
        if factory is kafka.KafkaConsumer:
            # reproduced: the broker dropped it, the other member took everything, it still believes
            assert size == 1
            assert {tp.partition for tp in other.assignment()} == set(range(6))
            assert parked.assignment(), "plain kafka-python noticed after all: the race is not reproduced"
        else:
            assert parked.join_rescues[len(before) :][:1] == ["parked-without-heartbeats"]
            assert _poll_until(members, both_assigned, 30) and _group_size(kafka_admin, group) == 2
    finally:
        for member in members:
            member.close(autocommit=False, timeout_ms=5000)
