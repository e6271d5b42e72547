"""The soak's fault schedule: a pure function of the seed, so ``--seed`` replays the same faults.

Faults come one at a time (each is undone before the next starts: a broker restarted, a member resumed
or replaced, a toxic removed), from ``warmup_s`` until ``cooldown_s`` before the end. A broker target is
either a broker id or "the leader of partition p" (resolved when the fault hits: the leader moves with
earlier faults); a network fault may also target "the coordinator of group g" (its clients' links to it).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

from kafka_placement.errors import InvalidArgumentError

__all__ = [
    "BROKER_KINDS",
    "FULL_KINDS",
    "MEMBER_KINDS",
    "NETWORK_KINDS",
    "QUICK_KINDS",
    "PlannedFault",
    "fault_schedule",
]

#: broker-kill: SIGKILL, restarted after the hold; broker-pause: every process of its container frozen;
#: broker-partition: cut off from the rest by iptables on loopback (:mod:`~kafka_placement.soak.netfault`).
BROKER_KINDS = ("broker-kill", "broker-pause", "broker-partition")
#: member-kill: SIGKILL, a new process for it after the hold; member-pause: SIGSTOP past its session.
MEMBER_KINDS = ("member-kill", "member-pause")
#: Toxics on one broker's client links (its Toxiproxy proxy; replication passes no proxy), for the hold:
#: net-latency a slow link (latency + jitter), net-bandwidth a thin one, net-reset connections reset
#: (TCP RST), net-silent connections that stay open and swallow every answer, net-slow-close closes
#: held back (:mod:`~kafka_placement.soak.proxyfault` has the toxics). Only on a proxied cluster.
NETWORK_KINDS = ("net-latency", "net-bandwidth", "net-reset", "net-silent", "net-slow-close")
#: the kinds each profile draws from, in the order the seeded draw indexes them: QUICK_KINDS is the
#: list every quick schedule was drawn from before partitions existed, so a seed's quick schedule
#: (CI runs seed 1) stays what it was
QUICK_KINDS = ("broker-kill", "broker-pause", "member-kill", "member-pause")
FULL_KINDS = (*QUICK_KINDS, "broker-partition", *NETWORK_KINDS)


@dataclass(frozen=True)
class PlannedFault:
    at_s: float  # seconds after the load started
    kind: str
    target: str  # "broker-3", "leader-of-7" or a member name
    hold_s: float  # how long until it is undone


def fault_schedule(
    seed: int,
    duration_s: float,
    *,
    brokers: Sequence[int],
    partitions: int,
    members: Sequence[str],
    interval_s: float,
    member_pause_s: float,
    kinds: Sequence[str],
    warmup_s: float = 20.0,
    cooldown_s: float = 20.0,
    must_hit: Sequence[str] = (),
    must_cover: Sequence[str] = (),
    groups: Sequence[str] = (),
) -> list[PlannedFault]:
    """Faults of ``kinds`` every ``interval_s`` (± a quarter, seeded) in
    [warmup_s, duration_s - cooldown_s); each of ``must_hit`` killed or paused at least once when the
    schedule holds at least ``len(must_hit)`` faults (module docstring); each kind of ``must_cover``
    drawn at least once where the schedule has a fault to spare (:func:`_cover_every_kind`). A network
    fault targets the coordinator of one of ``groups`` a third of the time."""
    if duration_s <= 0 or interval_s <= 0 or member_pause_s <= 0:
        raise InvalidArgumentError(
            f"duration_s, interval_s and member_pause_s must be > 0, got {duration_s}, {interval_s}, "
            f"{member_pause_s}"
        )
    if not brokers or partitions < 1 or not members:
        raise InvalidArgumentError("a fault schedule needs brokers, partitions >= 1 and members")
    if not set(must_hit) <= set(members):
        strangers = sorted(set(must_hit) - set(members))
        raise InvalidArgumentError(f"must_hit {strangers} are not among the members")
    allowed = BROKER_KINDS + MEMBER_KINDS + NETWORK_KINDS
    unknown = sorted(set(kinds) - set(allowed) | set(must_cover) - set(kinds))
    if not kinds or unknown:
        raise InvalidArgumentError(
            f"fault kinds {unknown or '(none)'} not allowed; allowed: {', '.join(allowed)}"
        )
    if set(must_cover) & set(MEMBER_KINDS):
        raise InvalidArgumentError(f"must_cover takes broker and network kinds, not {sorted(must_cover)}")
    choices = tuple(kinds)
    rng = random.Random(seed)
    out: list[PlannedFault] = []
    at = warmup_s
    while True:
        kind = rng.choice(choices)
        if kind in NETWORK_KINDS:  # drawn apart from the broker kinds: the quick draw is unchanged
            target = _network_target(rng, brokers, partitions, groups)
            hold = rng.uniform(5.0, 15.0)
        elif kind in BROKER_KINDS:
            target = (
                f"leader-of-{rng.randrange(partitions)}"
                if rng.random() < 0.5
                else f"broker-{rng.choice(list(brokers))}"
            )
            hold = rng.uniform(5.0, 15.0)
        else:
            target = rng.choice(list(members))
            hold = member_pause_s if kind == "member-pause" else rng.uniform(3.0, 10.0)
        if at + hold > duration_s - cooldown_s:
            hit = _hit_every_active_member(out, must_hit)
            return _cover_every_kind(
                hit, must_cover, must_hit, random.Random(f"{seed}/cover"), brokers, partitions, groups
            )
        out.append(PlannedFault(round(at, 3), kind, target, round(hold, 3)))
        at += hold + interval_s * rng.uniform(0.75, 1.25)


#: A member kill's hold is drawn from 3-10 s; a broker fault turned into one keeps its time and at most this.
MAX_MEMBER_KILL_HOLD_S = 10.0


def _hit_every_active_member(plan: list[PlannedFault], must_hit: Sequence[str]) -> list[PlannedFault]:
    """``plan`` with each member of ``must_hit`` that no member fault targets made the target of one.

    In order of preference: the earliest member fault on a member not in ``must_hit`` (or else on one
    it hits twice) takes the missing member as its target (kind, time and hold unchanged: a pause lasts
    the same whoever it stops), else
    the earliest broker fault becomes a member kill at the same time, its hold capped at
    :data:`MAX_MEMBER_KILL_HOLD_S` (shorter only: every later fault still starts after it ends). The
    earliest, because a late fault is the one a slow broker restart makes the runner skip. Every fault
    not picked is what the seed drew."""
    out = list(plan)
    hit = {f.target for f in out if f.kind in MEMBER_KINDS}
    protected = set(must_hit)
    for member in dict.fromkeys(must_hit):
        if member in hit:
            continue
        hits = [f.target for f in out if f.kind in MEMBER_KINDS]
        # a member fault on a member not to be hit, else a second hit of one that is
        spare = [i for i, f in enumerate(out) if f.kind in MEMBER_KINDS and f.target not in protected] or [
            i for i, f in enumerate(out) if f.kind in MEMBER_KINDS and hits.count(f.target) > 1
        ]
        brokers = [i for i, f in enumerate(out) if f.kind in BROKER_KINDS + NETWORK_KINDS]
        if spare:
            out[spare[0]] = replace(out[spare[0]], target=member)
        elif brokers:
            i = brokers[0]
            out[i] = replace(
                out[i], kind="member-kill", target=member, hold_s=min(out[i].hold_s, MAX_MEMBER_KILL_HOLD_S)
            )
        else:
            break  # fewer faults than members to hit: the schedule has no room
        hit.add(member)
    return out


def _network_target(
    rng: random.Random, brokers: Sequence[int], partitions: int, groups: Sequence[str]
) -> str:
    """A broker, the leader of a partition, or (with groups) the coordinator of one, a third each."""
    pick = rng.randrange(3 if groups else 2)
    if pick == 2:
        return f"coordinator-of-{rng.choice(list(groups))}"
    return f"leader-of-{rng.randrange(partitions)}" if pick == 1 else f"broker-{rng.choice(list(brokers))}"


def _cover_every_kind(
    plan: list[PlannedFault],
    must_cover: Sequence[str],
    must_hit: Sequence[str],
    rng: random.Random,
    brokers: Sequence[int],
    partitions: int,
    groups: Sequence[str],
) -> list[PlannedFault]:
    """``plan`` with each kind of ``must_cover`` it lacks put in place of a spare fault, at the same time
    and hold, with a target drawn from ``rng`` (a separate stream: the main draw is untouched). Spare,
    in order of preference: the latest fault of a kind drawn more than once, else the latest of a kind
    not in ``must_cover`` (the early faults stay the seed's). Never the first kill or pause of a
    ``must_hit`` member (its group must still fail over; a second one is spare), nor the only fault of a
    kind to cover. Without a spare fault a kind stays missing: a short run has no room."""
    out = list(plan)
    first_hits = {
        next(i for i, f in enumerate(out) if f.kind in MEMBER_KINDS and f.target == member)
        for member in must_hit
        if any(f.kind in MEMBER_KINDS and f.target == member for f in out)
    }
    for kind in dict.fromkeys(must_cover):
        if any(f.kind == kind for f in out):
            continue
        counts = {k: sum(f.kind == k for f in out) for k in {f.kind for f in out}}
        free = [
            i
            for i, f in enumerate(out)
            if i not in first_hits and (counts[f.kind] > 1 or f.kind not in must_cover)
        ]
        spare = [i for i in free if counts[out[i].kind] > 1] or free
        if not spare:
            continue
        i = spare[-1]
        target = (
            _network_target(rng, brokers, partitions, groups)
            if kind in NETWORK_KINDS
            else f"broker-{rng.choice(list(brokers))}"
        )
        out[i] = replace(out[i], kind=kind, target=target)
    return out
