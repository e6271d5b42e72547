"""kafka-python adapter for ``group describe`` of a consumer-protocol group (KIP-848): ConsumerGroupDescribe
(API key 69) as a :class:`~kafka_placement.groups.description.DescribedGroup`. No judgement here.

kafka-python 3.0.12 has no class for API key 69; :func:`message_classes` declares the request and the
response as kafka-python ``ApiMessage`` subclasses whose schemas are Kafka's own JSON, read from the
``kafka-clients`` jar (:mod:`.message_schemas`): kafka-python encodes and decodes, we write no protocol
code. The response carries what confluent-kafka's ``describe_consumer_groups`` leaves out: each member's
``RackId`` (where a consumer-protocol failover priority rides, ``"<rack>#priority=<n>"``) and
``SubscribedTopicNames``. A member's data is untrusted: :func:`consumer_member` never raises for it.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.api_message import ApiMessage

from kafka_placement.assignment.rack_priority import SEPARATOR, decode_rack_priority
from kafka_placement.clients.kafka_python.message_schemas import kafka_clients_jar, schema_package
from kafka_placement.clients.kafka_python.schema_loading import quiet_schema_loading
from kafka_placement.errors import GroupDescribeError
from kafka_placement.groups.description import DescribedGroup, DescribedMember, MemberProtocol, PrioritySource
from kafka_placement.versions import KAFKA_VERSION
from kafka_placement.vocabulary import TopicPartition

REQUEST = "ConsumerGroupDescribeRequest"
RESPONSE = "ConsumerGroupDescribeResponse"
#: ConsumerGroupDescribe errors that name the group (Kafka's codes): the group is not a consumer group
#: any more, or the coordinator moved while we asked.
GROUP_ID_NOT_FOUND = 69
#: At most this many topic-partitions are read per member and assignment (a broker sends what members
#: own; this only bounds what a broken response can make us allocate).
MAX_PARTITIONS_PER_MEMBER = 1_000_000
_classes: dict[str, tuple[type[ApiMessage], type[ApiMessage]]] = {}


def message_classes(version: str = KAFKA_VERSION) -> tuple[type[ApiMessage], type[ApiMessage]]:
    """(request class, response class) from ``kafka-clients-<version>.jar``'s schemas (built once).

    Raises :class:`~kafka_placement.errors.MessageSchemaUnavailableError` when no jar can be had."""
    if version not in _classes:
        package = schema_package(kafka_clients_jar(version, need=(REQUEST, RESPONSE)))
        # kafka-python names the schema file after the class: the names must be the JSON's
        with quiet_schema_loading():  # kafka-python's loader warns per schema read (not the user's business)
            request = type(REQUEST, (ApiMessage,), {"__module__": __name__}, load_json=package)
            response = type(RESPONSE, (ApiMessage,), {"__module__": __name__}, load_json=package)
        _classes[version] = (request, response)
    return _classes[version]


def _partitions(assignment: Any, problems: list[str], what: str) -> tuple[TopicPartition, ...]:
    out: set[TopicPartition] = set()
    for topic in getattr(assignment, "topic_partitions", None) or ():
        name = getattr(topic, "topic_name", None)
        parts = getattr(topic, "partitions", None) or ()
        if not isinstance(name, str) or not name:
            problems.append(
                f"{what}: {len(parts)} partition(s) of a topic without a name (deleted?) left out"
            )
            continue
        for p in parts:
            if isinstance(p, int) and p >= 0 and len(out) < MAX_PARTITIONS_PER_MEMBER:
                out.add(TopicPartition(name, p))
    return tuple(sorted(out))


#: ConsumerGroupDescribe v1's MemberType (KIP-1099): 0 classic, 1 consumer; -1 (v0) unknown.
_MEMBER_TYPES: dict[int, MemberProtocol] = {0: "classic", 1: "consumer"}


def consumer_member(raw: Any) -> DescribedMember:
    """One ConsumerGroupDescribe member; never raises for what the member sent (``problems`` says)."""
    problems: list[str] = []
    rack_id = raw.rack_id if isinstance(raw.rack_id, str) else None
    parsed = decode_rack_priority(rack_id)
    source: PrioritySource = "none"
    if rack_id is not None and SEPARATOR in rack_id:
        source = "client.rack"
    if parsed.problem is not None:
        source = "client.rack"
        problems.append(
            f"unusable priority in client.rack ({parsed.problem}); the failover assignor ranks it last"
        )
    if getattr(raw, "member_type", -1) == 0 and source == "none":
        problems.append(
            "a classic-protocol member: the broker assigns it, and any priority in its "
            "subscription userData is not read on this protocol"
        )
    names = [t for t in raw.subscribed_topic_names or () if isinstance(t, str)]
    regex = raw.subscribed_topic_regex if isinstance(raw.subscribed_topic_regex, str) else None
    # a regex subscriber's topics are the regex's matches, which the member entry does not list:
    # unknown (the check then counts it as subscribed to every topic of the group)
    topics = None if regex and not names else tuple(sorted(set(names)))
    target = _partitions(raw.target_assignment, problems, "target assignment")
    return DescribedMember(
        member_id=str(raw.member_id),
        client_id=str(raw.client_id or ""),
        host=str(raw.client_host or ""),
        instance_id=raw.instance_id if isinstance(raw.instance_id, str) else None,
        rack=parsed.rack,
        priority=parsed.priority,
        priority_source=source,
        topics=topics,
        assignment=_partitions(raw.assignment, problems, "assignment"),
        target_assignment=target,
        problems=tuple(problems),
        member_protocol=_MEMBER_TYPES.get(getattr(raw, "member_type", -1)),
    )


def consumer_group(response: Any, group_id: str) -> DescribedGroup:
    """The group ``group_id`` from a ConsumerGroupDescribe response (kafka-python object)."""
    from kafka_placement.clients.kafka_python.group_description import GroupNotFoundError

    found = [g for g in response.groups if g.group_id == group_id]
    if not found:
        raise GroupDescribeError(f"ConsumerGroupDescribe answered no entry for group {group_id!r}")
    group = found[0]
    if group.error_code:
        from kafka.errors import for_code

        error = for_code(group.error_code)
        text = f"{error.__name__} (code {group.error_code})"
        if group.error_message:
            text += f": {str(group.error_message)[:300]}"
        if group.error_code == GROUP_ID_NOT_FOUND:
            raise GroupNotFoundError(f"group {group_id!r}: ConsumerGroupDescribe answered {text}")
        raise GroupDescribeError(f"group {group_id!r}: ConsumerGroupDescribe answered {text}")
    members = tuple(consumer_member(m) for m in group.members)
    return DescribedGroup(
        group_id, "consumer", str(group.group_state or ""), str(group.assignor_name or "") or None, members
    )
