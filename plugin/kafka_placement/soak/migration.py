"""A rolling migration of a failover group from the classic to the consumer protocol, in flight during
the full soak (docs/migration.md's procedure, under the soak's faults and load).

The group ``fo-mig`` starts as two kafka-python members ready for the move (``migration_ready=True``:
each advertises its priority in its subscription's rack id, so the broker ranks them as our classic
leader did once it converts the group). During the load each member in turn is closed (LeaveGroup)
and started again as a confluent-kafka consumer-protocol member with the same priority in
``client.rack`` — lowest priority first, so the active member moves last and the group has one
takeover per step, as docs/migration.md recommends. The schedule's faults go on meanwhile (a member
kill or pause may hit either member before, between or after its step).

It held when every step ran, no replacement process ended on its own, and the broker, asked after the
drain, describes the group on the consumer protocol with every member's priority visible
(:func:`~kafka_placement.groups.migration.migration_status`). The invariants (nothing lost, never two
owners, no standby consumption outside a membership change, Jepsen's) are the run's own.

Pure here: the steps, the timeline they share with the faults, and the judgement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_placement.soak.schedule import PlannedFault

__all__ = [
    "FULL_MIGRATION",
    "MIGRATING_GROUP",
    "MigrationStep",
    "StepDone",
    "judge_migration",
    "timeline",
]

#: the group that moves (its members: :data:`~kafka_placement.soak.members.FULL_GROUPS`)
MIGRATING_GROUP = "fo-mig"


@dataclass(frozen=True)
class MigrationStep:
    """At ``at_fraction`` of the load, ``member`` is closed and started again as ``to_client``."""

    member: str
    to_client: str
    at_fraction: float


#: lowest priority first; between the steps the group is mixed (a consumer-protocol group holding a
#: classic member), which the broker must rank by the classic member's advertised rack id
FULL_MIGRATION = (
    MigrationStep("mig-low", "confluent-consumer", 0.35),
    MigrationStep("mig-high", "confluent-consumer", 0.55),
)


@dataclass(frozen=True)
class StepDone:
    """A step as it ran: when (wall time), the process it replaced and how long its close took."""

    member: str
    from_client: str
    to_client: str
    t: float
    close_s: float


def timeline(
    faults: Sequence[PlannedFault], steps: Sequence[MigrationStep], duration_s: float
) -> list[tuple[float, PlannedFault | MigrationStep]]:
    """Faults and migration steps in the order they run (seconds into the load). A step due while a
    fault holds runs after it: the injector applies one thing at a time."""
    merged: list[tuple[float, PlannedFault | MigrationStep]] = [(f.at_s, f) for f in faults]
    merged += [(step.at_fraction * duration_s, step) for step in steps]
    # a fault and a step at the same second: the fault first (it was drawn for that slot)
    return sorted(merged, key=lambda item: (item[0], isinstance(item[1], MigrationStep)))


def judge_migration(
    steps: Sequence[MigrationStep],
    done: Sequence[StepDone],
    exits: Sequence[tuple[str, float, int]],
    final: Mapping[str, Any] | None,
    error: str | None = None,
) -> dict[str, Any]:
    """The migration's entry of the summary. ``exits``: member processes that ended on their own
    (name, wall time, code); ``final``: :meth:`MigrationStatus.summary` of the group read after the
    drain (None with ``error`` when it could not be read)."""
    problems: list[str] = []
    ran = {d.member: d for d in done}
    for step in steps:
        if step.member not in ran:
            problems.append(f"step {step.member} → {step.to_client} did not run")
    for name, t, code in exits:
        if name in ran and t >= ran[name].t:
            problems.append(f"{name} as {ran[name].to_client} ended on its own (exit code {code})")
    if final is None:
        problems.append(f"the group could not be described after the run: {error or 'no answer'}")
    else:
        if final.get("stage") != "consumer":
            problems.append(f"the group is {final.get('stage')} after the run, not on the consumer protocol")
        problems += [str(p) for p in final.get("problems", [])]
    return {
        "group": MIGRATING_GROUP,
        "steps": [
            {
                "member": d.member,
                "from": d.from_client,
                "to": d.to_client,
                "t": round(d.t, 3),
                "close_s": d.close_s,
            }
            for d in done
        ],
        "final": None if final is None else dict(final),
        "problems": problems,
        "held": not problems,
    }
