"""A failover member out of its group by its own word (``session-lost``) is not the one a standby
yields to."""

from __future__ import annotations

import pytest

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.soak.absences import ABSENCE_CAP_S, absence_ends, absent_at, all_absent, session_absences
from kafka_placement.soak.events import Ack, Committed, Consumed, Life, Ownership, SessionLost
from kafka_placement.soak.invariants import standby_consumption
from kafka_placement.soak.stuck import stuck_members

PRIORITIES = {"fo-cp": {"cp-high": 30, "cp-java": 20, "cp-low": 10}}
START = [Life("fo-cp", name, True, 0.0) for name in ("cp-high", "cp-java", "cp-low")]
WINDOW_S = 31.0


def reads(member: str, start: float, end: float) -> list[Consumed]:
    return [Consumed("fo-cp", member, 1, i, "p", i, start + i * 0.1) for i in range(int((end - start) * 10))]


def test_an_absence_runs_from_the_last_heartbeat_to_the_next_acquisition() -> None:
    lost = SessionLost("fo-cp", "cp-high", since=256.2, t=262.2)
    owned = [
        Ownership("fo-cp", "cp-high", 4, (0, 1), 10.0, 235.8),
        Ownership("fo-cp", "cp-high", 9, (), 280.0, 290.0),  # an empty assignment is not a way back
        Ownership("fo-cp", "cp-high", 10, (0, 1), 308.97, None),
    ]
    assert session_absences([lost], owned) == {"fo-cp": [("cp-high", 256.2, 308.97)]}
    assert absent_at([("cp-high", 256.2, 308.97)], 300.0) == {"cp-high"}
    assert absent_at([("cp-high", 256.2, 308.97)], 308.97) == set()
    assert absence_ends({"fo-cp": [("cp-high", 256.2, 308.97)]}) == {"fo-cp": [308.97]}


def test_a_member_that_never_acquires_again_is_out_for_the_cap_only() -> None:
    lost = SessionLost("fo-cp", "cp-high", since=100.0, t=106.0)
    assert session_absences([lost], []) == {"fo-cp": [("cp-high", 100.0, 106.0 + ABSENCE_CAP_S)]}
    late = [Ownership("fo-cp", "cp-high", 3, (0,), 106.0 + ABSENCE_CAP_S + 50, None)]
    assert session_absences([lost], late, cap_s=30.0) == {"fo-cp": [("cp-high", 100.0, 136.0)]}
    with pytest.raises(InvalidArgumentError, match="cap_s must be >= 0"):
        session_absences([lost], [], cap_s=-1.0)


def test_seed_45s_standby_reading_while_the_top_member_was_fenced_is_not_a_violation() -> None:
    """Soak seed 45, group fo-cp (times from the run, less 1796035800): cp-high's last heartbeat 256.2 s,
    told 262.2 s; its coordinator connection hung in a TLS handshake; cp-java read partitions 1 and 3
    from 304.2 to 305.0 s (42 s after, past the 31 s window) and cp-high acquired everything at 308.97 s."""
    lost = SessionLost("fo-cp", "cp-high", since=256.2, t=262.2)
    owned = [Ownership("fo-cp", "cp-high", 10, (0, 1, 2, 3), 308.97, None)]
    standby = reads("cp-java", 304.2, 305.0)
    changes = {"fo-cp": [lost.since, lost.t]}
    # the rule before: cp-high's process ran, so it was the member to yield to
    assert standby_consumption(standby, START, PRIORITIES, WINDOW_S, (), changes) == standby
    absences = session_absences([lost], owned)
    assert standby_consumption(standby, START, PRIORITIES, WINDOW_S, (), changes, None, absences) == []
    # once back, cp-high is the top member again: a standby read a window after its return is caught
    late = reads("cp-java", 308.97 + WINDOW_S + 1, 308.97 + WINDOW_S + 1.5)
    with_return = {"fo-cp": [*changes["fo-cp"], *absence_ends(absences)["fo-cp"]]}
    assert standby_consumption(late, START, PRIORITIES, WINDOW_S, (), with_return, None, absences) == late


def test_seed_52s_top_member_back_with_the_same_partitions_is_back_at_its_first_commit_sent_after() -> None:
    """Soak seed 52, group fo-kp (times from the run, less 1796072600): kp-high acquired all 24 partitions
    at 34.217 s, learned at 37.0 s that its generation was gone (last heartbeat 34.239 s), rejoined and
    was given the same 24: nothing new acquired until 209.4 s, while the coordinator went on taking its
    synchronous commits (about ten a second). Its reads 150-151 s were judged a standby's."""
    priorities = {"fo-kp": {"kp-high": 30, "kp-low": 10}}
    start = [Life("fo-kp", name, True, 0.0) for name in ("kp-high", "kp-low")]
    lost = SessionLost("fo-kp", "kp-high", since=34.239, t=37.0)
    owned = [Ownership("fo-kp", "kp-high", 16, tuple(range(24)), 34.217, 209.4)]
    commits = [
        Committed("fo-kp", "kp-high", p, 100 + i, 36.0 + i * 0.1 + 0.05, 36.0 + i * 0.1)
        for i in range(30)
        for p in (0, 1)
    ]
    top_reads = [Consumed("fo-kp", "kp-high", 1, i, "p", i, 150.0 + i * 0.1) for i in range(10)]
    changes = {"fo-kp": [lost.since, lost.t]}
    # the rule before: out from 34.239 s until the cap (157 s), so its own reads were a standby's
    before = session_absences([lost], owned)
    assert before == {"fo-kp": [("kp-high", 34.239, 37.0 + ABSENCE_CAP_S)]}
    assert standby_consumption(top_reads, start, priorities, WINDOW_S, (), changes, None, before) == top_reads
    # back when the first commit it sent after 37.0 s (sent 37.0, accepted 37.05) was accepted
    absences = session_absences([lost], owned, commits=commits)
    assert absences == {"fo-kp": [("kp-high", 34.239, 37.05)]}
    assert standby_consumption(top_reads, start, priorities, WINDOW_S, (), changes, None, absences) == []
    # a commit sent before the member learned proves nothing, even if its answer came after
    in_flight = [Committed("fo-kp", "kp-high", 0, 99, 40.0, 36.9)]
    assert session_absences([lost], owned, commits=in_flight) == before
    # nor does an asynchronous one (no send time), nor another member's
    others = [Committed("fo-kp", "kp-high", 0, 99, 40.0), Committed("fo-kp", "kp-low", 0, 99, 40.0, 38.0)]
    assert session_absences([lost], owned, commits=others) == before


def test_past_the_cap_a_standby_beside_a_running_top_member_is_caught_again() -> None:
    """An assignor that gave a rejoined top member nothing would hide behind its old session-lost for ever
    without the cap."""
    lost = SessionLost("fo-cp", "cp-high", since=100.0, t=106.0)
    absences = session_absences([lost], [])
    inside = reads("cp-java", 150.0, 150.5)
    after = reads("cp-java", 106.0 + ABSENCE_CAP_S + WINDOW_S + 1, 106.0 + ABSENCE_CAP_S + WINDOW_S + 1.5)
    changes = {"fo-cp": [lost.since, lost.t, *absence_ends(absences)["fo-cp"]]}
    judged = standby_consumption([*inside, *after], START, PRIORITIES, WINDOW_S, (), changes, None, absences)
    assert judged == after


def test_every_member_out_is_the_intersection_of_their_absences() -> None:
    spans = [("a", 10.0, 30.0), ("a", 25.0, 50.0), ("a", 60.0, 70.0), ("b", 20.0, 65.0)]
    assert all_absent(spans, ["a", "b"]) == [(20.0, 50.0), (60.0, 65.0)]
    assert all_absent(spans, ["a", "b", "c"]) == []  # c never left
    assert all_absent(spans, ["a"]) == [(10.0, 50.0), (60.0, 70.0)]


def test_seed_45s_orphan_while_both_fo_kp_members_were_out_is_not_a_hang() -> None:
    """Soak seed 45, fo-kp (times less 1796036000): kp-low's session lost since 213.76 (told 246.59), kp-
    high's since 213.8 (told 224.87, when it paused and released its 24 partitions); the coordinator
    unloaded the group until 298.4; kp-high acquired everything again at 299.4. Partition 0 had
    records waiting from 224.87 and no owner until then: 74.5 s, past the 66 s bound, while nobody
    could be in the group."""
    group = "kp-soak-ae8587-fo-kp"
    owned = [
        Ownership(group, "kp-high", 7, (0,), 100.0, 224.87),
        Ownership(group, "kp-low", 7, (), 100.0, 213.76),
        Ownership(group, "kp-high", 9, (0,), 299.4, None),
    ]
    acked = [Ack("p", i, None, None, 0, i, 200.0 + i) for i in range(150)]
    read = [Consumed(group, "kp-high", 0, i, "p", i, 200.5 + i) for i in range(24)]
    read += [Consumed(group, "kp-high", 0, i, "p", i, 300.0 + i / 100) for i in range(24, 150)]
    lost = [SessionLost(group, "kp-low", 213.76, 246.59), SessionLost(group, "kp-high", 213.8, 224.87)]
    session = {group: 6.0}
    (orphan,) = stuck_members(owned, read, acked, [], session, until=400.0)  # the rule before: a hang
    assert (orphan.member, orphan.since, orphan.until) == ("", 224.87, 299.4)
    absences = session_absences(lost, owned)
    assert stuck_members(owned, read, acked, [], session, until=400.0, absences=absences) == []
    # with one member in the group the whole time, the same silence is still an orphan
    only_low = session_absences(lost[:1], owned)
    assert len(stuck_members(owned, read, acked, [], session, until=400.0, absences=only_low)) == 1


def test_a_commit_says_when_it_was_sent_and_older_logs_still_read() -> None:
    from kafka_placement.soak.events import dump_event, parse_event

    synchronous = Committed("fo-kp", "kp-high", 3, 120, 37.05, 37.0)
    assert parse_event(dump_event(synchronous)) == synchronous
    asynchronous = Committed("fo-kp", "kp-high", 3, 120, 37.05)
    assert "sent" not in dump_event(asynchronous)
    assert parse_event(dump_event(asynchronous)) == asynchronous
    older = '{"ev":"committed","group":"fo-kp","member":"kp-high","partition":3,"offset":120,"t":37.05}'
    assert parse_event(older) == asynchronous
