"""Each checker fed a log with exactly its violation (built by hand, so the expected finding is known by
construction) must report it, and a clean log must pass."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.soak.events import (
    Ack,
    Committed,
    Consumed,
    Event,
    Fault,
    Life,
    Ownership,
    dump_event,
    parse_event,
)
from kafka_placement.soak.invariants import (
    close_at_deaths,
    commits_beyond_consumed,
    double_owners,
    duplicate_deliveries,
    failover_times,
    lost_records,
    misplaced_records,
    missing_from_topic,
    percentile,
    running_periods,
    stalled_producers,
    standby_consumption,
)


def acks_for(n: int, partitions: int = 3) -> list[Ack]:
    return [
        Ack("p1", seq, f"k{seq}", seq % partitions, seq % partitions, seq // partitions, float(seq))
        for seq in range(n)
    ]


def consume_all(acks: list[Ack], group: str, member: str = "m1") -> list[Consumed]:
    return [Consumed(group, member, a.partition, a.offset, a.producer, a.sequence, a.t + 0.5) for a in acks]


# ---------------------------------------------------------------- lost
def test_clean_log_loses_nothing() -> None:
    acks = acks_for(30)
    both = consume_all(acks, "g1") + consume_all(acks, "g2")
    assert lost_records(acks, both, ["g1", "g2"]) == {"g1": [], "g2": []}


def test_a_record_one_group_missed_is_lost_for_that_group_only() -> None:
    acks = acks_for(30)
    g2 = [c for c in consume_all(acks, "g2") if c.sequence != 17]
    assert lost_records(acks, consume_all(acks, "g1") + g2, ["g1", "g2"]) == {"g1": [], "g2": [("p1", 17)]}


def test_a_group_that_consumed_nothing_lost_everything() -> None:
    acks = acks_for(5)
    lost = lost_records(acks, consume_all(acks, "g1"), ["g1", "idle"])
    assert lost["idle"] == [("p1", s) for s in range(5)]


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 200), dropped=st.sets(st.integers(0, 199)), copies=st.integers(1, 3))
def test_lost_is_exactly_the_dropped_records_whatever_the_duplicates(
    n: int, dropped: set[int], copies: int
) -> None:
    acks = acks_for(n)
    consumed = [c for c in consume_all(acks, "g") if c.sequence not in dropped] * copies
    assert lost_records(acks, consumed, ["g"]) == {"g": [("p1", s) for s in sorted(dropped) if s < n]}
    delivered = n - len([s for s in dropped if s < n])
    assert duplicate_deliveries(consumed) == ({"g": delivered * (copies - 1)} if delivered else {})


# ---------------------------------------------------------------- duplicates
def test_duplicates_are_counted_per_group() -> None:
    acks = acks_for(10)
    again = consume_all(acks[:4], "g1", "m2")  # the new owner re-reads 4 records after a failover
    consumed = consume_all(acks, "g1") + again + consume_all(acks, "g2")
    assert duplicate_deliveries(consumed) == {"g1": 4, "g2": 0}


# ---------------------------------------------------------------- misplaced
def test_a_keyed_record_in_another_partition_is_misplaced_keyless_ones_are_not() -> None:
    good = Ack("p", 0, "a", 2, 2, 0, 0.0)
    bad = Ack("p", 1, "b", 2, 0, 0, 0.0)
    keyless = Ack("p", 2, None, None, 1, 0, 0.0)
    assert misplaced_records([good, bad, keyless]) == [bad]
    assert misplaced_records([good, keyless]) == []


# ---------------------------------------------------------------- double owners
def handoff() -> list[Ownership]:
    """m1 owns 0-2 in generation 1 until 10.0; m2 owns them from 10.5 (a clean eager handoff)."""
    return [Ownership("g", "m1", 1, (0, 1, 2), 1.0, 10.0), Ownership("g", "m2", 2, (0, 1, 2), 10.5, None)]


def test_a_clean_handoff_has_no_double_owner() -> None:
    assert double_owners(handoff(), until=20.0) == []


def test_a_member_that_never_released_is_a_double_owner_from_the_new_acquisition() -> None:
    logs = [Ownership("g", "m1", 1, (0, 1, 2), 1.0, None), Ownership("g", "m2", 2, (1,), 10.5, None)]
    found = double_owners(logs, until=20.0)
    spans = [(d.group, d.partition, d.members, d.start, d.end) for d in found]
    assert spans == [("g", 1, ("m1", "m2"), 10.5, 20.0)]


def test_two_groups_may_own_the_same_partition() -> None:
    logs = [Ownership("g1", "m1", 1, (0,), 1.0, None), Ownership("g2", "m2", 1, (0,), 1.0, None)]
    assert double_owners(logs, until=20.0) == []


def test_a_killed_members_open_holding_ends_with_its_process() -> None:
    logs = [Ownership("g", "m1", 1, (0,), 1.0, None), Ownership("g", "m2", 2, (0,), 12.0, None)]
    lives = [Life("g", "m1", True, 0.5), Life("g", "m2", True, 0.6), Life("g", "m1", False, 5.0)]
    assert double_owners(logs, lives, until=20.0) == []
    assert len(double_owners(logs, until=20.0)) == 1  # without the process log it is a double owner


def test_a_resumed_zombie_overlaps_until_it_learns_and_the_tolerance_is_stated() -> None:
    logs = [Ownership("g", "m1", 1, (0,), 1.0, 31.0), Ownership("g", "m2", 2, (0,), 20.0, None)]
    lives = [
        Life("g", "m1", True, 0.5),
        Life("g", "m2", True, 0.6),
        Life("g", "m1", False, 10.0),
        Life("g", "m1", True, 30.0),
    ]  # paused 10 → 30, released at 31: one second as a zombie
    [zombie] = double_owners(logs, lives, until=40.0)
    assert (zombie.start, zombie.end) == (30.0, 31.0)
    assert double_owners(logs, lives, until=40.0, tolerance_s=1.0) == []
    with pytest.raises(InvalidArgumentError, match="tolerance_s"):
        double_owners(logs, tolerance_s=-1)


@settings(max_examples=60, deadline=None)
@given(gaps=st.lists(st.floats(0.01, 5.0), min_size=2, max_size=30), overlap_at=st.integers(0, 28))
def test_a_chain_of_handoffs_is_clean_until_one_overlaps(gaps: list[float], overlap_at: int) -> None:
    """Holdings of one partition passed member to member with a gap; making one release late overlaps
    exactly that pair."""
    times = [sum(gaps[:i]) for i in range(len(gaps) + 1)]
    chain = [Ownership("g", f"m{i}", i, (0,), times[i], times[i + 1] - gaps[i] / 2) for i in range(len(gaps))]
    assert double_owners(chain, until=math.inf) == []
    i = overlap_at % (len(chain) - 1)
    late = Ownership("g", f"m{i}", i, (0,), times[i], times[i + 1] + gaps[i + 1] / 4)
    found = double_owners([*chain[:i], late, *chain[i + 1 :]], until=math.inf)
    assert [(d.members, d.start) for d in found] == [((f"m{i}", f"m{i + 1}"), times[i + 1])]


def test_running_periods_close_at_until() -> None:
    lives = [Life("g", "a", True, 1.0), Life("g", "a", False, 2.0), Life("g", "a", True, 3.0)]
    assert running_periods(lives, until=9.0) == {"a": [(1.0, 2.0), (3.0, 9.0)]}


# ---------------------------------------------------------------- standby consumption
PRIORITIES = {"fo": {"high": 30, "mid": 20, "low": 10}}
START = [Life("fo", name, True, 0.0) for name in ("high", "mid", "low")]


def consumed_by(member: str, t: float, seq: int = 0) -> Consumed:
    return Consumed("fo", member, 0, seq, "p", seq, t)


def test_only_the_top_priority_member_consuming_is_clean() -> None:
    records = [consumed_by("high", float(t), t) for t in range(5, 50)]
    assert standby_consumption(records, START, PRIORITIES, window_s=3.0) == []


def test_a_standby_that_consumed_while_the_top_member_ran_is_caught() -> None:
    bad = consumed_by("low", 20.0)
    assert standby_consumption([consumed_by("high", 19.0), bad], START, PRIORITIES, window_s=3.0) == [bad]


def test_after_a_kill_the_next_priority_consumes_and_inside_the_window_anyone_may() -> None:
    lives = [*START, Life("fo", "high", False, 30.0)]
    records = [consumed_by("high", 29.0), consumed_by("low", 31.0), consumed_by("mid", 40.0)]
    assert standby_consumption(records, lives, PRIORITIES, window_s=3.0) == []
    late_low = consumed_by("low", 34.0)  # 4 s after the change, mid is the top running member
    assert standby_consumption([*records, late_low], lives, PRIORITIES, window_s=3.0) == [late_low]


def test_the_initial_join_is_a_membership_change_and_tied_priorities_are_refused() -> None:
    assert standby_consumption([consumed_by("low", 1.0)], START, PRIORITIES, window_s=3.0) == []
    with pytest.raises(InvalidArgumentError, match="tied priorities"):
        standby_consumption([], START, {"fo": {"a": 1, "b": 1}}, window_s=1.0)


def test_the_groups_own_coordinator_back_opens_a_window_another_groups_does_not() -> None:
    # the coordinator of "fo" offline until 100 s: the standby joined first when it came back
    early_low = consumed_by("low", 102.0)
    assert (
        standby_consumption([early_low], START, PRIORITIES, window_s=3.0, group_disruptions={"fo": [100.0]})
        == []
    )
    assert standby_consumption(
        [early_low], START, PRIORITIES, window_s=3.0, group_disruptions={"other": [100.0]}
    ) == [early_low]
    late_low = consumed_by("low", 104.0)
    assert standby_consumption(
        [late_low], START, PRIORITIES, window_s=3.0, group_disruptions={"fo": [100.0]}
    ) == [late_low]


# ---------------------------------------------------------------- commits
def test_a_commit_past_what_the_group_consumed_is_caught() -> None:
    consumed = [Consumed("g", "m1", 0, o, "p", o, 1.0 + o) for o in range(5)]  # offsets 0-4 at t=1..5
    ok = [Committed("g", "m1", 0, 5, 6.0), Committed("g", "m2", 0, 3, 7.0), Committed("g", "m2", 1, 0, 1.0)]
    early = Committed("g", "m1", 0, 5, 4.5)  # offset 4 is consumed only at t=5
    other_group = Committed("h", "m9", 0, 2, 9.0)
    assert commits_beyond_consumed([*ok, early, other_group], consumed) == [early, other_group]


# ---------------------------------------------------------------- failover times
def test_failover_time_is_until_the_last_of_the_victims_partitions_has_a_new_owner() -> None:
    owns = [
        Ownership("g", "a", 1, (0, 1), 0.0, None),
        Ownership("g", "b", 1, (2,), 0.0, 12.0),
        Ownership("g", "b", 2, (0, 2), 12.0, None),
        Ownership("g", "c", 2, (1,), 13.5, None),
    ]
    kill = Fault("member-kill", "a", 5.0)
    [failover] = failover_times([kill, Fault("broker-kill", "broker-1", 6.0)], owns)
    assert (failover.partitions, failover.seconds) == ((0, 1), 8.5)


def test_a_victim_whose_partitions_never_moved_is_unrecovered_and_an_idle_victim_is_no_failover() -> None:
    owns = [Ownership("g", "a", 1, (0,), 0.0, None), Ownership("g", "idle", 1, (), 0.0, None)]
    [failover] = failover_times([Fault("member-pause", "a", 5.0)], owns)
    assert failover.seconds is None
    assert failover_times([Fault("member-kill", "idle", 5.0)], owns) == []


def test_a_victim_back_from_a_restart_that_takes_its_partitions_back_has_recovered() -> None:
    # killed at 10, restarted, holds its partitions again at 22 (a new holding): 12 s, not "until some
    # later rebalance hands them to another member" (at 700)
    owns = [
        Ownership("g", "a", 9, (0, 1), 0.0, 10.0),
        Ownership("g", "b", 9, (2,), 0.0, None),
        Ownership("g", "a", 1, (0, 1), 22.0, 690.0),
        Ownership("g", "b", 2, (0, 1, 2), 700.0, None),
    ]
    [failover] = failover_times([Fault("member-kill", "a", 10.0)], owns)
    assert (failover.partitions, failover.seconds) == ((0, 1), 12.0)
    # a paused member's own holding that spans the pause is not a recovery
    spans = [Ownership("g", "a", 3, (0,), 0.0, None)]
    [paused] = failover_times([Fault("member-pause", "a", 5.0)], spans)
    assert paused.seconds is None


def test_partitions_another_member_took_before_the_fault_are_held_again_at_once() -> None:
    # the secured run of session 32 (seed 47), fo-cp: the broker fenced cp-high at 04.455, cp-java took
    # all its partitions at 05.435, the soak paused cp-high at 05.942 (its own holding still open) and
    # it was back at 17.038: the fault moved nothing, 0 s (it was timed 11.096 s, the victim's return)
    owns = [
        Ownership("g", "cp-high", 7, (0, 1, 2), 0.0, 17.0),
        Ownership("g", "cp-java", 3, (0, 1, 2), 5.435, 17.03),
        Ownership("g", "cp-high", 8, (0, 1, 2), 17.038, None),
    ]
    [failover] = failover_times([Fault("member-pause", "cp-high", 5.942)], owns)
    assert (failover.partitions, failover.seconds) == ((0, 1, 2), 0.0)
    # one taken before, one after: the later one counts
    owns = [
        Ownership("g", "a", 7, (0, 1), 0.0, None),
        Ownership("g", "b", 3, (0,), 4.0, None),
        Ownership("g", "b", 4, (0, 1), 9.0, None),
    ]
    [failover] = failover_times([Fault("member-kill", "a", 5.0)], owns)
    assert failover.seconds == 4.0
    # a holding released before the fault is no takeover
    owns = [Ownership("g", "a", 7, (0,), 0.0, None), Ownership("g", "b", 3, (0,), 1.0, 2.0)]
    assert failover_times([Fault("member-kill", "a", 5.0)], owns)[0].seconds is None


def test_a_producer_without_acks_while_the_others_go_on_is_stalled() -> None:
    def acks(producer: str, times: list[float]) -> list[Ack]:
        return [Ack(producer, i, None, None, 0, i, t) for i, t in enumerate(times)]

    steady = [float(t) for t in range(0, 1000)]  # one ack a second, 0..999
    stuck = [float(t) for t in range(0, 300)]  # nothing after t=299
    outage = [t for t in steady if not 400 <= t < 760]  # everyone's outage: 360 s without acks
    log = acks("ok", steady) + acks("stuck", stuck)
    # stuck: 299 → 1000 (the load's end) is 701 s, with 700 of ok's acks inside
    assert stalled_producers(log, 0.0, 1000.0, 300.0, 500) == {"stuck": 701.0}
    # the others' acks in the gap must reach others_min
    assert stalled_producers(log, 0.0, 1000.0, 300.0, 701) == {}
    # a cluster that took no writes stalls everyone alike: not counted
    both_out = acks("a", outage) + acks("b", outage)
    assert stalled_producers(both_out, 0.0, 1000.0, 300.0, 1) == {}
    # a gap at the start (no ack yet) counts from the load's start
    late = acks("late", [float(t) for t in range(400, 1000)]) + acks("ok", steady)
    assert stalled_producers(late, 0.0, 1000.0, 300.0, 100) == {"late": 400.0}


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]  # 1..100
    assert (percentile(values, 50), percentile(values, 99), percentile(values, 100)) == (50.0, 99.0, 100.0)
    assert percentile([3.0], 99) == 3.0
    assert percentile([], 50) is None
    with pytest.raises(InvalidArgumentError, match="percentile"):
        percentile(values, 0)


# ---------------------------------------------------------------- the log format
def test_every_event_kind_round_trips_through_one_json_line() -> None:
    events: list[Event] = [
        Ack("p", 1, None, None, 2, 3, 1.5),
        Ownership("g", "m", 4, (1, 2), 1.0, None),
        Consumed("g", "m", 1, 2, "p", 3, 4.0),
        Committed("g", "m", 1, 9, 5.0),
        Life("g", "m", False, 6.0),
        Fault("broker-kill", "broker-3", 7.0),
    ]
    assert [parse_event(dump_event(e)) for e in events] == events


@pytest.mark.parametrize("line", ["", "{}", '{"ev": "nope"}', '{"ev": "ack", "producer": "p"}', "[1]"])
def test_a_malformed_line_names_itself(line: str) -> None:
    with pytest.raises(InvalidArgumentError, match="not a soak event line"):
        parse_event(line)


def test_a_broker_fault_opens_a_window_too() -> None:
    late_low = consumed_by("low", 34.0)
    assert standby_consumption([late_low], START, PRIORITIES, window_s=3.0) == [late_low]
    assert standby_consumption([late_low], START, PRIORITIES, window_s=3.0, disruptions=[32.0]) == []
    earlier_only = standby_consumption([late_low], START, PRIORITIES, window_s=3.0, disruptions=[30.0, 35.0])
    assert earlier_only == [late_low]


def test_a_kill_closes_the_open_holding_a_pause_does_not() -> None:
    owns = [
        Ownership("g", "a", 1, (0,), 0.0, None),
        Ownership("g", "a", 2, (0,), 20.0, None),
        Ownership("g", "b", 1, (1,), 0.0, None),
    ]
    closed = close_at_deaths(owns, [Fault("member-kill", "a", 10.0), Fault("member-pause", "b", 5.0)])
    assert [o.released for o in closed] == [10.0, None, None]


def test_missing_from_topic_is_every_ack_not_read_back_at_its_partition_and_offset() -> None:
    acks = [Ack("p", s, None, None, s % 2, 10 + s, 1.0) for s in range(4)]
    found = {("p", 0): (0, 10), ("p", 1): (1, 11), ("p", 2): (0, 99)}  # 2 moved, 3 gone
    assert [(a.producer, a.sequence) for a in missing_from_topic(acks, found)] == [("p", 2), ("p", 3)]
    assert missing_from_topic(acks, {**found, ("p", 2): (0, 12), ("p", 3): (1, 13)}) == []
    # librdkafka acknowledged without an offset (a 30-minute soak had two): its partition is checked
    untold = [Ack("q", 0, "k", 12, 12, None, 2.0)]
    assert missing_from_topic(untold, {("q", 0): (12, 4711)}) == []
    assert missing_from_topic(untold, {("q", 0): (11, 4711)}) == untold
    assert missing_from_topic(untold, {}) == untold
