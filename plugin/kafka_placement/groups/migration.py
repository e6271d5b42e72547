"""Where a failover group stands in a move between the classic and the consumer protocol (pure).

A failover group moves member by member (docs/migration.md). At each moment one party ranks the members:
the classic leader (our failover assignor, priorities from the subscriptions' userData) while the group is
classic, the broker's server assignor once Kafka converted it (priorities from each member's rack id:
``client.rack`` of consumer-protocol members, the classic subscription's rack id of classic ones). This
module says which party that is, what each member shows it, what is left to move, and what breaks the
priorities: a converted group whose assignor is not ``failover``, or a member whose priority the ranking
party cannot see.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from kafka_placement.broker_plugin.build import ASSIGNOR_CLASS, ASSIGNOR_NAME
from kafka_placement.groups.description import DescribedGroup
from kafka_placement.groups.failover_check import FAILOVER_ASSIGNORS, is_failover_group

Stage = Literal["classic", "mid-migration", "consumer", "n/a"]


@dataclass(frozen=True)
class MigrationStatus:
    """``ranked_by``: who assigns now; ``convertible``: (classic) would Kafka convert on a consumer-protocol
    join; ``left_to_move``: member ids still speaking classic; ``not_ready``: member id → why the party
    that ranks (or would rank, after a conversion) cannot see its priority; ``problems``: what keeps the
    priorities from being honoured now (the CLI exits 1)."""

    stage: Stage
    ranked_by: str
    convertible: bool | None = None
    left_to_move: tuple[str, ...] = ()
    not_ready: tuple[tuple[str, str], ...] = ()
    problems: tuple[str, ...] = ()
    advice: str = ""
    #: brokers lacking our failover server assignor (None: not read)
    brokers_without_failover: tuple[int, ...] | None = None

    @property
    def honoured(self) -> bool:
        return not self.problems

    def summary(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "ranked_by": self.ranked_by,
            "convertible": self.convertible,
            "left_to_move": list(self.left_to_move),
            "not_ready": dict(self.not_ready),
            "problems": list(self.problems),
            "honoured": self.honoured,
            "advice": self.advice,
            "brokers_without_failover": (
                None if self.brokers_without_failover is None else list(self.brokers_without_failover)
            ),
        }


def migration_status(
    group: DescribedGroup,
    *,
    failover: bool | None = None,
    offered: Mapping[int, tuple[str, ...]] | None = None,
) -> MigrationStatus:
    """The status of ``group``; ``failover`` as in
    :func:`~kafka_placement.groups.failover_check.check_failover`; ``offered``: each broker's
    ``group.consumer.assignors`` (None: not read)."""
    judged = failover if failover is not None else is_failover_group(group)
    if not judged or group.protocol not in ("classic", "consumer"):
        return MigrationStatus("n/a", group.assignor or "unknown")
    status = _classic(group) if group.protocol == "classic" else _consumer(group)
    if offered is None:
        return status
    lacking = tuple(sorted(b for b, assignors in offered.items() if not offers_failover(assignors)))
    if lacking and group.protocol == "classic":
        status = replace(
            status,
            advice=(
                f"stay classic: broker(s) {list(lacking)} do not offer the failover server assignor "
                f"(group.consumer.assignors={','.join(offered[lacking[0]])}), "
                "so a consumer-protocol failover member would be refused; "
                "install the kafka-placement broker plugin first (kafka-placement broker-plugin) — "
                + status.advice
            ),
        )
    return replace(status, brokers_without_failover=lacking)


def _classic(group: DescribedGroup) -> MigrationStatus:
    convertible = not any(m.assignment_user_data in ("failover", "other") for m in group.members)
    not_ready = tuple((m.member_id, m.migration_problem) for m in group.members if m.migration_problem)
    members = tuple(m.member_id for m in group.members)
    if convertible and not_ready:
        # an empty assignment userData while a member's priority is invisible to the broker: a failover
        # leader that is not ours (or an old version) leads; a conversion would rank those members last
        return MigrationStatus(
            "classic",
            f"the classic group leader ({group.assignor})",
            True,
            members,
            not_ready,
            (
                "the group is convertible but the broker could not see the priority of "
                f"{len(not_ready)} member(s) after a conversion: its leader did not protect it",
            ),
            "roll every member onto FailoverAssignor(..., migration_ready=True) of kafka-placement",
        )
    if convertible:
        advice = (
            "ready: every member's priority is visible to the broker; replace members one at a time "
            "by consumer-protocol members with group.remote.assignor=failover (docs/migration.md)"
        )
    elif not_ready:
        advice = (
            "protected against conversion; to move it, roll these members onto "
            "FailoverAssignor(..., migration_ready=True) first: " + ", ".join(mid for mid, _ in not_ready)
        )
    else:
        advice = "protected against conversion (a member still on the old setting leads or joined)"
    return MigrationStatus(
        "classic", f"the classic group leader ({group.assignor})", convertible, members, not_ready, (), advice
    )


def _consumer(group: DescribedGroup) -> MigrationStatus:
    if not group.members:
        # Kafka names the assignor its members prefer, or else its default (ConsumerGroup.asDescribedGroup:
        # preferredServerAssignor(...).orElse(defaultAssignor)): "uniform" for an empty group says nothing
        return MigrationStatus(
            "consumer",
            "nobody (the group has no member)",
            None,
            (),
            (),
            ("the group has no member: whether the broker ranks its members by failover cannot be read",),
            "start the consumer-protocol failover members",
        )
    assignor = group.assignor or "unknown"
    ranked_by = f"the broker's {assignor} assignor"
    classic = tuple(m.member_id for m in group.members if m.member_protocol == "classic")
    not_ready = tuple(
        (m.member_id, "no usable priority in its rack id: the broker ranks it last")
        for m in group.members
        if m.priority is None and m.priority_source in ("client.rack", "none")
    )
    problems = []
    if assignor not in FAILOVER_ASSIGNORS:
        problems.append(
            f"the group is assigned by the broker's {assignor!r} assignor, not failover: a "
            "member named none (or another) in group.remote.assignor, or the brokers lack the "
            "plugin"
        )
    stage: Stage = "mid-migration" if classic else "consumer"
    advice = (
        f"{len(classic)} classic member(s) left to move"
        if classic
        else "every member speaks the consumer protocol"
    )
    return MigrationStatus(stage, ranked_by, None, classic, not_ready, tuple(problems), advice)


def offers_failover(assignors: Iterable[str]) -> bool:
    """Does a broker's ``group.consumer.assignors`` hold our failover assignor (by class or by name)?"""
    return any(entry.strip() in (ASSIGNOR_CLASS, ASSIGNOR_NAME) for entry in assignors)


def join_problem(
    group_id: str,
    remote_assignor: object,
    offered: Mapping[int, tuple[str, ...]] | None,
    group: DescribedGroup | None,
) -> str | None:
    """Why a ``group.protocol=consumer`` member with ``group.remote.assignor=remote_assignor`` must not join
    ``group_id`` now, in one line saying what to change; None when it may. ``offered``: each broker's
    ``group.consumer.assignors`` (None: unknown); ``group``: the group as described (None: no such group)."""
    names_failover = isinstance(remote_assignor, str) and remote_assignor.strip() == ASSIGNOR_NAME
    if names_failover and offered:
        lacking = sorted(b for b, assignors in offered.items() if not offers_failover(assignors))
        if lacking:
            return (
                f"group.remote.assignor=failover, but broker(s) {lacking} offer only "
                f"{','.join(offered[lacking[0]]) or 'their defaults'} (group.consumer.assignors): "
                "install the kafka-placement broker plugin on every broker (kafka-placement "
                "broker-plugin), or keep this member on the classic protocol with FailoverAssignor; "
                f"group {group_id!r} keeps its priorities meanwhile"
            )
    if group is None or group.protocol != "classic" or migration_status(group).stage == "n/a":
        return None
    if not names_failover:
        return (
            f"group {group_id!r} is a failover group on the classic protocol: a consumer-protocol member "
            "must set group.remote.assignor=failover and carry its priority in client.rack "
            "(kafka_placement.clients.consumer_protocol.confluent_failover_config); with the broker's "
            "default assignor Kafka would convert the group and spread its partitions over every member"
        )
    status = migration_status(group)
    roll = (
        ", ".join(
            next((m.client_id for m in group.members if m.member_id == mid), mid)
            for mid, _ in status.not_ready
        )
        or "its members"
    )
    if not status.convertible:
        return (
            f"group {group_id!r} is protected against conversion to the consumer protocol (KAFKA-18134): "
            f"roll {roll} onto FailoverAssignor(..., migration_ready=True) first (docs/migration.md); "
            "joining now would fail with 'The group id does not exist'"
        )
    if status.not_ready:
        return (
            f"group {group_id!r} would convert, but the broker could not see the priority of {roll} (a "
            "failover leader that is not kafka-placement's leads): roll them onto kafka-placement's "
            "FailoverAssignor(..., migration_ready=True) first (docs/migration.md)"
        )
    return None
