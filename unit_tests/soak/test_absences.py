"""A failover member out of its group by its own word (``session-lost``) is not the one a standby
yields to."""

from __future__ import annotations

import pytest

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.soak.absences import ABSENCE_CAP_S, absence_ends, absent_at, session_absences
from kafka_placement.soak.events import Consumed, Life, Ownership, SessionLost
from kafka_placement.soak.invariants import standby_consumption

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
