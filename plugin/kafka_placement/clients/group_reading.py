"""Reading a consumer group from a live cluster, whichever protocol it runs: the one place the CLI and the
soak ask for a group's description and for the brokers' server-side assignors.

Classic groups through kafka-python's DescribeGroups; consumer-protocol groups through ConsumerGroupDescribe
(kafka-python with Kafka's own schema from the kafka-clients jar, else confluent-kafka, which shows no
racks); share groups recognised, their members not read.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kafka_placement.clients.connection import ConnectionSettings, translate_error
from kafka_placement.errors import KafkaPlacementError, MessageSchemaUnavailableError
from kafka_placement.groups.description import DescribedGroup

__all__ = ["read_group", "read_server_assignors"]


def read_group(settings: ConnectionSettings, group_id: str) -> DescribedGroup:
    """The group as the cluster describes it (client imports happen here, not at CLI start)."""
    from kafka_placement.clients.kafka_python.group_description import (
        GroupNotFoundError,
        RawGroupsAdmin,
        describe_classic_group,
        group_type,
    )

    try:
        admin = RawGroupsAdmin(client_id="kafka-placement-group", **settings.kafka_python())
        try:
            found = group_type(admin, group_id)
            if found is None:
                raise GroupNotFoundError(
                    f"group {group_id!r} does not exist on {settings.bootstrap_servers} "
                    "(neither ListGroups on every broker nor its coordinator lists it)"
                )
            kind, state = found
            if kind == "classic":
                return describe_classic_group(admin, group_id, state)
            why_not = ""
            if kind == "consumer":
                group, why_not = _consumer_group(admin, group_id)
                if group is not None:
                    return group
        finally:
            admin.close()
        if kind == "consumer":
            return _consumer_group_without_racks(settings, group_id, why_not)
        # confluent-kafka 2.16 has no describe_share_groups, kafka-python no ShareGroupDescribe
        return DescribedGroup(group_id, kind, state, None, notes=(f"a {kind} group: members not read",))
    except KafkaPlacementError:
        raise
    except Exception as exc:
        raise translate_error(exc, settings, f"describe group {group_id!r}") from None


def _consumer_group(admin: Any, group_id: str) -> tuple[DescribedGroup | None, str]:
    """ConsumerGroupDescribe through kafka-python with Kafka's schema from the kafka-clients jar; (None,
    why) when that schema cannot be had."""
    from kafka_placement.clients.kafka_python.consumer_group_describe import consumer_group, message_classes
    from kafka_placement.clients.kafka_python.group_description import partition_counts

    try:
        request_class, _ = message_classes()
    except MessageSchemaUnavailableError as exc:
        return None, str(exc)
    request = request_class(group_ids=[group_id], include_authorized_operations=False)
    group = consumer_group(admin.send_to_group_coordinator(group_id, request), group_id)
    return replace(group, partitions_per_topic=partition_counts(admin, group.topics())), ""


def _consumer_group_without_racks(
    settings: ConnectionSettings, group_id: str, why_not: str
) -> DescribedGroup:
    """confluent-kafka's ConsumerGroupDescribe (no racks, no subscriptions), saying why in one note."""
    from confluent_kafka.admin import AdminClient

    from kafka_placement.clients.confluent.group_description import (
        describe_consumer_group,
        topic_partition_counts,
    )

    confluent_admin = AdminClient(settings.confluent())
    group = describe_consumer_group(confluent_admin, group_id, timeout_s=settings.timeout_s)
    counts = topic_partition_counts(confluent_admin, group.topics(), timeout_s=settings.timeout_s)
    notes = (
        f"Kafka's ConsumerGroupDescribe schema is unavailable ({why_not}), so members' racks and "
        "priorities could not be read",
        *group.notes,
    )
    return replace(group, partitions_per_topic=counts, notes=notes)


def read_server_assignors(settings: ConnectionSettings) -> dict[int, tuple[str, ...]] | None:
    """Every broker's ``group.consumer.assignors`` (does the cluster offer our failover assignor?); None
    when they cannot be read (e.g. no DescribeConfigs permission on a managed cluster)."""
    from confluent_kafka.admin import AdminClient

    from kafka_placement.clients.confluent.join_preflight import server_assignors

    try:
        return server_assignors(AdminClient(settings.confluent()), settings.timeout_s)
    except Exception:
        return None
