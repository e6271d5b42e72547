"""Group reads through kafka-python's admin across a coordinator move (kafka_python/group_reads.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from kafka import TopicPartition as KafkaTopicPartition
from kafka.errors import CoordinatorLoadInProgressError, GroupAuthorizationFailedError, NotCoordinatorError
from kafka.structs import OffsetAndMetadata
from moving_coordinator import MovingCoordinatorAdmin  # this directory is on sys.path

from kafka_placement.clients.kafka_python.group_description import group_type
from kafka_placement.clients.kafka_python.group_reads import (
    COORDINATOR_TRIES,
    LIST_GROUPS_TRIES,
    ask_group_coordinator,
    fetch_group_offsets,
    forget_coordinators,
    list_groups,
    listed_by_coordinator,
    refused_by_coordinators,
)
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


class Listing:
    def __init__(self, errors: list[Exception]) -> None:
        self.errors, self.calls = errors, 0

    def list_groups(self) -> list[Any]:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return [{"group_id": "g"}]


def test_list_groups_waits_for_a_loading_coordinator_a_bounded_number_of_times() -> None:
    loading = Listing([CoordinatorLoadInProgressError(), CoordinatorLoadInProgressError()])
    assert list_groups(loading, pause_s=0) == [{"group_id": "g"}] and loading.calls == 3
    never = Listing([CoordinatorLoadInProgressError() for _ in range(LIST_GROUPS_TRIES + 5)])
    with pytest.raises(CoordinatorLoadInProgressError):
        list_groups(never, pause_s=0)
    assert never.calls == LIST_GROUPS_TRIES
    denied = Listing([GroupAuthorizationFailedError()])  # not retriable: raised at once
    with pytest.raises(GroupAuthorizationFailedError):
        list_groups(denied, pause_s=0)
    assert denied.calls == 1


def test_a_request_to_a_moving_coordinator_is_asked_again_with_the_coordinator_looked_up_again() -> None:
    # DescribeGroups / ConsumerGroupDescribe answer a group-level error code: 16 NOT_COORDINATOR,
    # 14 COORDINATOR_LOAD_IN_PROGRESS; run 18b's `group describe` failed once on such a moment
    admin = MovingCoordinatorAdmin({}, {"g": 1})
    admin.cache[(0, "g")] = 9
    codes = [16, 14, 0]
    answers: list[int] = []

    def ask() -> int:
        answers.append(admin.cache.get((0, "g"), -1))
        return codes.pop(0)

    assert ask_group_coordinator(admin, "g", ask, lambda code: code, pause_s=0) == 0
    assert answers == [9, -1, -1]  # the stale coordinator forgotten after the first answer


def test_a_coordinator_request_is_bounded_and_other_answers_are_returned_at_once() -> None:
    calls: list[int] = []

    def always(code: int) -> Any:
        def ask() -> int:
            calls.append(code)
            return code

        return ask

    assert ask_group_coordinator(object(), "g", always(15), lambda c: c, pause_s=0) == 15
    assert calls == [15] * COORDINATOR_TRIES
    calls.clear()
    not_found = 69  # GROUP_ID_NOT_FOUND: an answer, not a moment
    assert ask_group_coordinator(object(), "g", always(not_found), lambda c: c, pause_s=0) == not_found
    assert calls == [not_found]

    raised = [0]

    def loading() -> Any:
        raised[0] += 1
        raise CoordinatorLoadInProgressError()

    with pytest.raises(CoordinatorLoadInProgressError):
        ask_group_coordinator(object(), "g", loading, lambda c: 0, pause_s=0)
    assert raised == [COORDINATOR_TRIES]


G_LISTED = {"group_id": "g", "group_type": "consumer", "group_state": "Stable"}


class SweepMissesAMovedGroup(MovingCoordinatorAdmin):
    """ListGroups over every broker misses group g (its coordinator moved from 1 to 2 during the sweep:
    2 was asked before it led, 1 after it resigned); only g's coordinator lists it. The admin still
    caches broker 1 as g's coordinator."""

    def __init__(self, present: bool = True) -> None:
        super().__init__({}, {"g": 2})
        self.cache[(0, "g")] = 1
        self.present = present
        self.asked: list[list[int] | None] = []
        self._manager.run = lambda fn: asyncio.run(fn())

    async def _find_coordinator_id(self, group_id: str) -> int:
        return self.cache.setdefault((0, group_id), self.where[group_id])

    def list_groups(self, broker_ids: list[int] | None = None) -> list[dict[str, str]]:
        self.asked.append(broker_ids)
        if broker_ids is None or not self.present:
            return [{"group_id": "other", "group_type": "classic", "group_state": "Empty"}]
        return [dict(G_LISTED)] if broker_ids == [self.where["g"]] else []


def test_a_group_the_sweep_missed_is_found_at_its_coordinator_looked_up_afresh() -> None:
    admin = SweepMissesAMovedGroup()
    assert group_type(admin, "g") == ("consumer", "Stable")
    assert admin.asked == [None, [2]]  # the sweep, then the new coordinator, not the cached 1
    assert listed_by_coordinator(admin, "g") == G_LISTED


def test_a_group_nobody_lists_is_absent_after_one_question_to_its_coordinator() -> None:
    admin = SweepMissesAMovedGroup(present=False)
    assert group_type(admin, "g") is None
    assert admin.asked == [None, [2]]


class RefusingAdmin(MovingCoordinatorAdmin):
    """The moving-coordinator admin whose brokers may themselves fail a group: ``answers`` maps a
    broker to the error it raises for every OffsetFetch (as after session 22's broker kill, when every
    FindCoordinator named a broker that answered NOT_COORDINATOR)."""

    def __init__(self, where: dict[str, int], answers: dict[int, Exception]) -> None:
        super().__init__({g: {} for g in where}, where)
        self.answers = answers

    def list_group_offsets(self, specs: dict[str, None]) -> dict[str, dict[Any, OffsetAndMetadata]]:
        answered = super().list_group_offsets(specs)
        for g in specs:
            if self.where[g] in self.answers:
                raise self.answers[self.where[g]]
        return answered


def test_refused_groups_are_those_whose_coordinator_answers_a_coordinator_error() -> None:
    from kafka.errors import KafkaConnectionError

    where = {"moved": 1, "refused": 2, "loading": 3, "unreachable": 4, "fine": 5}
    admin = RefusingAdmin(
        where,
        {
            2: NotCoordinatorError("OffsetFetchResponse failed"),
            3: CoordinatorLoadInProgressError("OffsetFetchResponse failed"),
            4: KafkaConnectionError("connection refused"),  # says nothing about the coordinator
        },
    )
    admin.cache[(0, "moved")] = 9  # a stale cached coordinator: looked up afresh, not counted
    refused = refused_by_coordinators(admin, sorted(where))
    assert refused == {"refused": "NotCoordinatorError", "loading": "CoordinatorLoadInProgressError"}
    assert admin.cache[(0, "moved")] == 1
    assert admin.calls == [[g] for g in sorted(where)]  # one OffsetFetch per group


def test_a_coordinator_that_does_not_answer_in_time_refuses_its_groups() -> None:
    from kafka.errors import KafkaTimeoutError, RequestTimedOutError

    where = {"busy": 1, "timed-out": 2, "fine": 3}
    admin = RefusingAdmin(
        where, {1: RequestTimedOutError("Request timed out after 9999 ms"), 2: KafkaTimeoutError("timed out")}
    )
    assert refused_by_coordinators(admin, sorted(where)) == {
        "busy": "RequestTimedOutError",
        "timed-out": "KafkaTimeoutError",
    }


def test_an_error_that_is_not_about_coordinators_is_not_a_refusal() -> None:
    admin = RefusingAdmin({"g": 1}, {1: GroupAuthorizationFailedError("denied")})
    assert refused_by_coordinators(admin, ["g"]) == {}
