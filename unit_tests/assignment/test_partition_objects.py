"""Reading owned partitions and handing out member lists: the C form equals the numpy one, and both equal
the definitions written out one item at a time."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_placement.assignment.sticky import partition_objects
from kafka_placement.assignment.sticky.partition_objects import (
    hand_out_in_python,
    read_claims_in_python,
)
from kafka_placement.vocabulary import TopicPartition

needs_c = pytest.mark.skipif(
    partition_objects._owned is None, reason="the C accelerator is not compiled (pure install)"
)

TOPICS = ["a", "b", "c"]
partition_numbers = st.one_of(st.integers(-3, 12), st.sampled_from([2**63, -(2**70), 2**62, True]))
owned_st = st.lists(
    st.lists(st.tuples(st.sampled_from([*TOPICS, "gone"]), partition_numbers), max_size=25), max_size=8
)
counts_st = st.lists(st.integers(0, 10), min_size=3, max_size=3)


def claims_by_hand(
    owned_lists: list[tuple[TopicPartition, ...]], counts: list[int]
) -> tuple[list[int], list[int], list[int], dict[int, object]]:
    """The definition: a claim counts when its topic exists and its partition is an int in [0, count)."""
    offsets = [0]
    for count in counts:
        offsets.append(offsets[-1] + count)
    gids: list[int] = []
    topics: list[int] = []
    per_member: list[int] = []
    objects: dict[int, object] = {}
    for owned in owned_lists:
        before = len(gids)
        for tp in owned:
            topic, partition = tp
            t = TOPICS.index(topic) if topic in TOPICS else -1
            if t >= 0 and isinstance(partition, int) and 0 <= partition < counts[t]:
                gids.append(offsets[t] + partition)
                topics.append(t)
                objects[offsets[t] + partition] = tp
        per_member.append(len(gids) - before)
    return gids, topics, per_member, objects


def run(
    reader: object, owned_lists: list[tuple[TopicPartition, ...]], counts: list[int]
) -> tuple[list[int], list[int], list[int], list[object], list[bool]]:
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    objects: list[object] = [None] * int(offsets[-1])
    known = np.zeros(int(offsets[-1]), dtype=np.bool_)
    gids, topics, per_member = reader(  # type: ignore[operator]
        owned_lists, {t: i for i, t in enumerate(TOPICS)}, offsets, objects, known
    )
    return gids.tolist(), topics.tolist(), per_member.tolist(), objects, known.tolist()


def as_owned(raw: list[list[tuple[str, int]]]) -> list[tuple[TopicPartition, ...]]:
    return [tuple(TopicPartition(t, p) for t, p in member) for member in raw]


@given(raw=owned_st, counts=counts_st)
@settings(max_examples=300, deadline=None)
def test_numpy_form_reads_claims_as_defined(raw: list[list[tuple[str, int]]], counts: list[int]) -> None:
    owned = as_owned(raw)
    gids, topics, per_member, objects, known = run(read_claims_in_python, owned, counts)
    want_gids, want_topics, want_per_member, want_objects = claims_by_hand(owned, counts)
    assert (gids, topics, per_member) == (want_gids, want_topics, want_per_member)
    assert {g: o for g, o in enumerate(objects) if o is not None} == want_objects
    assert all(objects[g] is o for g, o in want_objects.items())  # the member's own object, the last one
    assert [g for g, k in enumerate(known) if k] == sorted(want_objects)


@needs_c
@given(raw=owned_st, counts=counts_st)
@settings(max_examples=300, deadline=None)
def test_c_form_reads_claims_as_the_numpy_form(raw: list[list[tuple[str, int]]], counts: list[int]) -> None:
    owned = as_owned(raw)
    c_result = run(partition_objects.read_claims_in_c, owned, counts)
    py_result = run(read_claims_in_python, owned, counts)
    assert c_result[:3] == py_result[:3] and c_result[4] == py_result[4]
    assert all(a is b for a, b in zip(c_result[3], py_result[3], strict=True))


owner_st = st.integers(0, 6).flatmap(
    lambda m: st.tuples(st.just(m), st.lists(st.integers(-1, m - 1) if m else st.just(-1), max_size=60))
)


@given(case=owner_st)
@settings(max_examples=300, deadline=None)
def test_hand_out_forms_equal_the_definition(case: tuple[int, list[int]]) -> None:
    members, owner_list = case
    owner = np.asarray(owner_list, dtype=np.int64)
    objects = [("t", g) for g in range(owner.size)]
    by_hand: list[list[object]] = [[] for _ in range(members)]
    for g, o in enumerate(owner_list):
        if o >= 0:
            by_hand[o].append(objects[g])
    assert hand_out_in_python(owner, objects, members) == by_hand
    if partition_objects._owned is not None:
        c_hands = partition_objects.hand_out_in_c(owner, objects, members)
        assert c_hands == by_hand
        assert all(x is objects[x[1]] for hand in c_hands for x in hand)  # the objects themselves


@needs_c
def test_c_forms_count_references_and_reject_bad_input() -> None:
    tp = TopicPartition("a", 1)
    objects: list[object] = [None, None]
    known = np.zeros(2, dtype=np.bool_)
    offsets = np.asarray([0, 2], dtype=np.int64)
    before = sys.getrefcount(tp)
    partition_objects._owned.read_claims([(tp, tp)], {"a": 0}, offsets, objects, known.view(np.uint8))
    stored = sys.getrefcount(tp) - before  # (counted apart: assert rewriting holds references)
    assert stored == 1  # stored once, replaced by itself
    assert objects[1] is tp
    hands = partition_objects._owned.hand_out(np.asarray([-1, 0], dtype=np.int64), objects, 1)
    handed = sys.getrefcount(tp) - before
    assert handed == 2
    assert hands == [[tp]]
    del hands, objects
    left = sys.getrefcount(tp) - before
    assert left == 0
    with pytest.raises(ValueError, match="is not a member"):
        partition_objects._owned.hand_out(np.asarray([0, 3], dtype=np.int64), [tp, tp], 2)
    with pytest.raises(ValueError, match="differ in length"):
        partition_objects._owned.hand_out(np.asarray([0], dtype=np.int64), [tp, tp], 2)
    with pytest.raises(TypeError, match="must be a tuple"):
        partition_objects._owned.read_claims([[tp]], {"a": 0}, offsets, [None, None], known.view(np.uint8))
    with pytest.raises(TypeError, match=r"\(topic, partition\) tuples"):
        partition_objects._owned.read_claims([(5,)], {"a": 0}, offsets, [None, None], known.view(np.uint8))
    with pytest.raises(ValueError, match="disagree on sizes"):
        partition_objects._owned.read_claims([()], {"a": 0}, offsets, [None], known.view(np.uint8))
