"""The soak's invariants, computed from the logs alone (sans-I/O: plain functions over
:mod:`kafka_placement.soak.events`).

- :func:`lost_records`: acknowledged records a group never consumed (must be none: at-least-once);
- :func:`duplicate_deliveries`: deliveries beyond the first, per group (counted; at-least-once allows them);
- :func:`double_owners`: two members of one group holding one partition at overlapping times, by the
  members' own ownership logs, each clipped to the times its process ran (a stopped process acts on nothing);
- :func:`misplaced_records`: keyed records acknowledged in another partition than the one predicted;
- :func:`missing_from_topic`: acknowledged records the topic, read back after the run (and after the
  reassignment moved its replicas), does not hold at the partition and offset they were acknowledged at;
- :func:`standby_consumption`: in a failover group, a record consumed by a member other than the
  highest-priority running one, later than ``window_s`` after the group's last membership change;
- :func:`commits_beyond_consumed`: an accepted commit of offset ``o`` before the group consumed ``o - 1``
  (it would skip a record after a failover: a loss waiting to happen);
- :func:`failover_times`: for each kill/pause of a member that owned partitions, the seconds until all of
  them were held again — by another member, or by the victim itself back from a restart or a pause
  (``None`` when some never were);
- :func:`stalled_producers`: producers that got no acknowledgement for longer than ``stall_s`` while the
  others got at least ``others_min`` (the cluster took writes; that producer's client did not).
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.soak.absences import Absence, absent_at
from kafka_placement.soak.events import Ack, Committed, Consumed, Fault, Life, Ownership, RecordId

__all__ = [
    "MEMBER_FAULTS",
    "DoubleOwner",
    "Failover",
    "close_at_deaths",
    "commits_beyond_consumed",
    "double_owners",
    "duplicate_deliveries",
    "failover_times",
    "lost_records",
    "misplaced_records",
    "missing_from_topic",
    "percentile",
    "running_periods",
    "stalled_producers",
    "standby_consumption",
]

#: Fault kinds whose target is a member that may own partitions (failover is timed from them).
MEMBER_FAULTS = frozenset({"member-kill", "member-pause"})


@dataclass(frozen=True)
class DoubleOwner:
    group: str
    partition: int
    members: tuple[str, str]
    start: float
    end: float

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class Failover:
    fault: Fault
    partitions: tuple[int, ...]
    seconds: float | None  # None: some partition never got a new owner


def lost_records(
    acks: Iterable[Ack], consumed: Iterable[Consumed], groups: Iterable[str]
) -> dict[str, list[RecordId]]:
    """Per group: the acknowledged records (sorted) that no member of the group consumed."""
    acked = {ack.record for ack in acks}
    seen: dict[str, set[RecordId]] = {group: set() for group in groups}
    for record in consumed:
        if record.group in seen:
            seen[record.group].add(record.record)
    return {group: sorted(acked - got) for group, got in seen.items()}


def duplicate_deliveries(consumed: Iterable[Consumed]) -> dict[str, int]:
    """Per group: deliveries beyond the first of each record (same producer and sequence)."""
    total: dict[str, int] = defaultdict(int)
    distinct: dict[str, set[RecordId]] = defaultdict(set)
    for record in consumed:
        total[record.group] += 1
        distinct[record.group].add(record.record)
    return {group: total[group] - len(distinct[group]) for group in sorted(total)}


def misplaced_records(acks: Iterable[Ack]) -> list[Ack]:
    """Keyed records whose acknowledged partition is not the predicted one."""
    return [
        ack
        for ack in acks
        if ack.key is not None and ack.predicted is not None and ack.partition != ack.predicted
    ]


def missing_from_topic(acks: Iterable[Ack], found: Mapping[RecordId, tuple[int, int]]) -> list[Ack]:
    """Acknowledged records not read back at their acknowledged (partition, offset): lost or moved by
    what copied the log. An acknowledgement without an offset is checked for its partition only."""
    missing = []
    for ack in acks:
        where = found.get(ack.record)
        if where is None or where[0] != ack.partition or (ack.offset is not None and where[1] != ack.offset):
            missing.append(ack)
    return missing


def running_periods(lives: Iterable[Life], until: float) -> dict[str, list[tuple[float, float]]]:
    """Per member: the [start, end) periods its process ran (``until`` closes a period still open)."""
    periods: dict[str, list[tuple[float, float]]] = defaultdict(list)
    up_since: dict[str, float] = {}
    for life in sorted(lives, key=lambda life: life.t):
        if life.up:
            up_since.setdefault(life.member, life.t)
        elif life.member in up_since:
            periods[life.member].append((up_since.pop(life.member), life.t))
    for member, since in up_since.items():
        periods[member].append((since, until))
    return dict(periods)


def _clipped(
    own: Ownership, periods: Sequence[tuple[float, float]] | None, until: float
) -> list[tuple[float, float]]:
    end = until if own.released is None else own.released
    if periods is None:
        return [(own.acquired, end)] if own.acquired < end else []
    out = []
    for start, stop in periods:
        lo, hi = max(start, own.acquired), min(stop, end)
        if lo < hi:
            out.append((lo, hi))
    return out


def double_owners(
    ownerships: Iterable[Ownership],
    lives: Iterable[Life] | None = None,
    *,
    until: float = math.inf,
    tolerance_s: float = 0.0,
) -> list[DoubleOwner]:
    """Overlaps longer than ``tolerance_s`` of two members' holdings of one partition in one group.

    ``lives``: when given, each holding counts only while its member's process ran (see
    :func:`running_periods`); a member never reported running then holds nothing.
    """
    if tolerance_s < 0:
        raise InvalidArgumentError(f"tolerance_s must be >= 0, got {tolerance_s}")
    periods = running_periods(lives, until) if lives is not None else None
    held: dict[tuple[str, int], list[tuple[float, float, str]]] = defaultdict(list)
    for own in ownerships:
        member_periods = None if periods is None else periods.get(own.member, [])
        for start, end in _clipped(own, member_periods, until):
            for partition in own.partitions:
                held[(own.group, partition)].append((start, end, own.member))
    found = []
    for (group, partition), spans in sorted(held.items()):
        spans.sort()
        for i, (_start_a, end_a, member_a) in enumerate(spans):
            for start_b, end_b, member_b in spans[i + 1 :]:
                if start_b >= end_a:
                    break  # sorted by start: no later span overlaps this one
                overlap_end = min(end_a, end_b)
                if member_a != member_b and overlap_end - start_b > tolerance_s:
                    found.append(DoubleOwner(group, partition, (member_a, member_b), start_b, overlap_end))
    return found


def standby_consumption(
    consumed: Iterable[Consumed],
    lives: Iterable[Life],
    priorities: Mapping[str, Mapping[str, int]],
    window_s: float,
    disruptions: Iterable[float] = (),
    group_disruptions: Mapping[str, Iterable[float]] | None = None,
    group_outages: Mapping[str, Iterable[tuple[float, float]]] | None = None,
    absences: Mapping[str, Sequence[Absence]] | None = None,
) -> list[Consumed]:
    """Records consumed in a failover group (``priorities``: group → member → priority, higher wins) by a
    member that was not the highest-priority running one present in the group (``absences``: group →
    its members out of it by their own word, :func:`~kafka_placement.soak.absences.session_absences`),
    more than ``window_s`` after the group's last membership change (a member's process starting or
    stopping) or the last of ``disruptions`` (times of faults that move group coordinators, e.g. a
    broker killed) or of the group's own ``group_disruptions`` (e.g. its coordinator back after an
    outage) before the record, and outside the group's ``group_outages`` ((start, end) of its
    coordinator's outages: while members cannot rejoin, whoever got in first holds the group, and that
    is the failover working)."""
    if window_s < 0:
        raise InvalidArgumentError(f"window_s must be >= 0, got {window_s}")
    for group, ranks in priorities.items():
        if len(set(ranks.values())) != len(ranks):
            raise InvalidArgumentError(
                f"failover group {group!r} has tied priorities {dict(ranks)}: must be distinct"
            )
    changes: dict[str, list[Life]] = defaultdict(list)
    for life in lives:
        if life.group in priorities:
            changes[life.group].append(life)
    for group_changes in changes.values():
        group_changes.sort(key=lambda life: life.t)
    common = list(disruptions)
    disrupted_in = {
        group: sorted(common + list((group_disruptions or {}).get(group, ()))) for group in priorities
    }
    outages_in = {group: list((group_outages or {}).get(group, ())) for group in priorities}
    absences_in = absences or {}
    found = []
    for record in sorted(consumed, key=lambda c: c.t):
        if record.group not in priorities:
            continue
        if any(start <= record.t <= end for start, end in outages_in[record.group]):
            continue
        ranks = priorities[record.group]
        running: dict[str, bool] = {}
        last_change = -math.inf
        for life in changes[record.group]:
            if life.t > record.t:
                break
            running[life.member] = life.up
            last_change = life.t
        disrupted = disrupted_in[record.group]
        before = bisect.bisect_right(disrupted, record.t)
        if before:
            last_change = max(last_change, disrupted[before - 1])
        if record.t - last_change <= window_s:
            continue
        out = absent_at(absences_in.get(record.group, ()), record.t)
        live = [member for member, up in running.items() if up and member in ranks and member not in out]
        top = max(live, key=lambda member: ranks[member]) if live else None
        if record.member != top:
            found.append(record)
    return found


def commits_beyond_consumed(committed: Iterable[Committed], consumed: Iterable[Consumed]) -> list[Committed]:
    """Accepted commits of offset ``o > 0`` made before any member of the group consumed ``o - 1``."""
    first_seen: dict[tuple[str, int, int], float] = {}
    for record in consumed:
        key = (record.group, record.partition, record.offset)
        first_seen[key] = min(record.t, first_seen.get(key, math.inf))
    return [
        commit
        for commit in committed
        if commit.offset > 0
        and first_seen.get((commit.group, commit.partition, commit.offset - 1), math.inf) > commit.t
    ]


def close_at_deaths(ownerships: Iterable[Ownership], faults: Iterable[Fault]) -> list[Ownership]:
    """Holdings still open at a ``member-kill`` of their member, closed at the kill (a killed process
    cannot log its release; a paused one keeps its holding: it may act on it when resumed)."""
    kills: dict[str, list[float]] = defaultdict(list)
    for fault in faults:
        if fault.kind == "member-kill":
            kills[fault.target].append(fault.t)
    out = []
    for own in ownerships:
        end = own.released if own.released is not None else math.inf
        death = min((t for t in kills.get(own.member, ()) if own.acquired <= t < end), default=None)
        out.append(own if death is None else dataclasses.replace(own, released=death))
    return out


def failover_times(faults: Iterable[Fault], ownerships: Sequence[Ownership]) -> list[Failover]:
    """For each member fault (:data:`MEMBER_FAULTS`; target = member name) that hit a member owning
    partitions: seconds from the fault until every one of them was held again — acquired after the fault by
    another member of its group, or by the victim itself (restarted after a kill, rejoined after a pause).
    Counting only other members timed a victim that came back and took its partitions straight back as
    unrecovered until some later rebalance moved them (a 694 s "failover" in a 30-minute run whose
    partitions were consumed again after 12 s). A partition another member already holds at the fault
    (it took over before: the broker had fenced the victim) is held again at once, 0 s: waiting for a
    holding acquired after the fault timed a paused victim's own return (an 11.1 s "failover" in the
    secured run of session 32, whose partitions another member had consumed since 0.5 s before)."""
    out = []
    for fault in sorted(faults, key=lambda f: f.t):
        if fault.kind not in MEMBER_FAULTS:
            continue
        victim = [
            own
            for own in ownerships
            if own.member == fault.target
            and own.acquired <= fault.t
            and (own.released is None or fault.t <= own.released)
        ]
        partitions = tuple(sorted({p for own in victim for p in own.partitions}))
        if not partitions:
            continue
        group = victim[0].group
        worst = 0.0
        for partition in partitions:
            taken = [
                max(own.acquired, fault.t)
                for own in ownerships
                if own.group == group
                and own not in victim
                and partition in own.partitions
                and (own.acquired >= fault.t or own.released is None or own.released > fault.t)
            ]
            if not taken:
                worst = math.nan
                break
            worst = max(worst, min(taken) - fault.t)
        out.append(Failover(fault, partitions, None if math.isnan(worst) else worst))
    return out


def outside_outages(
    failovers: Iterable[Failover],
    ownerships: Sequence[Ownership],
    outages: Mapping[str, Sequence[tuple[float, float]]],
) -> tuple[list[float], int]:
    """The failover times (s) whose span — from the fault until every partition was held again — no
    measured outage of its group's coordinator overlaps, and how many were left out. A failover inside an
    outage waits for the coordinator (nobody can join or sync), so it measures the cluster, not us."""
    group_of = {own.member: own.group for own in ownerships}
    kept: list[float] = []
    left_out = 0
    for failover in failovers:
        if failover.seconds is None:
            continue
        start, end = failover.fault.t, failover.fault.t + failover.seconds
        spans = outages.get(group_of.get(failover.fault.target, ""), ())
        if any(a < end and start < b for a, b in spans):
            left_out += 1
        else:
            kept.append(failover.seconds)
    return kept, left_out


def percentile(values: Sequence[float], q: float) -> float | None:
    """The nearest-rank ``q``-th percentile (0 < q <= 100) of ``values``; None when empty."""
    if not 0 < q <= 100:
        raise InvalidArgumentError(f"percentile q must be in (0, 100], got {q}")
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def stalled_producers(
    acks: Iterable[Ack], start: float, end: float, stall_s: float, others_min: int
) -> dict[str, float]:
    """Per producer whose longest time without an acknowledgement within ``[start, end]`` exceeds
    ``stall_s`` while the other producers got at least ``others_min`` acknowledgements in that time:
    that longest gap in seconds. A cluster that took no writes stalls everyone alike (not counted); a
    client that stopped while the others went on is a broken load, which the soak must not call held."""
    times: dict[str, list[float]] = defaultdict(list)
    for ack in acks:
        times[ack.producer].append(ack.t)
    everyone = sorted(t for ts in times.values() for t in ts)
    out: dict[str, float] = {}
    for producer, ts in times.items():
        ts.sort()
        points = [start, *[t for t in ts if start <= t <= end], end]
        for a, b in itertools.pairwise(points):
            if b - a <= stall_s:
                continue
            in_gap = bisect.bisect_left(everyone, b) - bisect.bisect_right(everyone, a)
            if in_gap >= others_min:  # none of them this producer's: its own acks bound the gap
                out[producer] = max(out.get(producer, 0.0), b - a)
    return out
