"""fetch_stall.py: a partition librdkafka keeps assigned and never fetches, read from its statistics.
The rule is checked on documents shaped as librdkafka's STATISTICS.md describes them (one of them
written by librdkafka itself), and the Consumer's error on the confluent fakes."""

from __future__ import annotations

import json
from typing import Any

import confluent_kafka
import pytest
from confluent_consumer_fakes import CONF, install_fakes  # this directory is on sys.path
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_placement.clients.confluent import consumer as consumer_module
from kafka_placement.clients.confluent.fetch_stall import (
    FetchStallMonitor,
    FetchStallWatch,
    PartitionFetch,
    fetch_states,
)
from kafka_placement.errors import FetchStalledError, InvalidArgumentError

ACTIVE_NO_ANSWER = PartitionFetch("active", 0, -1)
FETCHED = PartitionFetch("active", 0, 22_795)


def document(partitions: dict[int, tuple[str, int, int]], topic: str = "t") -> str:
    """A statistics document with the fields STATISTICS.md names for each partition (and librdkafka's
    ``-1`` entry, the queue of messages without a partition)."""
    entries = {
        str(p): {"partition": p, "fetch_state": state, "leader": leader, "hi_offset": hi, "desired": True}
        for p, (state, leader, hi) in partitions.items()
    }
    entries["-1"] = {"partition": -1, "fetch_state": "none", "leader": -1, "hi_offset": -1001}
    return json.dumps({"name": "c#consumer-1", "topics": {topic: {"topic": topic, "partitions": entries}}})


def test_fetch_states_reads_the_document_librdkafka_itself_writes(librdkafka_statistics: str) -> None:
    # a consumer with no reachable broker, partition t[3] assigned: librdkafka reports it unled, unanswered
    seen = fetch_states(librdkafka_statistics)[("t", 3)]
    assert seen.leader == -1 and seen.hi_offset < 0
    assert seen.fetch_state in {"none", "stopping", "stopped", "offset-query", "offset-wait", "active"}


def test_fetch_states_leaves_out_the_unassigned_queue() -> None:
    assert fetch_states(document({0: ("active", 0, -1)})) == {("t", 0): ACTIVE_NO_ANSWER}


def test_a_partition_unanswered_for_the_timeout_is_stalled() -> None:
    watch = FetchStallWatch(30)
    assert watch.observe(0.0, {("t", 0): ACTIVE_NO_ANSWER, ("t", 1): FETCHED}) == []
    assert watch.observe(29.9, {("t", 0): ACTIVE_NO_ANSWER, ("t", 1): FETCHED}) == []
    (stall,) = watch.observe(30.0, {("t", 0): ACTIVE_NO_ANSWER, ("t", 1): FETCHED})
    assert stall.partition == ("t", 0) and stall.leader == 0 and stall.seconds == 30.0


def test_a_partition_with_no_leader_or_a_moving_one_unanswered_for_the_timeout_is_stalled() -> None:
    """Seed 40: every partition ``active`` with leader -1 for minutes (librdkafka's brokers never up)."""
    watch = FetchStallWatch(30)
    watch.observe(0.0, {("t", 0): PartitionFetch("active", -1, -1)})
    watch.observe(10.0, {("t", 0): PartitionFetch("active", 2, -1)})
    watch.observe(20.0, {("t", 0): ACTIVE_NO_ANSWER})
    (stall,) = watch.observe(30.0, {("t", 0): PartitionFetch("active", -1, -1)})
    assert stall.leader == -1 and stall.seconds == 30.0
    assert stall.named == "t[0] (leader unknown, 30 s)"


def test_a_partition_with_no_leader_and_an_earlier_high_watermark_is_stalled() -> None:
    """Seed 50: twelve partitions ``active`` with leader -1 for 262 s, each still showing the high
    watermark of this member's earlier assignment of it (21,516 for partition 0): nothing fetched them."""
    watch = FetchStallWatch(30)
    unled = PartitionFetch("active", -1, 21_516)
    assert watch.observe(0.0, {("t", 0): unled, ("t", 1): FETCHED}) == []
    assert watch.observe(29.0, {("t", 0): unled, ("t", 1): FETCHED}) == []
    (stall,) = watch.observe(30.0, {("t", 0): unled, ("t", 1): FETCHED})
    assert stall.partition == ("t", 0) and stall.named == "t[0] (leader unknown, 30 s)"
    # a leader found again, with an answer, starts it over
    watch.observe(40.0, {("t", 0): PartitionFetch("active", 3, 21_600)})
    assert watch.observe(60.0, {("t", 0): unled}) == []


def test_an_answer_a_pause_or_another_state_start_over() -> None:
    for interruption in (
        {("t", 0): FETCHED},
        {("t", 0): PartitionFetch("offset-query", 0, -1)},
        {},  # no longer fetched (revoked)
    ):
        watch = FetchStallWatch(30)
        watch.observe(0.0, {("t", 0): ACTIVE_NO_ANSWER})
        watch.observe(20.0, interruption)
        assert watch.observe(40.0, {("t", 0): ACTIVE_NO_ANSWER}) == [], interruption
        assert len(watch.observe(70.0, {("t", 0): ACTIVE_NO_ANSWER})) == 1
    watch = FetchStallWatch(30)
    watch.observe(0.0, {("t", 0): ACTIVE_NO_ANSWER})
    assert watch.observe(40.0, {("t", 0): ACTIVE_NO_ANSWER}, paused={("t", 0)}) == []


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0.1, 20.0),
            st.sampled_from(
                ["no-answer", "answered", "leader-2", "no-leader", "no-leader-old-answer", "gone"]
            ),
        ),
        max_size=40,
    )
)
def test_never_stalled_before_the_timeout_has_passed_without_a_break(
    steps: list[tuple[float, str]],
) -> None:
    states = {
        "no-answer": {("t", 0): ACTIVE_NO_ANSWER},
        "answered": {("t", 0): FETCHED},
        "leader-2": {("t", 0): PartitionFetch("active", 2, -1)},
        "no-leader": {("t", 0): PartitionFetch("active", -1, -1)},
        "no-leader-old-answer": {("t", 0): PartitionFetch("active", -1, 22_795)},
        "gone": {},
    }
    watch, now, run_start = FetchStallWatch(30), 0.0, None
    for gap, kind in steps:
        now += gap
        seen = states[kind]
        fetch = seen.get(("t", 0))
        unanswered = fetch is not None and (fetch.hi_offset < 0 or fetch.leader < 0)
        if not unanswered:
            run_start = None
        elif run_start is None:
            run_start = now
        stalled = watch.observe(now, seen)
        expected = run_start is not None and now - run_start >= 30
        assert bool(stalled) == expected, (steps, now, run_start)


def test_the_timeout_is_checked() -> None:
    for bad in (0, 0.5, 3601, float("nan"), True, "60"):
        with pytest.raises(InvalidArgumentError, match="fetch stall timeout"):
            FetchStallWatch(bad)  # type: ignore[arg-type]


def test_the_monitor_names_the_partition_in_one_line_and_passes_documents_on() -> None:
    clock = [0.0]
    monitor = FetchStallMonitor(30, "g", set(), clock=lambda: clock[0])
    got: list[str] = []
    cb = monitor.settings({"stats_cb": got.append, "statistics.interval.ms": 1})["stats_cb"]
    cb("not json")  # skipped, logged; never raised into librdkafka's callback
    for second in (0.0, 10.0, 31.0):
        clock[0] = second
        cb(document({0: ("active", 4, -1), 1: ("active", 4, 100)}))
    assert len(got) == 3 and monitor.error is not None  # the two at 0.0 s: one within the 1 ms interval
    text = str(monitor.error)
    assert "\n" not in text and "t[0] (leader 4, 31 s)" in text and "t[1]" not in text
    assert "close this consumer and create a new one" in text


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    install_fakes(monkeypatch)


def test_the_consumer_raises_it_from_poll_and_consume_and_never_for_a_paused_partition(fakes: Any) -> None:
    consumer = consumer_module.Consumer(CONF, assignor="range", fetch_stall_timeout_s=30)
    stats = consumer._rk.conf["stats_cb"]
    monitor = consumer._fetch_stall
    assert consumer._rk.conf["statistics.interval.ms"] == 5000
    clock = [0.0]
    monitor._clock = lambda: clock[0]
    consumer.pause([confluent_kafka.TopicPartition("t", 0)])
    for second in (0.0, 40.0):
        clock[0] = second
        stats(document({0: ("active", 1, -1)}))
    consumer._loop.next_drive = 0.0
    assert consumer.poll(0) is None  # paused by the application: not a stall
    consumer.resume([confluent_kafka.TopicPartition("t", 0)])
    for second in (50.0, 81.0):
        clock[0] = second
        stats(document({0: ("active", 1, -1)}))
    consumer._loop.next_drive = 0.0
    with pytest.raises(FetchStalledError, match=r"t\[0\] \(leader 1, 31 s\)"):
        consumer.poll(0)
    consumer._loop.next_drive = 0.0
    with pytest.raises(FetchStalledError):
        consumer.consume(10, 0)
    consumer.close()  # closes as any other: the application builds a new one


def test_none_turns_it_off(fakes: Any) -> None:
    consumer = consumer_module.Consumer(CONF, assignor="range", fetch_stall_timeout_s=None)
    assert "stats_cb" not in consumer._rk.conf and consumer._fetch_stall is None
    consumer.close()
