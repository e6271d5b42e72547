"""Every invariant of :mod:`kafka_placement.soak.invariants` over one run's logs, as one verdict and the
JSON summary ``kafka-placement soak --json`` writes (sans-I/O)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafka_placement.soak.absences import absence_ends, session_absences
from kafka_placement.soak.events import (
    Ack,
    Committed,
    Consumed,
    Event,
    Fault,
    Health,
    Life,
    Ownership,
    RecordId,
    SessionLost,
)
from kafka_placement.soak.health import coordinator_outages
from kafka_placement.soak.invariants import (
    close_at_deaths,
    commits_beyond_consumed,
    double_owners,
    duplicate_deliveries,
    failover_times,
    lost_records,
    misplaced_records,
    missing_from_topic,
    outside_outages,
    percentile,
    stalled_producers,
    standby_consumption,
)
from kafka_placement.soak.poll_order import inconsistent_offsets, log_offsets, poll_anomalies
from kafka_placement.soak.stuck import stuck_members

__all__ = ["STALL_OTHERS_MIN", "STALL_S", "SoakLogs", "Windows", "judge"]

#: A producer with no acknowledgement for this long while the others went on is stalled: 2.5× the
#: producers' delivery timeout (120 s), by which every record sent is acknowledged or failed.
STALL_S = 300.0
#: ... and "the others went on" means at least this many acknowledgements of theirs in that time.
STALL_OTHERS_MIN = 1000


#: a failover (outside coordinator outages) should be over within the session timeout plus this
FAILOVER_MARGIN_S = 3.0


@dataclass
class SoakLogs:
    acks: list[Ack] = field(default_factory=list)
    ownerships: list[Ownership] = field(default_factory=list)
    consumed: list[Consumed] = field(default_factory=list)
    committed: list[Committed] = field(default_factory=list)
    lives: list[Life] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    healths: list[Health] = field(default_factory=list)
    sessions_lost: list[SessionLost] = field(default_factory=list)

    def add(self, events: Iterable[Event]) -> None:
        lists: dict[type[Any], list[Any]] = {
            Ack: self.acks,
            Ownership: self.ownerships,
            Consumed: self.consumed,
            Committed: self.committed,
            Life: self.lives,
            Fault: self.faults,
            Health: self.healths,
            SessionLost: self.sessions_lost,
        }
        for event in events:
            lists[type(event)].append(event)


@dataclass(frozen=True)
class Windows:
    """The stated tolerances: standby consumption is allowed ``standby_s`` after a membership change;
    two holdings of one partition may overlap ``overlap_s`` (a resumed process learning it was replaced)."""

    standby_s: float
    overlap_s: float


def judge(
    logs: SoakLogs,
    groups: Iterable[str],
    priorities: Mapping[str, Mapping[str, int]],
    windows: Windows,
    until: float,
    load: tuple[float, float] | None = None,
    reassignment: Mapping[str, Any] | None = None,
    readback: tuple[Mapping[RecordId, tuple[int, int]], bool] | None = None,
    coordinators: Mapping[str, int] | None = None,
    session_s: Mapping[str, float] | None = None,
    high_watermarks: Mapping[int, int] | None = None,
) -> dict[str, Any]:
    """The summary: ``verdict`` ("held" / "violated") and every figure behind it. ``load`` is the producers'
    (start, end) wall time; without it no producer is judged stalled. ``reassignment`` is the operation's
    outcome (:class:`~kafka_placement.soak.operation.ThrottledReassignment`) and ``readback`` the topic
    read back after it (records found, whether the read reached the end): the move must have completed
    with whole copies and the topic must hold every acknowledged record. ``coordinators`` (group → its
    ``__consumer_offsets`` partition) with the logs' ``health`` samples gives each group's coordinator
    outages; no standby read is judged during one, a coordinator back is a membership change of its group,
    and so is a member's own ``session-lost`` (at its last successful heartbeat and again when it was
    told: the group went on without it somewhere in between); from then until it acquires partitions again
    it is not the member the standby must yield to (:mod:`~kafka_placement.soak.absences`). Jepsen's
    consumer invariants (:mod:`~kafka_placement.soak.poll_order`) read the topic's content from the
    acknowledgements, every group's reads and ``readback``. With ``session_s`` (group → its session
    timeout) members that hang are judged (:func:`~kafka_placement.soak.stuck.stuck_members`;
    ``high_watermarks``: the topic's, read back after the run)."""
    lost = lost_records(logs.acks, logs.consumed, groups)
    ownerships = close_at_deaths(logs.ownerships, logs.faults)
    doubles = double_owners(ownerships, logs.lives, until=until, tolerance_s=windows.overlap_s)
    misplaced = misplaced_records(logs.acks)
    # every broker fault (kill, pause, partition) moves leaders and coordinators, and a network fault on a
    # broker's client links can expire the sessions of the members it coordinates; a skipped one did nothing
    broker_faults = [
        f.t for f in logs.faults if f.kind.startswith(("broker-", "net-")) and not f.kind.endswith("-skipped")
    ]
    outages = coordinator_outages(logs.healths, coordinators or {}, until)
    group_changes: dict[str, list[float]] = {
        group: [end for _start, end in spans] for group, spans in outages.items()
    }
    for lost_session in logs.sessions_lost:
        group_changes.setdefault(lost_session.group, []).extend((lost_session.since, lost_session.t))
    absences = session_absences(logs.sessions_lost, ownerships, commits=logs.committed)
    for group, returns in absence_ends(absences).items():
        group_changes.setdefault(group, []).extend(returns)
    standby = standby_consumption(
        logs.consumed,
        logs.lives,
        priorities,
        windows.standby_s,
        broker_faults,
        group_changes,
        outages,
        absences,
    )
    found = readback[0] if readback is not None else None
    inconsistent = inconsistent_offsets(logs.acks, logs.consumed, found)
    polls = poll_anomalies(logs.consumed, ownerships, log_offsets(logs.acks, logs.consumed, found))
    nonmonotonic = [a for a in polls if a.kind == "nonmonotonic"]
    skips = [a for a in polls if a.kind == "skip"]
    early_commits = commits_beyond_consumed(logs.committed, logs.consumed)
    failovers = failover_times(logs.faults, ownerships)
    times = [f.seconds for f in failovers if f.seconds is not None]
    calm_times, in_outages = outside_outages(failovers, ownerships, outages)
    unrecovered = [f for f in failovers if f.seconds is None]
    # a record no group consumed (e.g. missing from the topic) is one lost record, not one per group
    lost_total = len(set().union(*lost.values()))
    stalled = stalled_producers(logs.acks, load[0], load[1], STALL_S, STALL_OTHERS_MIN) if load else {}
    operation = None if reassignment is None else _operation(reassignment, logs.acks, readback)
    stuck = (
        []
        if session_s is None
        else stuck_members(
            ownerships,
            logs.consumed,
            logs.acks,
            logs.faults,
            session_s,
            until,
            outages,
            high_watermarks,
            absences=absences,
        )
    )
    violated = (
        lost_total
        or doubles
        or misplaced
        or standby
        or early_commits
        or unrecovered
        or stalled
        or polls
        or inconsistent
        or stuck
        or (operation is not None and not operation["held"])
    )
    return {
        "verdict": "violated" if violated else "held",
        "acknowledged": len({ack.record for ack in logs.acks}),
        "lost": lost_total,
        "lost_by_group": {group: [list(r) for r in records[:20]] for group, records in lost.items()},
        "duplicates": sum(duplicate_deliveries(logs.consumed).values()),
        "duplicates_by_group": duplicate_deliveries(logs.consumed),
        "double_owned": len(doubles),
        "double_owned_detail": [
            {
                "group": d.group,
                "partition": d.partition,
                "members": list(d.members),
                "seconds": round(d.seconds, 3),
            }
            for d in doubles[:20]
        ],
        "misplaced": len(misplaced),
        "standby_consumed": len(standby),
        "sessions_lost": _per_group(s.group for s in logs.sessions_lost),
        "nonmonotonic_polls": len(nonmonotonic),
        "poll_skips": len(skips),
        "inconsistent_offsets": len(inconsistent),
        "poll_anomaly_detail": [
            {
                "kind": a.kind,
                "group": a.group,
                "member": a.member,
                "partition": a.partition,
                "offsets": list(a.offsets),
                "t": round(a.t, 3),
                "skipped": a.skipped_count,
                "skipped_first": list(a.skipped),
            }
            for a in [*nonmonotonic[:20], *skips[:20]]
        ],
        "inconsistent_offset_detail": [
            {"partition": i.partition, "offset": i.offset, "records": [list(r) for r in i.records]}
            for i in inconsistent[:20]
        ],
        "commits_beyond_consumed": len(early_commits),
        "stuck": len(stuck),  # the detail below lists the first 20
        "stuck_members": [
            {
                "group": s.group,
                "member": s.member,
                "partitions": list(s.partitions),
                "since": round(s.since, 3),
                "until": round(s.until, 3),
                "seconds": round(s.seconds, 1),
                "waiting": s.waiting,
            }
            for s in stuck[:20]
        ],
        "failovers": len(failovers),
        "failovers_unrecovered": len(unrecovered),
        "failover_s": {
            "p50": _rounded(percentile(times, 50)),
            "p99": _rounded(percentile(times, 99)),
            "max": _rounded(max(times) if times else None),
        },
        # issue 45's bound: p99 at most the session timeout + 3 s, outside measured coordinator outages
        "failover_s_outside_outages": {
            "p50": _rounded(percentile(calm_times, 50)),
            "p99": _rounded(percentile(calm_times, 99)),
            "max": _rounded(max(calm_times) if calm_times else None),
            "left_out": in_outages,
            "bound": None if not session_s else max(session_s.values()) + FAILOVER_MARGIN_S,
        },
        "stalled_producers": {name: round(gap, 1) for name, gap in sorted(stalled.items())},
        "faults": [{"kind": f.kind, "target": f.target, "t": round(f.t, 3)} for f in logs.faults],
        "windows_s": {"standby": windows.standby_s, "overlap": windows.overlap_s},
        "coordinator_outages": {
            group: [[round(a, 3), round(b, 3), round(b - a, 1)] for a, b in spans]
            for group, spans in outages.items()
        },
        **({} if operation is None else {"reassignment": operation}),
    }


def _operation(
    outcome: Mapping[str, Any],
    acks: list[Ack],
    readback: tuple[Mapping[RecordId, tuple[int, int]], bool] | None,
) -> dict[str, Any]:
    """The reassignment's entry: its outcome, what the readback missed, and whether it held."""
    entry = dict(outcome)
    if readback is None:
        entry["readback"] = "not read"
        missing: list[Ack] = []
    else:
        found, complete = readback
        missing = missing_from_topic(acks, found)
        entry["readback"] = "complete" if complete else "incomplete (timed out)"
        entry["missing_from_topic"] = len(missing)
        entry["missing_detail"] = [[a.producer, a.sequence, a.partition, a.offset] for a in missing[:20]]
    entry["held"] = bool(
        outcome.get("completed")
        and outcome.get("copies_whole")
        and not outcome.get("throttles_left")
        and readback is not None
        and readback[1]
        and not missing
    )
    return entry


def _per_group(groups: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for group in groups:
        counts[group] = counts.get(group, 0) + 1
    return dict(sorted(counts.items()))


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
