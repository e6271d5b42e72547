"""The cluster-health samples: Kafka's group → coordinator partition mapping (expected values computed
in jshell with Java's ``String.hashCode`` and Kafka's ``Utils.abs(h) % n``), the health read from a
snapshot, and each group's coordinator outages from the samples."""

from __future__ import annotations

import pytest

from kafka_placement.replicas.placement_audit import ClusterSnapshot, PartitionState
from kafka_placement.soak.events import Health, dump_event, parse_event
from kafka_placement.soak.health import (
    OFFSETS_TOPIC,
    coordinator_outages,
    coordinator_partition,
    health_of,
    unanswered_sample,
)
from kafka_placement.vocabulary import TopicPartition

# jshell: h = g.hashCode(); a = h == Integer.MIN_VALUE ? 0 : Math.abs(h); a % 12, a % 50
JAVA = [
    ("kp-soak-427bbd-fo-kp", 2, 44),
    ("kp-soak-427bbd-fo-cf", 8, 36),
    ("kp-soak-427bbd-coop", 8, 24),
    ("polygenelubricants", 0, 0),  # hashCode() == Integer.MIN_VALUE: Utils.abs gives 0, not a mask
    ("billing", 1, 9),
]


@pytest.mark.parametrize(("group", "of_12", "of_50"), JAVA)
def test_coordinator_partition_is_kafkas(group: str, of_12: int, of_50: int) -> None:
    assert coordinator_partition(group, 12) == of_12
    assert coordinator_partition(group, 50) == of_50


def test_health_of_a_snapshot() -> None:
    def state(leader: int | None, isr: tuple[int, ...]) -> PartitionState:
        return PartitionState((0, 1, 2), leader, isr)

    snap = ClusterSnapshot(
        (),
        {
            TopicPartition(OFFSETS_TOPIC, 0): state(0, (0, 1, 2)),
            TopicPartition(OFFSETS_TOPIC, 2): state(None, ()),
            TopicPartition(OFFSETS_TOPIC, 7): state(None, ()),
            TopicPartition("t", 0): state(None, ()),
            TopicPartition("t", 1): state(1, (1,)),
            TopicPartition("t", 2): state(2, (2, 0)),
            TopicPartition("other", 0): state(None, ()),
        },
    )
    assert health_of(snap, "t", 2, 5.0) == Health((2, 7), 1, 1, 5.0)


def test_outages_run_from_the_sample_that_saw_it_offline_to_the_first_that_saw_it_back() -> None:
    samples = [
        Health((), 0, 0, 10.0),
        Health((2,), 0, 3, 20.0),
        Health((2, 8), 1, 3, 25.0),
        Health((8,), 0, 0, 170.0),
        Health((), 0, 0, 180.0),
        Health((8,), 0, 0, 300.0),
    ]
    outages = coordinator_outages(reversed(samples), {"fo-kp": 2, "fo-cf": 8, "quiet": 5}, until=400.0)
    assert outages == {"fo-kp": [(20.0, 170.0)], "fo-cf": [(25.0, 180.0), (300.0, 400.0)], "quiet": []}


def test_a_health_event_survives_its_json_line() -> None:
    event = Health((2, 8), 1, 3, 12.5)
    assert parse_event(dump_event(event)) == event


def test_a_group_refused_by_its_coordinator_is_in_an_outage_though_its_partition_has_a_leader() -> None:
    """Session 22's secured run: for four minutes every FindCoordinator named a broker that answered
    NOT_COORDINATOR while every ``__consumer_offsets`` partition had a leader."""
    samples = [
        Health((), 0, 0, 10.0),
        Health((), 0, 0, 20.0, ("coop", "fo-kp")),
        Health((2,), 0, 0, 30.0, ("coop",)),  # fo-kp: its partition offline now
        Health((), 0, 0, 250.0, ("coop",)),
        Health((), 0, 0, 260.0),
    ]
    outages = coordinator_outages(samples, {"fo-kp": 2, "coop": 8, "fo-cf": 8}, until=400.0)
    assert outages == {"fo-kp": [(20.0, 250.0)], "coop": [(20.0, 260.0)], "fo-cf": []}


def test_refused_groups_survive_the_json_line_and_older_lines_have_none() -> None:
    event = Health((2,), 0, 1, 12.5, ("coop", "fo-kp"))
    assert parse_event(dump_event(event)) == event
    older = '{"ev":"health","offline_coordinators":[2],"topic_offline":0,"topic_under_min_isr":1,"t":12.5}'
    assert parse_event(older) == Health((2,), 0, 1, 12.5)


def test_health_of_records_the_refused_groups_sorted() -> None:
    snap = ClusterSnapshot((), {TopicPartition("t", 0): PartitionState((0,), 0, (0,))})
    assert health_of(snap, "t", 1, 1.0, {"fo-kp": "NotCoordinatorError", "coop": "x"}).refused_groups == (
        "coop",
        "fo-kp",
    )


def test_a_sample_nothing_answered_puts_every_group_in_an_outage_until_one_answers() -> None:
    """Seed 41: no sample for 106 s while the coordinators loaded; the members' stalls went unexcused."""
    seen = Health((), 0, 3, 100.0)
    silent = unanswered_sample(seen, ["g-b", "g-a"], 105.0)
    assert silent == Health((), 0, 3, 105.0, ("g-a", "g-b"))
    assert unanswered_sample(None, ["g-a"], 1.0) == Health((), 0, 0, 1.0, ("g-a",))
    healths = [seen, silent, unanswered_sample(silent, ["g-a", "g-b"], 110.0), Health((), 0, 0, 120.0)]
    assert coordinator_outages(healths, {"g-a": 3, "g-b": 4}, until=200.0) == {
        "g-a": [(105.0, 120.0)],
        "g-b": [(105.0, 120.0)],
    }
