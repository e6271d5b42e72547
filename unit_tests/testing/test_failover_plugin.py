"""What the embedded cluster adds to each broker to load the failover assignor."""

from __future__ import annotations

from kafka_placement.testing.failover_plugin import LIBS_MOUNT, failover_broker_properties


def test_kafkas_assignors_stay_first_and_timeouts_are_lowered_with_their_minimums() -> None:
    props = failover_broker_properties()
    assert props["group.consumer.assignors"].split(",")[:2] == ["uniform", "range"]
    assert props["group.consumer.assignors"].endswith(".FailoverServerAssignor")
    assert props["replica.selector.class"].endswith(".RackPriorityReplicaSelector")
    # Kafka's defaults are 45,000 (session, and its minimum) and 5,000 (heartbeat, and its minimum): the
    # minimums must come down too or the broker refuses to start with the lower values
    assert props["group.consumer.session.timeout.ms"] == "6000"
    assert props["group.consumer.min.session.timeout.ms"] == "6000"
    assert props["group.consumer.heartbeat.interval.ms"] == props["group.consumer.min.heartbeat.interval.ms"]
    assert int(props["group.consumer.heartbeat.interval.ms"]) < 3000  # a clean close fails over within 3 s


def test_jar_is_mounted_on_the_class_path_of_both_images() -> None:
    # the official image's kafka-run-class.sh and the offline image's start script both put libs/* on it
    assert LIBS_MOUNT.startswith("/opt/kafka/libs/") and LIBS_MOUNT.endswith(".jar")
