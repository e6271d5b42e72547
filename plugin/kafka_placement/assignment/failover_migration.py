"""Moving a failover group between Kafka's classic and consumer group protocols, member by member (sans-I/O).

Kafka converts a classic group to the consumer protocol when the first ``group.protocol=consumer``
member joins, unless a member's *assignment* userData is non-empty (KAFKA-18134). Our failover leader
fills that userData on purpose: after a conversion the broker assigns every member, classic ones
included, and ranks a classic member only by what it can see of it — the rack id of its classic
subscription (``ConsumerProtocolSubscription`` v3, KIP-881), which Kafka's
``ConsumerGroup#fromClassicGroup`` copies into the converted member. A priority that lives only in the
subscription's userData is invisible there, so the broker's failover assignor would rank the member last.

A *migration-ready* failover member therefore does two things (both here, as plain functions):

1. it advertises its priority where the broker reads it: its subscription's rack id is
   ``"<rack>#priority=<n>"`` (:mod:`~kafka_placement.assignment.rack_priority`), the same value a
   consumer-protocol member sets in ``client.rack``;
2. as the leader, it leaves the assignment userData empty — which lets Kafka convert the group — only
   when *every* member's priority is visible that way and equal to the one in its userData
   (:func:`group_convertible`). One member that is not ready (an older version of ours, another
   failover implementation, an aiokafka member whose v0 subscription has no rack) keeps the whole group
   protected, exactly as before: the conversion is refused and the joining member is told so.

So the broker's failover assignor sees, at the moment of conversion and after it, the same ranking the
classic leader used; the highest-priority live member keeps its partitions through the move.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from kafka_placement.assignment.rack_priority import decode_rack_priority, encode_rack_priority


class Visibility(NamedTuple):
    """What the broker would read of one classic member after a conversion, against what the leader read.

    ``visible``: the priority in the member's subscription rack id (None: none or unusable);
    ``problem``: why the member keeps the group from converting (None: it does not)."""

    visible: int | None
    problem: str | None


def advertised_rack(rack: str | None, priority: int | None, migration_ready: bool) -> str | None:
    """The rack id a failover member puts in its classic subscription: its plain ``rack`` unless it is
    migration-ready and has a priority, then ``"<rack>#priority=<n>"``."""
    if not migration_ready or priority is None:
        return rack
    return encode_rack_priority(rack, priority)


def visibility(rack_id: object, priority: int | None) -> Visibility:
    """Would the broker rank this member as the classic leader does? ``priority`` is what the leader read
    from the member's userData. A member with no priority at all ranks last on both sides (ready)."""
    seen = decode_rack_priority(rack_id if isinstance(rack_id, str) else None)
    if seen.priority == priority:
        return Visibility(seen.priority, None)
    if seen.priority is None:
        why = f" ({seen.problem})" if seen.problem else ""
        return Visibility(
            None,
            f"its subscription's rack id {rack_id!r} carries no priority{why}, so the "
            f"broker would rank it last instead of with priority {priority}",
        )
    return Visibility(
        seen.priority,
        f"its subscription's rack id says priority {seen.priority} but its userData says {priority}",
    )


def group_convertible(members: Iterable[tuple[str, object, int | None]]) -> dict[str, str]:
    """The members (``member_id → why``) that keep a group from being safely convertible; empty: every
    member's priority is visible to the broker as the leader reads it. ``members``: (member id, its
    subscription's rack id, the priority the leader read from its userData)."""
    blockers: dict[str, str] = {}
    for member_id, rack_id, priority in members:
        problem = visibility(rack_id, priority).problem
        if problem is not None:
            blockers[member_id] = problem
    return blockers
