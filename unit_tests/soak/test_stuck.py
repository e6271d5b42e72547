"""Stuck members on hand-built logs: a member that owns partitions with records waiting and reads nothing
for longer than its session timeout plus the bound is caught; a member that keeps reading, or has nothing
to read, or whose silence a fault concerning it explains, is not. Session 6 s, bound 60 s: a silence of
more than 66 s counts."""

from __future__ import annotations

from kafka_placement.soak.events import Ack, Consumed, Fault, Ownership
from kafka_placement.soak.stuck import STUCK_BOUND_S, stuck_members

G, OTHER = "kp-soak-x-coop", "kp-soak-x-fo-kp"
SESSION = {G: 6.0, OTHER: 6.0}


def acks(partition: int, times: range, first_offset: int = 0) -> list[Ack]:
    """One record a second on ``partition`` (offsets counting up from ``first_offset``)."""
    return [
        Ack("p", 1000 * partition + i, None, None, partition, first_offset + i, float(t))
        for i, t in enumerate(times)
    ]


def reads(member: str, partition: int, times: range, first_offset: int = 0) -> list[Consumed]:
    return [
        Consumed(G, member, partition, first_offset + i, "p", 1000 * partition + i, float(t) + 0.5)
        for i, t in enumerate(times)
    ]


# coop-a owns partitions 0 and 1 from t=100 to t=400; records arrive on partition 0 every second from
# t=100 to t=399 (offsets 0-299); it reads them until t=150 (offsets 0-49, the last at 149.5) and then
# nothing: the first record it does not read, offset 50, was acknowledged at t=150
OWN = [Ownership(G, "coop-a", 1, (0, 1), 100.0, 400.0)]
ACKS = acks(0, range(100, 400))
HANG = reads("coop-a", 0, range(100, 150))


def test_a_member_that_reads_nothing_while_records_wait_is_stuck() -> None:
    (stuck,) = stuck_members(OWN, HANG, ACKS, [], SESSION, until=400.0)
    assert (stuck.group, stuck.member, stuck.partitions) == (G, "coop-a", (0, 1))
    # from offset 50's ack (t=150, after the last read at 149.5) to the release at 400
    assert (stuck.since, stuck.until, stuck.seconds) == (150.0, 400.0, 250.0)
    assert stuck.waiting == 250  # offsets 50-299: above the 49 its group had read at 149.5


def test_a_member_that_keeps_reading_is_not_stuck() -> None:
    assert stuck_members(OWN, reads("coop-a", 0, range(100, 400)), ACKS, [], SESSION, until=400.0) == []


def test_a_member_with_nothing_to_read_is_not_stuck() -> None:
    # records stop at t=150 and everything up to there was read: 250 s of silence, nothing waiting
    assert stuck_members(OWN, HANG, acks(0, range(100, 150)), [], SESSION, until=400.0) == []


def test_a_silence_just_over_the_bound_counts_and_just_under_does_not() -> None:
    limit = 6.0 + STUCK_BOUND_S  # 66 s
    # reads to 149.5, then again from 150 + 65 (a 65.5 s gap from the ack at 150 ... 215.5): not stuck
    resumed = reads("coop-a", 0, range(215, 400), first_offset=115)
    assert stuck_members(OWN, HANG + resumed, ACKS, [], SESSION, until=400.0) == []
    late = reads("coop-a", 0, range(217, 400), first_offset=117)  # 67.5 s: stuck
    (stuck,) = stuck_members(OWN, HANG + late, ACKS, [], SESSION, until=400.0)
    assert stuck.seconds == 217.5 - 150.0 > limit


def test_records_the_other_member_read_before_are_not_waiting() -> None:
    # coop-b read offsets 0-299 before coop-a took partition 0 over at t=400; coop-a then owns it to 600
    # with nothing new written: nothing waits for it
    own = [Ownership(G, "coop-b", 1, (0,), 100.0, 400.0), Ownership(G, "coop-a", 1, (0,), 400.0, 600.0)]
    b_reads = [
        Consumed(G, "coop-b", 0, c.offset, "p", c.sequence, c.t) for c in reads("x", 0, range(100, 400))
    ]
    assert stuck_members(own, b_reads, ACKS, [], SESSION, until=700.0) == []


def test_a_pause_of_the_member_itself_explains_its_silence() -> None:
    # paused 155-360 (the -undone at resume): pieces left 150-155 and 360-400, each under 66 s
    faults = [Fault("member-pause", "coop-a", 155.0), Fault("member-pause-undone", "coop-a", 360.0)]
    assert stuck_members(OWN, HANG, ACKS, faults, SESSION, until=400.0) == []


def test_a_fault_on_another_member_explains_nothing() -> None:
    faults = [Fault("member-pause", "coop-b", 155.0), Fault("member-pause-undone", "coop-b", 360.0)]
    (stuck,) = stuck_members(OWN, HANG, ACKS, faults, SESSION, until=400.0)
    assert stuck.seconds == 250.0


def test_a_broker_fault_explains_only_members_of_what_that_broker_led_or_coordinated() -> None:
    def kill(leads: tuple[int, ...], coordinates: tuple[str, ...]) -> list[Fault]:
        return [
            Fault("broker-kill", "broker-3", 155.0, leads, coordinates),
            Fault("broker-kill-undone", "broker-3", 360.0),
        ]

    # broker 3 led partition 1 (owned by coop-a) when killed: explained
    assert stuck_members(OWN, HANG, ACKS, kill((1, 5), ()), SESSION, until=400.0) == []
    # it coordinated coop-a's group: explained
    assert stuck_members(OWN, HANG, ACKS, kill((), (G,)), SESSION, until=400.0) == []
    # it led partition 5 and coordinated another group: not coop-a's business
    (stuck,) = stuck_members(OWN, HANG, ACKS, kill((5,), (OTHER,)), SESSION, until=400.0)
    assert stuck.seconds == 250.0
    # its roles were not recorded (older logs, a cluster that did not answer): it may have been anything
    unknown = [Fault("net-silent", "broker-3", 155.0), Fault("net-silent-undone", "broker-3", 360.0)]
    assert stuck_members(OWN, HANG, ACKS, unknown, SESSION, until=400.0) == []


def test_a_fault_does_not_excuse_a_silence_that_outlasts_it_by_more_than_the_bound() -> None:
    # the coordinator's link silent 155-170 (net-silent, coop's coordinator): the member never reads
    # again — 230 s after the fault was undone (170-400) is not the fault's doing: stuck from 170
    faults = [Fault("net-silent", "broker-2", 155.0, (), (G,)), Fault("net-silent-undone", "broker-2", 170.0)]
    (stuck,) = stuck_members(OWN, HANG, ACKS, faults, SESSION, until=400.0)
    assert (stuck.since, stuck.until) == (170.0, 400.0)


def test_a_skipped_fault_explains_nothing_and_an_outage_of_the_coordinator_does() -> None:
    skipped = [Fault("net-silent-skipped", "broker-2", 155.0)]
    assert len(stuck_members(OWN, HANG, ACKS, skipped, SESSION, until=400.0)) == 1
    outage = {G: [(150.0, 350.0)]}  # coop's __consumer_offsets partition had no leader
    assert stuck_members(OWN, HANG, ACKS, [], SESSION, until=400.0, outages=outage) == []
    elsewhere = {OTHER: [(150.0, 350.0)]}
    assert len(stuck_members(OWN, HANG, ACKS, [], SESSION, until=400.0, outages=elsewhere)) == 1


def test_records_past_the_high_watermark_are_lost_not_waiting() -> None:
    # the topic read back ends at offset 50 on partition 0: offsets 50-299 were acknowledged and lost
    # (counted by the lost-record checkers); nothing the member could read waited
    assert stuck_members(OWN, HANG, ACKS, [], SESSION, until=400.0, high_watermarks={0: 50}) == []
    (stuck,) = stuck_members(OWN, HANG, ACKS, [], SESSION, until=400.0, high_watermarks={0: 60})
    assert stuck.waiting == 10


def test_an_open_ownership_ends_with_the_run() -> None:
    own = [Ownership(G, "coop-a", 1, (0, 1), 100.0, None)]
    (stuck,) = stuck_members(own, HANG, ACKS, [], SESSION, until=450.0)
    assert (stuck.since, stuck.until) == (150.0, 450.0)


# ---------------------------------------------------------------- orphaned partitions
# coop-b owns 0-5 for the whole run; coop-a owns 6-11 from 100 s and gives them up at 150 s (its
# on_lost) while the group still assigns them to it: nobody owns 6-11 afterwards. Records arrive on
# partition 6 every second from 100 s to 399 s; coop-a read them until 149.5 s; 7-11 get none.
ORPHANING = [
    Ownership(G, "coop-b", 1, (0, 1, 2, 3, 4, 5), 90.0, None),
    Ownership(G, "coop-a", 1, (6, 7, 8, 9, 10, 11), 100.0, 150.0),
]
ACKS_6 = acks(6, range(100, 400))
READ_6 = reads("coop-a", 6, range(100, 150))


def test_a_partition_nobody_owns_while_records_wait_is_reported_with_no_member() -> None:
    (orphan,) = stuck_members(ORPHANING, READ_6, ACKS_6, [], SESSION, until=400.0)
    assert (orphan.group, orphan.member, orphan.partitions) == (G, "", (6,))
    assert (orphan.since, orphan.until, orphan.waiting) == (150.0, 400.0, 250)  # offsets 50-299


def test_orphans_of_one_hang_are_one_entry_and_a_later_hang_another() -> None:
    # 7 gets records too: 6 and 7 orphaned from 150 s, one entry, until coop-b takes them at 300 s and
    # reads on (6 from offset 50, 7 from 0); 8, owned by coop-b from 160 s to 300 s, is orphaned from
    # its first record (301 s) to the end
    taken = [
        *ORPHANING,
        Ownership(G, "coop-b", 2, (8,), 160.0, 300.0),
        Ownership(G, "coop-b", 3, (6, 7), 300.0, None),
    ]
    acks_7, acks_8 = acks(7, range(100, 400)), acks(8, range(301, 400))
    read_later = reads("coop-b", 6, range(300, 400), 50) + reads("coop-b", 7, range(300, 400))
    orphans = stuck_members(taken, READ_6 + read_later, ACKS_6 + acks_7 + acks_8, [], SESSION, until=460.0)
    assert [(o.member, o.partitions, o.since, o.until, o.waiting) for o in orphans] == [
        ("", (6, 7), 150.0, 300.0, 150 + 200),  # acknowledged before 300 s: 6's offsets 50-199, 7's 0-199
        ("", (8,), 301.0, 460.0, 99),
    ]


def test_a_partition_taken_over_within_the_bound_is_no_orphan() -> None:
    # coop-b is given 6 at 210 s (60 s unowned, under 66 s) and reads the rest
    taken = [*ORPHANING, Ownership(G, "coop-b", 2, (6,), 210.0, None)]
    b_reads = [Consumed(G, "coop-b", 6, 50 + i, "p", 6000 + 50 + i, 210.5 + i) for i in range(250)]
    assert stuck_members(taken, READ_6 + b_reads, ACKS_6, [], SESSION, until=400.0) == []
    late = [*ORPHANING, Ownership(G, "coop-b", 2, (6,), 220.0, None)]  # 70 s: an orphan until then
    late_reads = [Consumed(G, "coop-b", 6, 50 + i, "p", 6000 + 50 + i, 220.5 + i) for i in range(250)]
    (orphan,) = stuck_members(late, READ_6 + late_reads, ACKS_6, [], SESSION, until=400.0)
    assert (orphan.member, orphan.since, orphan.until) == ("", 150.0, 220.0)


def test_an_orphan_is_excused_by_a_fault_on_a_member_of_its_group_or_its_broker_only() -> None:
    paused = [Fault("member-pause", "coop-a", 150.0), Fault("member-pause-undone", "coop-a", 350.0)]
    assert stuck_members(ORPHANING, READ_6, ACKS_6, paused, SESSION, until=400.0) == []
    leader = [Fault("net-silent", "broker-1", 150.0, (6,), ()), Fault("net-silent-undone", "broker-1", 350.0)]
    assert stuck_members(ORPHANING, READ_6, ACKS_6, leader, SESSION, until=400.0) == []
    elsewhere = [
        Fault("broker-kill", "broker-2", 150.0, (9,), (OTHER,)),
        Fault("broker-kill-undone", "broker-2", 350.0),
    ]
    assert len(stuck_members(ORPHANING, READ_6, ACKS_6, elsewhere, SESSION, until=400.0)) == 1


def test_before_the_groups_first_acquisition_nothing_is_an_orphan() -> None:
    # records from 0 s, the group's members own everything from 100 s and read it all
    early = acks(0, range(0, 300))
    own = [Ownership(G, "coop-a", 1, (0,), 100.0, None)]
    assert stuck_members(own, reads("coop-a", 0, range(100, 300)), early, [], SESSION, until=300.0) == []
