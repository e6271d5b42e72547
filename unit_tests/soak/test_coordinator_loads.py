"""coordinator_loads.py: Kafka's group coordinator failing to load a __consumer_offsets partition, read
from broker logs. The log lines are Kafka 4.4.0's own, from seed 50's brokers (shortened where marked)."""

from __future__ import annotations

from kafka_placement.soak.coordinator_loads import CoordinatorLoadFailure, coordinator_load_failures

_RECORD = (
    "CoordinatorRecord(key=ConsumerGroupCurrentMemberAssignmentKey(groupId='kp-soak-6c4cc9-fo-mig', "
    "memberId='TsxXTWcNTrqOjpn/eAy0+w'), value=ApiMessageAndVersion(...))"  # shortened
)
_CAUSE = (
    "java.lang.IllegalStateException: Cannot set the epoch of DP9P7lY8ReiwRlZ56PEWTQ-0 to 2 because the "
    "partition is still owned at epoch 2"
)


def _failed_load(at: str, broker: int, epoch: int) -> str:
    return (
        f"[{at}] ERROR [GroupCoordinator id={broker}] Failed to load metadata from __consumer_offsets-11 "
        f"with epoch {epoch} due to Replaying record {_RECORD} from __consumer_offsets-11 at offset 423214 "
        "with producer id -1 and producer epoch -1 failed.. (org.apache.kafka.coordinator.common.runtime."
        "CoordinatorRuntime)\n"
        f"java.lang.RuntimeException: Replaying record {_RECORD} from __consumer_offsets-11 at offset 423214 "
        "with producer id -1 and producer epoch -1 failed.\n"
        "\tat org.apache.kafka.coordinator.common.runtime.CoordinatorLoaderImpl.lambda$processMemoryRecords$0"
        "(CoordinatorLoaderImpl.java:292) ~[kafka-coordinator-common-4.4.0.jar:?]\n"
        f"Caused by: {_CAUSE}\n"
        "\tat org.apache.kafka.coordinator.group.modern.consumer.ConsumerGroup.lambda$addPartitionEpochs$1"
        "(ConsumerGroup.java:1173) ~[kafka-group-coordinator-4.4.0.jar:?]\n"
        "\t... 11 more\n"
    )


_LEADERSHIP_MOVED = (
    "[2026-11-30 17:44:56,247] ERROR [GroupCoordinator id=0] Failed to load metadata from "
    "__consumer_offsets-6 with epoch 17 due to Stopped loading records from __consumer_offsets-6 because "
    "the partition is not online or is no longer the leader.. "
    "(org.apache.kafka.coordinator.common.runtime.CoordinatorRuntime)\n"
)
_NEXT_ENTRY = (
    "[2026-11-30 17:41:43,867] INFO [GroupCoordinator id=2 topic=__consumer_offsets partition=11] "
    "[GroupId=kp-soak-6c4cc9-fo-mig] Unloaded group metadata for group epoch 2. "
    "(org.apache.kafka.coordinator.group.GroupMetadataManager)\n"
    "Caused by: not part of the entry above\n"
)


def test_a_partition_that_failed_to_load_is_named_with_its_brokers_group_and_root_cause() -> None:
    logs = {
        "broker-2": _failed_load("2026-11-30 17:41:43,828", 2, 22)
        + _NEXT_ENTRY
        + _failed_load("2026-11-30 17:55:01,714", 2, 41),
        "broker-4": _failed_load("2026-11-30 17:42:12,764", 4, 23),
        "broker-0": _LEADERSHIP_MOVED,
        "controller": "[2026-11-30 17:41:00,000] INFO nothing of the kind\n",
    }
    assert coordinator_load_failures(logs) == [
        CoordinatorLoadFailure(
            partition="__consumer_offsets-11",
            brokers=(2, 4),
            times=3,
            first="2026-11-30 17:41:43,828",
            last="2026-11-30 17:55:01,714",
            groups=("kp-soak-6c4cc9-fo-mig",),
            cause=_CAUSE,
        )
    ]


def test_a_load_stopped_because_leadership_moved_is_not_a_failure() -> None:
    assert coordinator_load_failures({"broker-0": _LEADERSHIP_MOVED}) == []
    assert coordinator_load_failures({}) == []


def test_without_a_stack_trace_the_reason_is_the_cause_and_it_is_cut() -> None:
    line = (
        "[2026-11-30 17:41:43,828] ERROR [GroupCoordinator id=2] Failed to load metadata from "
        "__consumer_offsets-3 with epoch 5 due to " + "x" * 1000 + "\n"
    )
    (failure,) = coordinator_load_failures({"broker-2": line + _NEXT_ENTRY})
    assert failure.partition == "__consumer_offsets-3" and failure.groups == ()
    assert failure.cause == "x" * 300
