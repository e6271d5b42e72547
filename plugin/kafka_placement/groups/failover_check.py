"""Is a failover group's work on its highest-priority live member? A pure judgement over a described group.

The rule is the failover assignor's (:func:`kafka_placement.assignment.failover.failover_rank`): per
topic, the subscriber with the highest priority should own every partition, ties to the smallest member
id in Java string order, a member without a priority ranks last. A member's subscription unknown to the
describe API (a regex subscriber; or ConsumerGroupDescribe through confluent-kafka, our fallback when
Kafka's message schema cannot be had, which gives none) counts as subscribed to every topic of the
group. When some subscriber's priority is not visible (that fallback shows no ``client.rack``), the best
member cannot be named; the check then still fails a topic whose partitions are spread over several
members, which no failover assignment does.

Share groups: failover does not apply (records are shared under per-record locks; see docs/groups.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafka_placement.assignment.failover import failover_rank
from kafka_placement.groups.description import DescribedGroup, DescribedMember
from kafka_placement.vocabulary import Member

#: Assignor names of a failover group: ours on the classic protocol (the protocol name) and the name
#: our broker-side assignor is configured under on the consumer protocol.
FAILOVER_ASSIGNORS = frozenset({"failover", "priority"})

SHARE_GROUPS_DO_NOT_FAIL_OVER = (
    "failover does not apply to a share group: its members consume the same partitions together, each "
    "record under its own acquisition lock, and one assignor (group.share.assignors) serves every share "
    "group of the broker; nothing gives one member exclusive ownership"
)


@dataclass(frozen=True)
class TopicCheck:
    """One topic: who should own it, who does; ``ok`` is None when that cannot be told."""

    topic: str
    should_own: str | None
    owners: tuple[str, ...]
    unassigned: int | None
    ok: bool | None
    reason: str

    def summary(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "should_own": self.should_own,
            "owners": list(self.owners),
            "unassigned_partitions": self.unassigned,
            "ok": self.ok,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class FailoverCheck:
    """The verdict on a group. ``ok`` False means: a failover group whose partitions are not (all)
    on its highest-priority live member (the CLI exits 1)."""

    applies: bool
    reason: str
    topics: tuple[TopicCheck, ...] = ()
    should_be_active: tuple[str, ...] = ()
    active: tuple[str, ...] = ()
    #: classic groups: would Kafka convert the group when a consumer-protocol member joins?
    convertible: bool | None = None

    @property
    def ok(self) -> bool:
        return not self.applies or all(t.ok is not False for t in self.topics)

    def summary(self) -> dict[str, Any]:
        return {
            "applies": self.applies,
            "ok": self.ok,
            "reason": self.reason,
            "should_be_active": list(self.should_be_active),
            "active": list(self.active),
            "convertible_to_consumer_protocol": self.convertible,
            "topics": [t.summary() for t in self.topics],
        }


def is_failover_group(group: DescribedGroup) -> bool:
    """By its assignor's name, or (consumer protocol) by members carrying a priority in ``client.rack``."""
    if group.assignor in FAILOVER_ASSIGNORS:
        return True
    return any(m.priority_source == "client.rack" and m.priority is not None for m in group.members)


def _convertible(group: DescribedGroup) -> bool | None:
    """Kafka converts a classic group on a consumer-protocol join unless a member's assignment userData
    is non-empty (KAFKA-18134); only classic groups of the consumer protocol type can be converted."""
    if group.protocol != "classic":
        return None
    return not any(m.assignment_user_data in ("failover", "other") for m in group.members)


def _subscribed(member: DescribedMember, topic: str) -> bool:
    return member.topics is None or topic in member.topics


def _check_topic(group: DescribedGroup, topic: str) -> TopicCheck:
    holders: dict[str, set[int]] = {}
    for m in group.members:
        held = {tp.partition for tp in m.assignment if tp.topic == topic}
        if held:
            holders[m.member_id] = held
    owners = tuple(sorted(holders))
    count = group.partitions_per_topic.get(topic)
    held_any = set().union(*holders.values()) if holders else set()
    unassigned = None if count is None else len(set(range(count)) - held_any)
    subscribers = [m for m in group.members if _subscribed(m, topic)]
    if not subscribers:
        return TopicCheck(topic, None, owners, unassigned, None, "no live member subscribes to it")
    if any(m.priority_source == "not visible" for m in subscribers):
        if len(owners) > 1:
            return TopicCheck(
                topic,
                None,
                owners,
                unassigned,
                False,
                f"its partitions are spread over {len(owners)} members; failover keeps a "
                "topic on one member (which one has the highest priority is not visible)",
            )
        return TopicCheck(
            topic,
            None,
            owners,
            unassigned,
            None,
            "priorities not visible: cannot tell whether its owner is the best member",
        )
    best = min(subscribers, key=lambda m: failover_rank(m.member_id, Member([topic], priority=m.priority)))
    if count is None and not owners:
        return TopicCheck(
            topic,
            best.member_id,
            owners,
            unassigned,
            None,
            "nobody owns it and its partition count is unknown (does the topic exist?)",
        )
    problems = []
    others = [o for o in owners if o != best.member_id]
    if others:
        problems.append(f"{len(others)} member(s) other than the highest-priority one hold partitions")
    if best.member_id not in holders:
        problems.append("the highest-priority member holds none of its partitions")
    if unassigned:
        problems.append(f"{unassigned} partition(s) are assigned to no member")
    if problems:
        return TopicCheck(topic, best.member_id, owners, unassigned, False, "; ".join(problems))
    reason = "on its highest-priority member"
    if count is None:
        reason += " (partition count unknown: not checked that it holds every partition)"
    return TopicCheck(topic, best.member_id, owners, unassigned, True, reason)


def check_failover(group: DescribedGroup, *, failover: bool | None = None) -> FailoverCheck:
    """The verdict. ``failover``: True judges the group as a failover group whatever its assignor,
    False never does, None decides by :func:`is_failover_group`."""
    convertible = _convertible(group)
    if group.protocol == "share":
        return FailoverCheck(False, SHARE_GROUPS_DO_NOT_FAIL_OVER)
    if failover is False or (failover is None and not is_failover_group(group)):
        return FailoverCheck(
            False, f"not a failover group (assignor {group.assignor or 'unknown'})", convertible=convertible
        )
    if not group.members:
        return FailoverCheck(True, "no live member", convertible=convertible)
    topics = tuple(_check_topic(group, topic) for topic in group.topics())
    should = tuple(sorted({t.should_own for t in topics if t.should_own is not None}))
    active = tuple(sorted({m.member_id for m in group.members if m.assignment}))
    failed = [t.topic for t in topics if t.ok is False]
    unknown = [t.topic for t in topics if t.ok is None]
    if failed:
        reason = f"partitions not on the highest-priority live member: topic(s) {', '.join(failed)}"
    elif unknown:
        reason = f"cannot be verified for topic(s) {', '.join(unknown)}"
    else:
        reason = "every topic is on its highest-priority live member"
    return FailoverCheck(True, reason, topics, should, active, convertible)
