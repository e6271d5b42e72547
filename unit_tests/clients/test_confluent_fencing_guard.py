"""The fencing guard of a consumer-protocol member, fed librdkafka statistics documents (one written by
librdkafka itself, its coordinator's response count and group state then set per step) and a fake
consumer recording pause/resume."""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

import confluent_kafka
import pytest

from kafka_placement.clients.confluent.consumer import Consumer
from kafka_placement.clients.confluent.fencing_guard import STATS_INTERVAL_MS, FencingGuard
from kafka_placement.clients.consumer_protocol import confluent_failover_config
from kafka_placement.errors import ConsumerConfigError

TP = confluent_kafka.TopicPartition


@pytest.fixture()
def template(librdkafka_statistics: str) -> dict[str, Any]:
    """librdkafka's own statistics document (unit_tests/conftest.py) as a dict."""
    doc: dict[str, Any] = json.loads(librdkafka_statistics)
    assert any(b["name"] == "GroupCoordinator" for b in doc["brokers"].values())
    return doc


def _doc(
    template: dict[str, Any], answers: int, join_state: str = "steady", *, waiting: int = 0, timeouts: int = 0
) -> str:
    doc = copy.deepcopy(template)
    for broker in doc["brokers"].values():
        if broker["name"] == "GroupCoordinator":
            broker["rx"] = answers
            broker["waitresp_cnt"] = waiting
            broker["req_timeouts"] = timeouts
    doc["cgrp"]["join_state"] = join_state
    return json.dumps(doc)


class FakeConsumer:
    def __init__(self, assigned: list[tuple[str, int]]) -> None:
        self.assigned = assigned
        self.calls: list[tuple[str, list[tuple[str, int]]]] = []

    def assignment(self) -> list[Any]:
        return [TP(t, p) for t, p in self.assigned]

    def pause(self, tps: list[Any]) -> None:
        self.calls.append(("pause", [(tp.topic, tp.partition) for tp in tps]))

    def resume(self, tps: list[Any]) -> None:
        self.calls.append(("resume", [(tp.topic, tp.partition) for tp in tps]))


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _guard(assigned: list[tuple[str, int]]) -> tuple[FencingGuard, FakeConsumer, Clock, list[Any]]:
    clock, told = Clock(), []
    guard = FencingGuard(
        6000,
        on_suspect=lambda tps: told.append(("suspect", [tp.partition for tp in tps])),
        on_cleared=lambda tps: told.append(("cleared", [tp.partition for tp in tps])),
        clock=clock,
    )
    consumer = FakeConsumer(assigned)
    guard.watch(consumer)
    return guard, consumer, clock, told


def test_a_silent_coordinator_pauses_the_assignment_an_answer_resumes_it(template: dict[str, Any]) -> None:
    guard, consumer, clock, told = _guard([("t", 0), ("t", 1)])
    for second, answers in [(0, 1), (1, 2), (2, 3), (5, 3)]:  # answering, then silent since 2 s
        clock.now = second
        guard.on_stats(_doc(template, answers))
    assert consumer.calls == []
    clock.now = 6.0  # 4 s of silence = the 6 s session less the 2 s margin
    guard.on_stats(_doc(template, 3))
    assert consumer.calls == [("pause", [("t", 0), ("t", 1)])]
    assert told == [("suspect", [0, 1])] and guard.suspected
    consumer.assigned = [("t", 1)]  # meanwhile partition 0 went elsewhere (an incremental revocation)
    clock.now = 30.0
    guard.on_stats(_doc(template, 4))  # the coordinator answers: steady for 1 s first
    clock.now = 31.0
    guard.on_stats(_doc(template, 5))
    assert consumer.calls[-1] == ("resume", [("t", 1)])  # only what it paused and still holds
    assert told[-1] == ("cleared", [1]) and not guard.suspected


def test_a_fencing_answer_resumes_nothing_until_the_rejoin_is_over(template: dict[str, Any]) -> None:
    guard, consumer, clock, _ = _guard([("t", 0)])
    guard.on_stats(_doc(template, 1))
    clock.now = 5.0
    guard.on_stats(_doc(template, 1))
    assert consumer.calls == [("pause", [("t", 0)])]
    for second in (10.0, 11.0, 12.0):  # answered: fenced, librdkafka revokes and rejoins
        clock.now = second
        guard.on_stats(_doc(template, int(second), join_state="wait-unassign-to-complete"))
    assert consumer.calls == [("pause", [("t", 0)])]


def test_a_partition_lost_and_assigned_again_after_the_clearing_is_resumed(template: dict[str, Any]) -> None:
    guard, consumer, clock, told = _guard([("t", 0), ("t", 1)])
    guard.on_stats(_doc(template, 1))
    clock.now = 5.0
    guard.on_stats(_doc(template, 1))
    consumer.assigned = []  # the answer fenced it: revoked as lost
    for second in (11.0, 12.0):  # every request answered over a heartbeat interval + 1 s, then steady 1 s
        clock.now = second
        guard.on_stats(_doc(template, int(second)))
    assert consumer.calls == [("pause", [("t", 0), ("t", 1)])]  # nothing held to resume
    consumer.assigned = [("t", 1), ("t", 2)]  # the rejoin's assignment (librdkafka may keep 1 paused)
    clock.now = 13.0
    guard.on_stats(_doc(template, 13))
    assert consumer.calls[-1] == ("resume", [("t", 1)])
    assert told == [("suspect", [0, 1]), ("cleared", []), ("cleared", [1])]
    clock.now = 14.0
    guard.on_stats(_doc(template, 14))
    assert len(consumer.calls) == 2  # 0 never came back: left alone


def test_answers_while_heartbeats_time_out_resume_nothing(template: dict[str, Any]) -> None:
    """Session 30's secured soak: the coordinator's connection answered the member's offset commits while
    its heartbeats timed out; the broker had fenced it, and it resumed on those answers."""
    guard, consumer, clock, told = _guard([("t", 0)])
    guard.on_stats(_doc(template, 1))
    clock.now = 5.0
    guard.on_stats(_doc(template, 1, waiting=1))
    assert told == [("suspect", [0])]
    for second in range(6, 40):  # answers every second, a heartbeat timing out every 5 s
        clock.now = float(second)
        guard.on_stats(_doc(template, second, waiting=1 if second % 5 else 0, timeouts=second // 5))
    assert consumer.calls == [("pause", [("t", 0)])] and guard.suspected
    for second in range(40, 46):  # every request answered, one in flight at each look
        clock.now = float(second)
        guard.on_stats(_doc(template, second, waiting=1, timeouts=8))
    assert guard.suspected
    clock.now = 47.0  # nothing in flight, none failed for 7 s (heartbeat interval 5 s + 1 s): confirmed
    guard.on_stats(_doc(template, 47, timeouts=8))
    assert guard.suspected  # then steady for 1 s
    clock.now = 48.0
    guard.on_stats(_doc(template, 48, timeouts=8))
    assert consumer.calls[-1] == ("resume", [("t", 0)]) and told[-1] == ("cleared", [0])


def test_a_standby_with_nothing_assigned_is_told_nothing(template: dict[str, Any]) -> None:
    guard, consumer, clock, told = _guard([])
    guard.on_stats(_doc(template, 1))
    clock.now = 60.0
    guard.on_stats(_doc(template, 1))
    clock.now = 62.0
    guard.on_stats(_doc(template, 2))
    assert consumer.calls == [] and told == []


def test_the_applications_stats_cb_still_gets_its_documents_at_its_interval(template: dict[str, Any]) -> None:
    got: list[str] = []
    clock = Clock()
    guard = FencingGuard(6000, clock=clock)
    settings = guard.settings({"statistics.interval.ms": 5000, "stats_cb": got.append, "group.id": "g"})
    assert settings["statistics.interval.ms"] == STATS_INTERVAL_MS
    assert settings["group.id"] == "g"
    for second in range(11):
        clock.now = float(second)
        settings["stats_cb"](_doc(template, second))
    assert len(got) == 3  # at 0, 5 and 10 s
    assert len(FencingGuard(6000).settings({})) == 2  # without one of its own: none is called


def test_a_document_it_cannot_read_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    guard, consumer, _, _ = _guard([("t", 0)])
    stats_cb = guard.settings({})["stats_cb"]  # what librdkafka calls
    with caplog.at_level(logging.WARNING):
        stats_cb("{not json")
        stats_cb(json.dumps({"cgrp": {"join_state": "steady"}, "brokers": {}}))
    assert consumer.calls == []
    assert caplog.text.count("statistics document not read") == 2


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"session_timeout_ms": 999}, "session_timeout_ms must be in [1000, 3600000], got 999"),
        ({"session_timeout_ms": 6.5}, "session_timeout_ms must be an int, got 6.5"),
    ],
)
def test_bad_settings_are_named(kwargs: dict[str, Any], named: str) -> None:
    with pytest.raises(ConsumerConfigError) as caught:
        FencingGuard(**kwargs)
    assert named in str(caught.value)


def test_the_factory_builds_the_member_with_a_guard_by_default() -> None:
    config = confluent_failover_config(3, None, {"bootstrap.servers": "127.0.0.1:1", "group.id": "g"})
    guard = FencingGuard(6000)
    consumer = Consumer.for_consumer_protocol(config, preflight=False, fencing_guard=guard)
    try:
        assert type(consumer) is confluent_kafka.Consumer and guard._consumer is consumer
    finally:
        consumer.close()
    named = "fencing_guard must be a FencingGuard, True or False, got 1"
    with pytest.raises(ConsumerConfigError, match=named):
        Consumer.for_consumer_protocol(config, preflight=False, fencing_guard=1)  # type: ignore[arg-type]
