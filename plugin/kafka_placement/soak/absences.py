"""When a member was out of its group by its own word, for the standby and stuck checks.

A member that logs ``session-lost`` is out of the group from its last successful heartbeat (``since``) on:
the coordinator expired or fenced it, and the group's assignor gives its partitions to the next member — a
standby reading then is the failover working, however long the way back takes (soak seed 45: the top
member's coordinator connection hung in its TLS handshake for 47 s under load while the standby read). It
is back when it next acquires partitions, or when the coordinator accepts a commit the member sent after it
learned of the loss: Kafka takes a classic member's OffsetCommit only at its current generation
(``ClassicGroup.validateOffsetCommit``), a consumer-protocol member's only at its current member epoch.
A member can rejoin and be given back exactly what it held (seed 52: ``kp-high`` of ``fo-kp`` learned at
21:03:57 that its generation was gone, rejoined and kept all 24 partitions, so it acquired nothing new, and
committed 50,000 offsets in the next three minutes while the checker still counted it out and judged its
reads a standby's). While every member of a group is out, nobody can own its
partitions, so the stuck check does not count that time against an orphaned partition (seed 45: the
coordinator of ``fo-kp`` unloaded the group for 50 s, its members rejoining in vain, while the health
sampler, slowed to one sample in 19 s, recorded no outage). A member that never acquires any again is
counted out for ``cap_s`` after it learned of the loss at most: past that, a standby reading while the top
member's process runs is judged again, so an assignor that ignored a rejoined top member is still caught.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.soak.events import Committed, Ownership, SessionLost

__all__ = ["ABSENCE_CAP_S", "Absence", "absence_ends", "absent_at", "all_absent", "session_absences"]

#: Longest a member that lost its session counts as out of its group without acquiring anything again.
ABSENCE_CAP_S = 120.0

#: (member, start, end) of one absence.
Absence = tuple[str, float, float]


def session_absences(
    sessions_lost: Iterable[SessionLost],
    ownerships: Iterable[Ownership],
    cap_s: float = ABSENCE_CAP_S,
    commits: Iterable[Committed] = (),
) -> dict[str, list[Absence]]:
    """group → its members' absences: from a ``session-lost``'s ``since`` to the member's next acquisition
    after it learned (``t``) or the acceptance of its next commit sent after ``t`` (``commits``: only a
    commit that says when it was sent counts), or ``t + cap_s`` when those come later or never; sorted
    by start."""
    if cap_s < 0:
        raise InvalidArgumentError(f"cap_s must be >= 0, got {cap_s}")
    acquired: dict[tuple[str, str], list[float]] = defaultdict(list)
    for own in ownerships:
        if own.partitions:
            acquired[(own.group, own.member)].append(own.acquired)
    # (sent, accepted) of each synchronous commit, once (a commit logs one line per partition); a
    # member's synchronous commits are one after another, so the first sent after a moment is also the
    # first accepted after it
    accepted: dict[tuple[str, str], set[tuple[float, float]]] = defaultdict(set)
    for commit in commits:
        if commit.sent is not None:
            accepted[(commit.group, commit.member)].add((commit.sent, commit.t))
    sent_in_order = {key: sorted(pairs) for key, pairs in accepted.items()}
    for times in acquired.values():
        times.sort()
    found: dict[str, list[Absence]] = defaultdict(list)
    for lost in sessions_lost:
        key = (lost.group, lost.member)
        times = acquired.get(key, [])
        at = bisect.bisect_left(times, lost.t)
        back = times[at] if at < len(times) else None
        pairs = sent_in_order.get(key, [])
        first = bisect.bisect_left(pairs, lost.t, key=lambda pair: pair[0])
        if first < len(pairs) and (back is None or pairs[first][1] < back):
            back = pairs[first][1]
        end = lost.t + cap_s if back is None else min(back, lost.t + cap_s)
        found[lost.group].append((lost.member, lost.since, end))
    for spans in found.values():
        spans.sort(key=lambda span: span[1])
    return dict(found)


def absent_at(absences: Sequence[Absence], t: float) -> set[str]:
    """The members of one group's ``absences`` out of it at ``t``."""
    return {member for member, start, end in absences if start <= t < end}


def absence_ends(absences: Mapping[str, Sequence[Absence]]) -> dict[str, list[float]]:
    """group → when its absent members came back: membership changes of the group."""
    return {group: [end for _member, _start, end in spans] for group, spans in absences.items()}


def all_absent(absences: Sequence[Absence], members: Iterable[str]) -> list[tuple[float, float]]:
    """The spans in which every one of ``members`` was out of the group (one group's ``absences``)."""
    common: list[tuple[float, float]] | None = None
    for member in sorted(set(members)):
        own = _union(sorted((start, end) for m, start, end in absences if m == member))
        common = own if common is None else _intersection(common, own)
        if not common:
            return []
    return common or []


def _union(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for start, end in spans:
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _intersection(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        start, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if start < end:
            out.append((start, end))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out
