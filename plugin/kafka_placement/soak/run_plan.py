"""The schedule stage of a soak run, pure: the profiles (load, faults, groups, producers) and
:func:`plan_run`, which turns a seed and the cluster's broker ids into a :class:`RunPlan` before
anything starts (the same seed replays the same faults)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from kafka_placement.soak.load import FULL_PRODUCERS, PRODUCERS, ProducerSpec
from kafka_placement.soak.members import FULL_GROUPS, GROUPS, Groups, active_members
from kafka_placement.soak.migration import FULL_MIGRATION, MigrationStep
from kafka_placement.soak.schedule import (
    FULL_KINDS,
    NETWORK_KINDS,
    QUICK_KINDS,
    PlannedFault,
    fault_schedule,
)

__all__ = ["PROFILES", "Profile", "RunPlan", "plan_run"]


@dataclass(frozen=True)
class Profile:
    rate_per_producer: float  # records per second
    partitions: int
    session_timeout_ms: int
    fault_interval_s: float
    #: the drain (after the load, once every broker is back) ends when each group consumed every
    #: acknowledged record, when no group consumed anything new for ``drain_stall_s``, or at ``drain_s``.
    #: Held runs here (load average 100-170) showed partitions unread for up to 69 s and records
    #: consumed up to 108 s after their ack following a broker pause or kill: the bounds are well past that
    drain_s: float
    drain_stall_s: float
    #: what the seeded schedule draws from (the quick one's list is the one it always drew from)
    fault_kinds: tuple[str, ...] = QUICK_KINDS
    #: kinds every schedule holds at least once where it has a fault to spare
    must_cover: tuple[str, ...] = ()
    groups: Groups = field(default_factory=lambda: GROUPS)
    producers: tuple[ProducerSpec, ...] = PRODUCERS
    #: a rolling migration to the consumer protocol during the load (:mod:`~kafka_placement.soak.migration`)
    migration: tuple[MigrationStep, ...] = ()

    @property
    def proxied(self) -> bool:
        """The run needs a cluster whose client links pass Toxiproxy (its network faults)."""
        return bool(set(self.fault_kinds) & set(NETWORK_KINDS))


PROFILES = {
    "quick": Profile(
        rate_per_producer=20.0,
        partitions=12,
        session_timeout_ms=6000,
        fault_interval_s=10.0,
        drain_s=420.0,
        drain_stall_s=150.0,
    ),
    # a fault every ~12 s (was 25 s before the network kinds): a 4-minute run then has room for a
    # failover of each of the four failover groups and each of the five network kinds
    "full": Profile(
        rate_per_producer=50.0,
        partitions=24,
        session_timeout_ms=6000,
        fault_interval_s=12.0,
        drain_s=900.0,
        drain_stall_s=150.0,
        fault_kinds=FULL_KINDS,
        must_cover=NETWORK_KINDS,
        groups=FULL_GROUPS,
        producers=FULL_PRODUCERS,
        migration=FULL_MIGRATION,
    ),
}


@dataclass(frozen=True)
class RunPlan:
    """What a run will do, decided before anything starts: a function of the seed and the cluster's
    broker ids (and a fresh prefix naming its topic and groups)."""

    seed: int
    minutes: float
    profile_name: str
    profile: Profile
    prefix: str
    faults: tuple[PlannedFault, ...]
    #: each failover group's active member: killed or paused at least once (``failover_s`` is timed)
    must_hit: tuple[str, ...]
    #: the broker the reassignment in flight drains of the topic
    drained_broker: int

    @property
    def duration_s(self) -> float:
        return self.minutes * 60.0

    @property
    def topic(self) -> str:
        return f"{self.prefix}-records"


def plan_run(
    seed: int, minutes: float, profile_name: str, broker_ids: list[int], prefix: str | None = None
) -> RunPlan:
    profile = PROFILES[profile_name]
    members = [name for group in profile.groups.values() for name, _client, _strategy, _prio in group]
    # a migrating group's active member is closed and replaced by its last step: a takeover every run
    moving = {step.member for step in profile.migration}
    must_hit = tuple(m for m in active_members(profile.groups) if m not in moving)
    faults = fault_schedule(
        seed,
        minutes * 60.0,
        brokers=broker_ids,
        partitions=profile.partitions,
        members=members,
        interval_s=profile.fault_interval_s,
        member_pause_s=profile.session_timeout_ms / 1000 + 4.0,
        kinds=profile.fault_kinds,
        must_hit=must_hit,
        must_cover=profile.must_cover,
        groups=list(profile.groups),
    )
    return RunPlan(
        seed,
        minutes,
        profile_name,
        profile,
        prefix or f"kp-soak-{uuid.uuid4().hex[:6]}",
        tuple(faults),
        must_hit,
        broker_ids[seed % len(broker_ids)],
    )
