"""The general sticky path's shortcuts: the bulk water-filling (``water_fill.fill_run``) against a
unit-by-unit fill, and both shortcuts against the topic-by-topic forms they replace."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_placement.assignment.sticky import assign_sticky, general
from kafka_placement.assignment.sticky import water_fill as water_fill_module
from kafka_placement.assignment.sticky.claims import collect_claims, resolve_claims
from kafka_placement.assignment.sticky.general import general_assign
from kafka_placement.assignment.sticky.problem import build_problem
from kafka_placement.assignment.sticky.water_fill import fill_run, water_fill
from kafka_placement.vocabulary import Member


def _one_by_one(loads: list[int], units: int) -> list[int]:
    """Each unit to the least loaded member, ties to the first: water-filling spelled out."""
    give = [0] * len(loads)
    for _ in range(units):
        now = [load + g for load, g in zip(loads, give, strict=True)]
        give[now.index(min(now))] += 1
    return give


@st.composite
def _runs(draw: st.DrawFn) -> tuple[int, list[int], list[int], list[int], int]:
    members = draw(st.integers(1, 9))
    who = sorted(draw(st.sets(st.integers(0, members - 1), min_size=1)))
    level = draw(st.integers(0, 5))
    prefix = draw(st.integers(0, len(who) - 1))
    loads = [draw(st.integers(0, 9)) for _ in range(members)]
    for k, i in enumerate(who):  # the subscribers' loads: one higher on a prefix, as the fill leaves them
        loads[i] = level + (k < prefix)
    topics = draw(st.integers(2, 7))
    units = [draw(st.integers(0, 3 * len(who) + 2)) for _ in range(topics)]
    block = draw(st.sampled_from([1, 2, 64]))
    return members, who, loads, units, block


@settings(max_examples=400, deadline=None)
@given(_runs(), st.booleans())
def test_fill_run_is_the_topic_by_topic_fill(
    case: tuple[int, list[int], list[int], list[int], int], shuffled_topics: bool
) -> None:
    members, who_list, loads_list, units_list, block = case
    topics = len(units_list)
    run = np.arange(topics, dtype=np.int64)
    if shuffled_topics:  # a run that is not a range of topic numbers: the fancy-indexed form
        run = run[::-1].copy()
    who = np.asarray(who_list, dtype=np.int64)
    unowned = np.asarray(units_list, dtype=np.int64)
    expected_c = np.zeros((topics, members), dtype=np.int64)
    expected_loads = list(loads_list)
    for t in run.tolist():  # the independent form: unit by unit
        give = _one_by_one([expected_loads[i] for i in who_list], units_list[t])
        for i, g in zip(who_list, give, strict=True):
            expected_c[t, i] += g
            expected_loads[i] += g
    c = np.zeros((topics, members), dtype=np.int64)
    loads = np.asarray(loads_list, dtype=np.int64)
    saved, water_fill_module.RUN_BLOCK = water_fill_module.RUN_BLOCK, block
    try:
        assert fill_run(c, loads, who, run, unowned)
    finally:
        water_fill_module.RUN_BLOCK = saved
    assert c.tolist() == expected_c.tolist()
    assert loads.tolist() == expected_loads


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=9), st.integers(0, 30))
def test_water_fill_is_the_unit_by_unit_fill(loads: list[int], units: int) -> None:
    assert water_fill(np.asarray(loads, dtype=np.int64), units).tolist() == _one_by_one(loads, units)


def test_fill_run_declines_loads_it_cannot_fill_at_once() -> None:
    c = np.zeros((2, 3), dtype=np.int64)
    loads = np.asarray([0, 1, 0], dtype=np.int64)  # the higher member is not a prefix
    assert not fill_run(c, loads, np.arange(3), np.arange(2), np.asarray([4, 5]))
    assert not c.any() and loads.tolist() == [0, 1, 0]
    loads = np.asarray([0, 2, 2], dtype=np.int64)  # two apart
    assert not fill_run(c, loads, np.arange(3), np.arange(2), np.asarray([4, 5]))


@st.composite
def _groups(draw: st.DrawFn) -> tuple[dict[str, int], dict[str, Member]]:
    """Groups where topics share subscribers (runs of alike topics), some members on fewer topics; with
    history (the assignment of the group without its first member) or without."""
    topics = {f"t{k}": draw(st.integers(1, 12)) for k in range(draw(st.integers(1, 8)))}
    names = list(topics)
    members: dict[str, Member] = {}
    for m in range(draw(st.integers(1, 10))):
        everything = draw(st.booleans())
        subscribed = names if everything else draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
        members[f"c{m:02d}"] = Member(subscribed)
    if len(members) > 1 and draw(st.booleans()):
        rest = dict(list(members.items())[1:])
        before = assign_sticky(topics, rest)
        members = {m: Member(v.topics, owned=before.get(m, []), generation=1) for m, v in members.items()}
    return topics, members


def _general_owner(topics: dict[str, int], members: dict[str, Member]) -> list[int]:
    """The general path's own answer (not :func:`assign_sticky`'s: on small groups that may be Java's
    replayed builder)."""
    problem = build_problem(topics, members)
    return general_assign(problem, resolve_claims(problem, collect_claims(problem)), None).tolist()


def _topic_by_topic_owner(topics: dict[str, int], members: dict[str, Member]) -> list[int]:
    saved = general._FILL_RUNS, general._REUSE_DEALT_ORDER
    general._FILL_RUNS = general._REUSE_DEALT_ORDER = False
    try:
        return _general_owner(topics, members)
    finally:
        general._FILL_RUNS, general._REUSE_DEALT_ORDER = saved


@settings(max_examples=300, deadline=None)
@given(_groups())
def test_shortcuts_give_the_topic_by_topic_answer(group: tuple[dict[str, int], dict[str, Member]]) -> None:
    topics, members = group
    assert _general_owner(topics, members) == _topic_by_topic_owner(topics, members)


def test_shortcuts_on_the_benchmark_shape() -> None:
    """The benchmark's unequal group in small (every member on every topic, one on one topic)."""
    topics = {f"topic-{t:02d}": 12 for t in range(9)}
    members = {f"c{m:02d}": Member(list(topics)) for m in range(12)}
    members["z"] = Member(["topic-00"])
    assert _general_owner(topics, members) == _topic_by_topic_owner(topics, members)
