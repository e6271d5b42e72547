"""The verdict holds only when every invariant held; its figures are the checkers' (hand-built logs)."""

from __future__ import annotations

from kafka_placement.soak.events import Ack, Consumed, Fault, Health, Life, Ownership, SessionLost
from kafka_placement.soak.verdict import SoakLogs, Windows, judge

WINDOWS = Windows(standby_s=5.0, overlap_s=0.0)


def clean_logs() -> SoakLogs:
    logs = SoakLogs()
    acks = [Ack("p", s, f"k{s}", 0, 0, s, 1.0 + s) for s in range(10)]
    logs.add(acks)
    logs.add([Life("fo", "high", True, 0.0), Life("fo", "low", True, 0.0)])
    logs.add([Ownership("fo", "high", 1, (0,), 0.5, None), Ownership("fo", "low", 1, (), 0.5, None)])
    logs.add(Consumed("fo", "high", 0, a.offset, "p", a.sequence, a.t + 0.1) for a in acks)
    return logs


def test_a_clean_run_holds() -> None:
    summary = judge(clean_logs(), ["fo"], {"fo": {"high": 2, "low": 1}}, WINDOWS, until=30.0)
    figures = (summary["verdict"], summary["acknowledged"], summary["lost"], summary["duplicates"])
    assert figures == ("held", 10, 0, 0)
    assert summary["failover_s"] == {"p50": None, "p99": None, "max": None}


def test_a_kill_with_takeover_times_the_failover_and_a_lost_record_violates() -> None:
    logs = clean_logs()
    logs.add(
        [
            Fault("member-kill", "high", 20.0),
            Life("fo", "high", False, 20.0),
            Ownership("fo", "low", 2, (0,), 26.5, None),
        ]
    )
    summary = judge(logs, ["fo"], {"fo": {"high": 2, "low": 1}}, WINDOWS, until=30.0)
    assert summary["verdict"] == "held"
    assert summary["failover_s"] == {"p50": 6.5, "p99": 6.5, "max": 6.5}
    assert summary["faults"] == [{"kind": "member-kill", "target": "high", "t": 20.0}]
    logs.add([Ack("p", 10, "k10", 0, 0, 10, 21.0)])  # acknowledged, never consumed
    summary = judge(logs, ["fo"], {"fo": {"high": 2, "low": 1}}, WINDOWS, until=30.0)
    assert (summary["verdict"], summary["lost"]) == ("violated", 1)
    assert summary["lost_by_group"] == {"fo": [["p", 10]]}


def test_a_record_no_group_consumed_is_lost_once_and_named_in_each_group() -> None:
    logs = clean_logs()
    logs.add([Life("rr", "a", True, 0.0), Ownership("rr", "a", 1, (0,), 0.5, None)])
    logs.add(Consumed("rr", "a", 0, s, "p", s, 2.0 + s) for s in range(10))
    logs.add([Ack("p", 10, "k10", 0, 0, 10, 21.0)])  # acknowledged, consumed by neither group
    logs.add([Ack("p", 11, "k11", 0, 0, 11, 22.0), Consumed("fo", "high", 0, 11, "p", 11, 22.5)])
    priorities = {"fo": {"high": 2, "low": 1}, "rr": {"a": 1}}
    summary = judge(logs, ["fo", "rr"], priorities, WINDOWS, until=30.0)
    assert (summary["verdict"], summary["lost"]) == ("violated", 2)
    assert summary["lost_by_group"] == {"fo": [["p", 10]], "rr": [["p", 10], ["p", 11]]}


def test_a_misplaced_key_violates() -> None:
    logs = clean_logs()
    logs.add([Ack("q", 0, "x", 1, 0, 10, 2.0)])
    logs.add([Consumed("fo", "high", 0, 10, "q", 0, 2.5)])
    summary = judge(logs, ["fo"], {"fo": {"high": 2, "low": 1}}, WINDOWS, until=30.0)
    assert (summary["verdict"], summary["misplaced"], summary["lost"]) == ("violated", 1, 0)


def test_a_partition_excuses_standby_reads_like_other_broker_faults_a_skipped_one_does_not() -> None:
    # the standby reads one record at 40 s while the high-priority member runs: a violation unless a
    # broker fault came within the window (5 s) before it
    def judged(fault_kind: str) -> dict[str, object]:
        logs = clean_logs()
        logs.add(
            [
                Ack("p", 10, "k10", 0, 0, 10, 39.0),
                Consumed("fo", "low", 0, 10, "p", 10, 40.0),
                Fault(fault_kind, "broker-3", 37.0),
            ]
        )
        return judge(logs, ["fo"], {"fo": {"high": 2, "low": 1}}, WINDOWS, until=60.0)

    for kind in ("broker-kill", "broker-pause", "broker-partition", "net-silent", "net-reset"):
        assert (judged(kind)["verdict"], judged(kind)["standby_consumed"]) == ("held", 0), kind
    assert (
        judged("broker-partition-skipped")["verdict"],
        judged("broker-partition-skipped")["standby_consumed"],
    ) == ("violated", 1)
    assert (judged("member-kill")["verdict"], judged("member-kill")["standby_consumed"]) == ("violated", 1)


def test_the_groups_coordinator_back_after_an_outage_excuses_standby_reads_within_the_window() -> None:
    # the broker kill at 10 s took the group's coordinator partition (2) offline until the sample at 38 s;
    # the standby rejoined first and read at 40 s: inside the window after the coordinator came back
    def judged(coordinators: dict[str, int] | None) -> dict[str, object]:
        logs = clean_logs()
        logs.add(
            [
                Fault("broker-kill", "broker-3", 10.0),
                Health((2,), 0, 4, 12.0),
                Health((), 0, 0, 38.0),
                Ack("p", 10, "k10", 0, 0, 10, 39.0),
                Consumed("fo", "low", 0, 10, "p", 10, 40.0),
            ]
        )
        return judge(
            logs, ["fo"], {"fo": {"high": 2, "low": 1}}, WINDOWS, until=60.0, coordinators=coordinators
        )

    summary = judged({"fo": 2})
    assert (summary["verdict"], summary["standby_consumed"]) == ("held", 0)
    assert summary["coordinator_outages"] == {"fo": [[12.0, 38.0, 26.0]]}
    assert (judged({"fo": 5})["verdict"], judged({"fo": 5})["standby_consumed"]) == ("violated", 1)
    assert (judged(None)["verdict"], judged(None)["coordinator_outages"]) == ("violated", {})


def test_standby_reads_during_a_coordinator_outage_are_the_failover_not_a_violation() -> None:
    # seed 36's fo-kp: both members' sessions expired when their coordinator's broker was killed (10 s);
    # the samples saw the coordinator refuse the group from 12 s to 90 s; the standby got back in first
    # (at 60 s) and read everything while the top member still could not rejoin
    def judged(read_at: float) -> dict[str, object]:
        logs = clean_logs()
        logs.add(
            [
                Fault("broker-kill", "broker-3", 10.0),
                Health((), 0, 0, 12.0, ("fo",)),
                Health((), 0, 0, 90.0),
                Ack("p", 10, "k10", 0, 0, 10, read_at - 1.0),
                Consumed("fo", "low", 0, 10, "p", 10, read_at),
            ]
        )
        return judge(
            logs, ["fo"], {"fo": {"high": 2, "low": 1}}, WINDOWS, until=120.0, coordinators={"fo": 2}
        )

    summary = judged(60.0)
    assert summary["coordinator_outages"] == {"fo": [[12.0, 90.0, 78.0]]}
    assert (summary["verdict"], summary["standby_consumed"]) == ("held", 0)
    # after the outage and its window, a standby read while the top member runs is caught again
    assert (judged(100.0)["verdict"], judged(100.0)["standby_consumed"]) == ("violated", 1)


def judged_with(
    outcome: dict[str, object],
    found: dict[tuple[str, int], tuple[int, int]] | None = None,
    complete: bool = True,
) -> dict[str, object]:
    logs = clean_logs()
    if found is None:  # the topic read back holds each acknowledged record where it was acknowledged
        found = {a.record: (a.partition, a.offset) for a in logs.acks}
    return judge(
        logs,
        ["fo"],
        {"fo": {"high": 2, "low": 1}},
        WINDOWS,
        until=30.0,
        reassignment=outcome,
        readback=(found, complete),
    )


DONE = {"completed": True, "copies_whole": True, "partitions_moved": 3, "drained_broker": 2}


def test_a_completed_reassignment_with_whole_copies_and_every_record_read_back_holds() -> None:
    summary = judged_with(dict(DONE))
    assert summary["verdict"] == "held"
    assert summary["reassignment"] == {
        **DONE,
        "readback": "complete",
        "missing_from_topic": 0,  # type: ignore[dict-item]
        "missing_detail": [],
        "held": True,
    }


def test_a_reassignment_that_failed_or_left_a_copy_short_violates() -> None:
    failed = judged_with({"completed": False, "error": "reassign apply exited 1: …"})
    assert failed["verdict"] == "violated" and failed["reassignment"]["held"] is False  # type: ignore[index]
    short = judged_with(
        {**DONE, "copies_whole": False, "copy_problems": ["partition 4: replicas [5] differ"]}
    )
    assert short["verdict"] == "violated"


def test_a_record_the_topic_no_longer_holds_after_the_move_violates_though_every_group_consumed_it() -> None:
    logs = clean_logs()
    found = {a.record: (a.partition, a.offset) for a in logs.acks}
    del found[("p", 3)]  # consumed before the move, gone from the log after it
    found[("p", 4)] = (0, 40)  # at another offset than acknowledged
    summary = judged_with(dict(DONE), found)
    assert (summary["verdict"], summary["lost"]) == ("violated", 0)
    entry = summary["reassignment"]
    assert entry["missing_from_topic"] == 2  # type: ignore[index]
    assert entry["missing_detail"] == [["p", 3, 0, 3], ["p", 4, 0, 4]]  # type: ignore[index]


def test_a_readback_that_did_not_reach_the_end_does_not_hold() -> None:
    assert judged_with(dict(DONE), complete=False)["verdict"] == "violated"


def test_throttles_left_behind_by_the_move_do_not_hold() -> None:
    summary = judged_with({**DONE, "throttles_left": ["broker 3: ['leader.replication.throttled.rate']"]})
    assert summary["verdict"] == "violated"


# ---------------------------------------------------------------- an expired session (session 20)
def session_20(with_the_members_word: bool) -> dict[str, object]:
    """Session 20's secured 30-minute run, its first burst in miniature: fo-kp's top member kp-high (30)
    holds all 4 partitions; its heartbeats stop succeeding at 645.0 (the machine starved); the
    coordinator expires its session, kp-low (10) is the group's only member and gets everything at
    654.9 and consumes 2,290 records at 655.0–656.0; kp-high's next heartbeat is answered
    UNKNOWN_MEMBER_ID at 655.8; it rejoins and takes everything back at 657.0. Both processes ran all
    along; the nearest broker fault was 32.6 s before the burst (outside the 31-s window)."""
    logs = SoakLogs()
    logs.add(
        [
            Life("fo-kp", "kp-high", True, 0.0),
            Life("fo-kp", "kp-low", True, 0.0),
            Fault("broker-kill", "broker-2", 622.4),
            Ownership("fo-kp", "kp-high", 1, (0, 1, 2, 3), 1.0, 655.8),
            Ownership("fo-kp", "kp-low", 1, (0, 1, 2, 3), 654.9, 656.5),
            Ownership("fo-kp", "kp-high", 2, (0, 1, 2, 3), 657.0, None),
        ]
    )
    burst = [Ack("p", s, None, None, s % 4, s // 4, 640.0 + s / 1000) for s in range(2290)]
    logs.add(burst)
    logs.add(
        Consumed("fo-kp", "kp-low", a.partition, a.offset, "p", a.sequence, 655.0 + a.sequence / 2290)
        for a in burst
    )
    if with_the_members_word:
        logs.add([SessionLost("fo-kp", "kp-high", 645.0, 655.8)])
    return judge(
        logs,
        ["fo-kp"],
        {"fo-kp": {"kp-high": 30, "kp-low": 10}},
        Windows(standby_s=31.0, overlap_s=5.0),
        until=700.0,
    )


def test_a_standby_consuming_after_the_top_members_session_expired_is_a_failover_not_a_violation() -> None:
    assert (session_20(False)["verdict"], session_20(False)["standby_consumed"]) == ("violated", 2290)
    summary = session_20(True)
    assert (summary["verdict"], summary["standby_consumed"]) == ("held", 0)
    assert summary["sessions_lost"] == {"fo-kp": 1}


def test_a_lost_session_excuses_only_its_own_group_and_only_within_the_window() -> None:
    def standby(lost: SessionLost, *more: Ownership) -> object:
        logs = clean_logs()
        read = Consumed("fo", "low", 0, 10, "p", 10, 40.0)
        logs.add([Ack("p", 10, "k10", 0, 0, 10, 39.0), read, lost, *more])
        return judge(logs, ["fo"], {"fo": {"high": 2, "low": 1}}, WINDOWS, until=60.0)["standby_consumed"]

    assert standby(SessionLost("fo", "high", 36.0, 37.0)) == 0
    assert standby(SessionLost("other", "high", 36.0, 37.0)) == 1  # another group's member
    assert standby(SessionLost("fo", "high", 20.0, 36.0)) == 0  # told 4 s before
    # told 10 s before, the window (5 s) over: high is still out of the group (it acquired nothing since)
    assert standby(SessionLost("fo", "high", 20.0, 30.0)) == 0
    # ... unless it came back (acquired its partitions at 33 s): then low reading 7 s later is caught
    assert standby(SessionLost("fo", "high", 20.0, 30.0), Ownership("fo", "high", 5, (0,), 33.0, None)) == 1


# ---------------------------------------------------------------- Jepsen's consumer invariants
def test_the_jepsen_anomalies_are_counted_shown_and_violate() -> None:
    logs = clean_logs()  # high read offsets 0..9 of partition 0
    logs.add(
        [
            Consumed("fo", "high", 0, 4, "p", 4, 20.0),  # back from 9 to 4: nonmonotonic
            Consumed("fo", "high", 0, 12, "p", 12, 21.0),
        ]
    )  # 4 → 12 past 10, 11: a skip
    logs.add(
        [
            Ack("p", 10, "k10", 0, 0, 10, 15.0),
            Ack("p", 11, "k11", 0, 0, 11, 15.0),
            Ack("p", 12, "k12", 0, 0, 12, 15.0),
            Ack("q", 0, "x", 0, 0, 3, 15.0),
        ]
    )  # q/0 at offset 3 too
    logs.add([Consumed("fo", "low", 0, 10, "p", 10, 22.0), Consumed("fo", "low", 0, 11, "p", 11, 22.0)])
    summary = judge(
        logs, ["fo"], {"fo": {"high": 2, "low": 1}}, Windows(standby_s=60.0, overlap_s=0.0), until=30.0
    )
    figures = [summary[k] for k in ("verdict", "nonmonotonic_polls", "poll_skips", "inconsistent_offsets")]
    assert figures == ["violated", 1, 1, 1]
    assert summary["poll_anomaly_detail"] == [
        {
            "kind": "nonmonotonic",
            "group": "fo",
            "member": "high",
            "partition": 0,
            "offsets": [9, 4],
            "t": 20.0,
            "skipped": 0,
            "skipped_first": [],
        },
        {
            "kind": "skip",
            "group": "fo",
            "member": "high",
            "partition": 0,
            "offsets": [4, 12],
            "t": 21.0,
            "skipped": 2,
            "skipped_first": [10, 11],
        },
    ]
    assert summary["inconsistent_offset_detail"] == [
        {"partition": 0, "offset": 3, "records": [["p", 3], ["q", 0]]}
    ]
    clean = judge(clean_logs(), ["fo"], {"fo": {"high": 2, "low": 1}}, WINDOWS, until=30.0)
    assert [clean[k] for k in ("nonmonotonic_polls", "poll_skips", "inconsistent_offsets")] == [0, 0, 0]


def test_a_member_that_hangs_with_records_waiting_is_reported_and_violates() -> None:
    # high owns partition 0 from 0.5 s and reads the 10 records of 1-10 s; 100 more arrive at 20-119 s
    # and it reads none: stuck from 20 s (the first unread record) to the end of the run, 200 s
    logs = clean_logs()
    logs.add([Ack("p", s, f"k{s}", 0, 0, s, 20.0 + s - 10) for s in range(10, 110)])
    priorities = {"fo": {"high": 2, "low": 1}}
    summary = judge(logs, ["fo"], priorities, WINDOWS, until=200.0, session_s={"fo": 6.0})
    assert (summary["verdict"], summary["stuck"]) == ("violated", 1)
    assert summary["stuck_members"] == [
        {
            "group": "fo",
            "member": "high",
            "partitions": [0],
            "since": 20.0,
            "until": 200.0,
            "seconds": 180.0,
            "waiting": 100,
        }
    ]
    # the same logs without session timeouts: not judged (the figure is absent from the verdict)
    unjudged = judge(logs, ["fo"], priorities, WINDOWS, until=200.0)
    assert unjudged["stuck_members"] == []
    # and with high reading them: held, none stuck
    logs.add(Consumed("fo", "high", 0, s, "p", s, 20.5 + s - 10) for s in range(10, 110))
    summary = judge(logs, ["fo"], priorities, WINDOWS, until=200.0, session_s={"fo": 6.0})
    assert (summary["verdict"], summary["stuck_members"]) == ("held", [])


def test_failovers_inside_a_coordinator_outage_are_left_out_of_the_bounded_figure() -> None:
    # two kills of the active member: the first (at 20 s) waits for the group's coordinator, offline
    # from 21 s to 45 s, and is over at 47 s; the second (at 60 s) is over at 66.5 s
    logs = clean_logs()
    logs.add(
        [
            Fault("member-kill", "high", 20.0),
            Life("fo", "high", False, 20.0),
            Health((2,), 0, 4, 21.0),
            Health((), 0, 0, 45.0),
            Ownership("fo", "low", 2, (0,), 47.0, 55.0),
            Life("fo", "high", True, 50.0),
            Ownership("fo", "high", 3, (0,), 55.0, None),
            Fault("member-kill", "high", 60.0),
            Life("fo", "high", False, 60.0),
            Ownership("fo", "low", 4, (0,), 66.5, None),
        ]
    )
    priorities = {"fo": {"high": 2, "low": 1}}
    summary = judge(
        logs, ["fo"], priorities, WINDOWS, until=90.0, coordinators={"fo": 2}, session_s={"fo": 6.0}
    )
    # nearest rank of [6.5, 27.0]: p50 the first, p99 the second
    assert summary["failover_s"] == {"p50": 6.5, "p99": 27.0, "max": 27.0}
    assert summary["failover_s_outside_outages"] == {
        "p50": 6.5,
        "p99": 6.5,
        "max": 6.5,
        "left_out": 1,
        "bound": 9.0,
    }
    # without the coordinator's samples nothing is left out
    other = judge(logs, ["fo"], priorities, WINDOWS, until=90.0)["failover_s_outside_outages"]
    assert (other["max"], other["left_out"], other["bound"]) == (27.0, 0, None)
