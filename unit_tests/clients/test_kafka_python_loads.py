"""The live-loads adapter's group reads (clients/kafka_python/loads.py) against a fake admin."""

from __future__ import annotations

from typing import Any

from kafka import TopicPartition as KafkaTopicPartition
from kafka.errors import (
    CoordinatorLoadInProgressError,
    GroupIdNotFoundError,
)
from kafka.structs import OffsetAndMetadata
from moving_coordinator import MovingCoordinatorAdmin  # this directory is on sys.path

from kafka_placement.clients.kafka_python.group_reads import (
    OFFSET_FETCH_TRIES,
)
from kafka_placement.clients.kafka_python.loads import _committed, offset_groups, regression_note
from kafka_placement.vocabulary import TopicPartition


def test_share_groups_are_left_out_of_the_offset_reads() -> None:
    listed = [
        {"group_id": "b", "protocol_type": "consumer", "group_state": "Stable", "group_type": "classic"},
        {"group_id": "s1", "protocol_type": "share", "group_state": "Empty", "group_type": "share"},
        {"group_id": "s2", "protocol_type": "", "group_type": "Share"},
        {"group_id": "a", "protocol_type": "consumer", "group_type": "consumer"},
        {"group_id": "simple", "protocol_type": ""},  # only commits: no protocol type
        ("old", "consumer"),
    ]
    assert offset_groups(listed) == (["a", "b", "old", "simple"], 2)


class FakeAdmin:
    """OffsetFetch like kafka-python's: one batch raises as soon as any group in it fails."""

    def __init__(self, offsets: dict[str, dict[Any, OffsetAndMetadata]], failing: set[str]) -> None:
        self.offsets, self.failing = offsets, failing
        self.calls: list[list[str]] = []

    def list_group_offsets(self, specs: dict[str, None]) -> dict[str, dict[Any, OffsetAndMetadata]]:
        self.calls.append(sorted(specs))
        if self.failing & set(specs):
            raise GroupIdNotFoundError("OffsetFetchResponse failed")
        return {g: self.offsets[g] for g in specs}


def _at(offset: int) -> OffsetAndMetadata:
    return OffsetAndMetadata(offset, "", -1)


def test_a_group_that_fails_is_skipped_and_the_others_are_still_read() -> None:
    t0, t1 = KafkaTopicPartition("t", 0), KafkaTopicPartition("t", 1)
    admin = FakeAdmin({"g1": {t0: _at(10), t1: _at(-1)}, "g2": {t0: _at(7)}, "bad": {}}, failing={"bad"})
    skipped: set[str] = set()
    offsets, _ = _committed(admin, ["bad", "g1", "g2"], skipped)
    # -1: no committed offset for t-1
    assert offsets == {("g1", TopicPartition("t", 0)): 10, ("g2", TopicPartition("t", 0)): 7}
    assert skipped == {"bad"}
    assert admin.calls == [["bad", "g1", "g2"], ["bad"], ["g1"], ["g2"]]
    # the second read leaves the skipped group out from the start: one batch
    admin.calls.clear()
    _committed(admin, ["bad", "g1", "g2"], skipped)
    assert admin.calls == [["g1", "g2"]]


def test_a_moved_coordinator_is_looked_up_again_and_every_group_is_read_together() -> None:
    # the 17d failure: g2's coordinator moved between the command's two reads; the second read kept
    # asking the old broker, g2 was skipped and t-0's consumer part came out half the truth
    t0 = KafkaTopicPartition("t", 0)
    admin = MovingCoordinatorAdmin({"g1": {t0: _at(10)}, "g2": {t0: _at(7)}}, {"g1": 1, "g2": 2})
    skipped: set[str] = set()
    assert len(_committed(admin, ["g1", "g2"], skipped, pause_s=0)[0]) == 2
    admin.where["g2"] = 4  # a leader election of g2's __consumer_offsets partition
    admin.calls.clear()
    offsets, _ = _committed(admin, ["g1", "g2"], skipped, pause_s=0)
    assert offsets == {("g1", TopicPartition("t", 0)): 10, ("g2", TopicPartition("t", 0)): 7}
    assert skipped == set()
    assert admin.calls == [["g1", "g2"], ["g1", "g2"]]  # the retry reads both: one moment for both
    assert admin.cache == {(0, "g1"): 1, (0, "g2"): 4}


class AlwaysRetriable(FakeAdmin):
    def list_group_offsets(self, specs: dict[str, None]) -> dict[str, dict[Any, OffsetAndMetadata]]:
        self.calls.append(sorted(specs))
        if self.failing & set(specs):
            raise CoordinatorLoadInProgressError("OffsetFetchResponse failed")
        return {g: self.offsets[g] for g in specs}


def test_a_coordinator_that_never_answers_costs_a_bounded_number_of_reads() -> None:
    t0 = KafkaTopicPartition("t", 0)
    admin = AlwaysRetriable({"g1": {t0: _at(10)}, "down": {}}, failing={"down"})
    skipped: set[str] = set()
    offsets, _ = _committed(admin, ["down", "g1"], skipped, pause_s=0)
    assert offsets == {("g1", TopicPartition("t", 0)): 10}
    assert skipped == {"down"}
    # the batch's retries, then each group once
    assert admin.calls == [["down", "g1"]] * OFFSET_FETCH_TRIES + [["down"], ["g1"]]


def test_no_groups_no_reads() -> None:
    admin = FakeAdmin({}, failing=set())
    assert _committed(admin, [], set())[0] == {}
    assert admin.calls == []


def test_offsets_that_went_backwards_are_told_and_skipped_groups_are_not_told_twice() -> None:
    t0, t1 = TopicPartition("t", 0), TopicPartition("t", 1)
    first = {("g1", t0): 10, ("g1", t1): 20, ("gone", t0): 5}
    assert regression_note(first, dict(first), set()) is None
    note = regression_note(first, {("g1", t0): 3, ("g1", t1): 25}, skipped={"gone"})
    assert note is not None
    assert note.startswith("1 committed offsets went backwards or vanished between the two reads")
    assert note.endswith("e.g. g1 t-0")
