"""OffsetFetch through kafka-python's admin across a coordinator move (kafka_python/group_offsets.py)."""

from __future__ import annotations

from typing import Any

import pytest
from kafka import TopicPartition as KafkaTopicPartition
from kafka.errors import GroupAuthorizationFailedError, NotCoordinatorError
from kafka.structs import OffsetAndMetadata
from moving_coordinator import MovingCoordinatorAdmin  # this directory is on sys.path

from kafka_placement.clients.kafka_python.group_offsets import fetch_group_offsets, forget_coordinators
from kafka_placement.soak.readback import committed_offsets

T0 = KafkaTopicPartition("t", 0)


def test_a_moved_coordinator_is_looked_up_again() -> None:
    admin = MovingCoordinatorAdmin({"g": {T0: OffsetAndMetadata(5, "", -1)}}, {"g": 1})
    fetch_group_offsets(admin, ["g"], pause_s=0)
    admin.where["g"] = 2
    # kafka-python alone keeps asking broker 1
    with pytest.raises(NotCoordinatorError):
        admin.list_group_offsets({"g": None})
    assert fetch_group_offsets(admin, ["g"], pause_s=0) == {"g": {T0: OffsetAndMetadata(5, "", -1)}}
    assert admin.cache == {(0, "g"): 2}


def test_the_soak_readback_survives_a_moved_coordinator() -> None:
    admin = MovingCoordinatorAdmin({"g": {T0: OffsetAndMetadata(5, "", -1)}}, {"g": 1})
    assert committed_offsets(admin, "t", ["g"]) == {"g": {0: 5}}
    admin.where["g"] = 3
    assert committed_offsets(admin, "t", ["g"]) == {"g": {0: 5}}


class Answers:
    def __init__(self, errors: list[Exception]) -> None:
        self.errors, self.calls = errors, 0

    def list_group_offsets(self, specs: dict[str, None]) -> dict[str, Any]:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return {g: {} for g in specs}


def test_retries_are_bounded_and_other_errors_are_raised_at_once() -> None:
    never = Answers([NotCoordinatorError() for _ in range(10)])
    with pytest.raises(NotCoordinatorError):
        fetch_group_offsets(never, ["g"], pause_s=0, tries=3)
    assert never.calls == 3
    denied = Answers([GroupAuthorizationFailedError()])
    with pytest.raises(GroupAuthorizationFailedError):
        fetch_group_offsets(denied, ["g"], pause_s=0)
    assert denied.calls == 1


def test_forgetting_touches_only_the_named_groups_and_tolerates_another_admin() -> None:
    admin = MovingCoordinatorAdmin({}, {})
    admin.cache.update({(0, "a"): 1, (0, "b"): 2, (1, "a"): 3})
    forget_coordinators(admin, {"a"})
    assert admin.cache == {(0, "b"): 2}
    forget_coordinators(object(), {"a"})  # no cache where kafka-python 3.0.x keeps it: nothing to do
