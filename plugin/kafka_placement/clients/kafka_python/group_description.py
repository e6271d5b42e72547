"""kafka-python adapter for ``group describe``: a group's type (ListGroups) and a classic group's members
(DescribeGroups), as :class:`~kafka_placement.groups.description.DescribedGroup`. No judgement here.

kafka-python's ``describe_groups`` decodes member metadata itself and returns userData as text (lossy
for arbitrary bytes), and gives up on nothing but ``struct.error``; :class:`RawGroupsAdmin` keeps the
response's raw bytes instead, which :func:`classic_member` decodes with kafka-python's own
``ConsumerProtocolSubscription``/``ConsumerProtocolAssignment`` and our userData codecs, catching
anything a hostile member's bytes raise.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kafka import KafkaAdminClient
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

from kafka_placement.assignment.failover_migration import visibility
from kafka_placement.assignment.rack_priority import decode_rack_priority
from kafka_placement.assignment.strategy_names import StrategyName, strategy_name
from kafka_placement.assignment.userdata import (
    MAX_USER_DATA_BYTES,
    decode_failover_assignment,
    decode_priority,
)
from kafka_placement.clients.kafka_python.group_reads import (
    ask_group_coordinator,
    list_groups,
    listed_by_coordinator,
)
from kafka_placement.errors import KafkaPlacementError, UnknownStrategyError, UserDataError
from kafka_placement.groups.description import AssignmentUserData, DescribedGroup, DescribedMember, Protocol
from kafka_placement.vocabulary import TopicPartition

_FAILOVER: tuple[StrategyName, ...] = ("failover", "priority")
_TYPES: dict[str, Protocol] = {
    "classic": "classic",
    "consumer": "consumer",
    "share": "share",
    "streams": "streams",
}


class GroupNotFoundError(KafkaPlacementError, LookupError):
    """No group of that id is known to the cluster."""


class RawGroupsAdmin(KafkaAdminClient):  # type: ignore[misc]
    """``KafkaAdminClient`` whose ``describe_groups`` returns the DescribeGroupsResponse groups as
    received (member metadata and assignment as bytes), keyed by group id."""

    def _describe_groups_process_response(self, response: Any) -> dict[str, Any]:
        return {group.group_id: group for group in response.groups}

    def send_to_group_coordinator(self, group_id: str, request: Any) -> Any:
        """``request`` to ``group_id``'s coordinator (FindCoordinator first), as kafka-python's own
        ``describe_groups`` does; the version is the highest both kafka-python's class and the broker
        support. Returns the decoded response."""

        async def send() -> Any:
            coordinator = await self._find_coordinator_id(group_id)
            return await self._manager.send(request, node_id=coordinator)

        def group_error(response: Any) -> int:
            return next((int(g.error_code) for g in response.groups if g.group_id == group_id), 0)

        # a coordinator moving or loading is asked again (kafka-python alone would keep asking the old one)
        return ask_group_coordinator(self, group_id, lambda: self._manager.run(send), group_error)

    def describe_raw_group(self, group_id: str) -> Any:
        """DescribeGroups of one group, as received; asked again while its coordinator moves or loads."""

        def ask() -> Any:
            return self.describe_groups([group_id])[group_id]

        return ask_group_coordinator(self, group_id, ask, lambda raw: int(raw.error_code))


def group_type(admin: Any, group_id: str) -> tuple[Protocol, str] | None:
    """(group type, state) from ListGroups on every broker, or, when that sweep misses the group (its
    coordinator moved while the brokers were asked), from its own coordinator; None when neither
    lists it."""
    listed = next((g for g in list_groups(admin) if g.get("group_id") == group_id), None)
    if listed is None:
        listed = listed_by_coordinator(admin, group_id)
    if listed is None:
        return None
    kind = str(listed.get("group_type") or "").lower()
    return _TYPES.get(kind, "unknown"), str(listed.get("group_state") or "")


def _partitions(assignment: Any) -> tuple[TopicPartition, ...]:
    out: list[TopicPartition] = []
    for topic, partitions in assignment.assigned_partitions or ():
        if isinstance(topic, str):
            out.extend(TopicPartition(topic, p) for p in partitions or () if isinstance(p, int))
    return tuple(sorted(set(out)))


def _failover_strategy(protocol_name: str | None) -> bool:
    try:
        return strategy_name(protocol_name) in _FAILOVER
    except UnknownStrategyError:
        return False


def classic_member(raw: Any, protocol_type: str, protocol_name: str | None) -> DescribedMember:
    """One DescribeGroups member; never raises for what the member sent (``problems`` says)."""
    problems: list[str] = []
    topics: tuple[str, ...] | None = None
    rack = None
    priority = None
    source: Any = "none"
    migration_problem: str | None = None
    failover = _failover_strategy(protocol_name)
    metadata = bytes(raw.member_metadata or b"")
    if protocol_type != "consumer":
        problems.append(f"protocol type {protocol_type!r} is not a consumer group's: metadata not read")
    elif len(metadata) > MAX_USER_DATA_BYTES:
        problems.append(
            f"subscription of {len(metadata)} bytes is larger than {MAX_USER_DATA_BYTES}: not read"
        )
    elif metadata:
        try:
            subscription = ConsumerProtocolSubscription.decode(metadata)
            topics = tuple(sorted({t for t in subscription.topics or () if isinstance(t, str)}))
            rack_id = getattr(subscription, "rack_id", None)
            rack = rack_id if isinstance(rack_id, str) and rack_id else None
            if failover:
                source = "userData"
                priority = decode_priority(subscription.user_data)
                # what the broker would rank it by after a conversion (docs/migration.md)
                migration_problem = visibility(rack_id, priority).problem
                rack = decode_rack_priority(rack).rack
        except UserDataError as exc:
            problems.append(f"unusable failover priority ({exc}); the failover assignor ranks it last")
        except Exception as exc:  # a hostile member's bytes: whatever kafka-python's decoder raises
            problems.append(f"subscription not decodable ({type(exc).__name__})")
    assignment: tuple[TopicPartition, ...] = ()
    kind: AssignmentUserData = "n/a"
    data = bytes(raw.member_assignment or b"")
    if protocol_type == "consumer" and data and len(data) <= MAX_USER_DATA_BYTES:
        try:
            decoded = ConsumerProtocolAssignment.decode(data)
            assignment = _partitions(decoded)
            user_data = decoded.user_data
            kind = "empty" if not user_data else "other"
            if user_data and failover:
                decode_failover_assignment(user_data)
                kind = "failover"
        except UserDataError as exc:
            problems.append(f"assignment userData is not a failover leader's ({exc})")
        except Exception as exc:
            problems.append(f"assignment not decodable ({type(exc).__name__})")
    elif protocol_type == "consumer":
        kind = "empty"
    return DescribedMember(
        member_id=str(raw.member_id),
        client_id=str(raw.client_id or ""),
        host=str(raw.client_host or ""),
        instance_id=getattr(raw, "group_instance_id", None),
        rack=rack,
        priority=priority,
        priority_source=source,
        topics=topics,
        assignment=assignment,
        assignment_user_data=kind,
        problems=tuple(problems),
        member_protocol="classic",
        migration_problem=migration_problem,
    )


def partition_counts(admin: Any, topics: Iterable[str]) -> dict[str, int]:
    """Partition counts of the topics that exist (others are left out: unknown)."""
    names = sorted(set(topics))
    if not names:
        return {}
    counts = {}
    for topic in admin.describe_topics(names):
        if not topic.get("error_code") and topic.get("partitions"):
            counts[str(topic["name"])] = len(topic["partitions"])
    return counts


def describe_classic_group(admin: RawGroupsAdmin, group_id: str, state: str = "") -> DescribedGroup:
    """A classic group through DescribeGroups (``admin`` must be a :class:`RawGroupsAdmin`)."""
    raw = admin.describe_raw_group(group_id)
    if raw.error_code:
        raise GroupNotFoundError(f"group {group_id!r}: DescribeGroups answered error code {raw.error_code}")
    protocol_type = str(raw.protocol_type or "")
    protocol_name = str(raw.protocol_data or "") or None
    members = tuple(classic_member(m, protocol_type, protocol_name) for m in raw.members)
    notes = () if protocol_type in ("consumer", "") else (f"protocol type {protocol_type!r}",)
    group = DescribedGroup(
        group_id, "classic", str(raw.group_state or state), protocol_name, members, notes=notes
    )
    counts = partition_counts(admin, group.topics())
    return DescribedGroup(group.group_id, group.protocol, group.state, group.assignor, members, counts, notes)
