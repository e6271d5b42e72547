"""Before a ``group.protocol=consumer`` member joins: would joining harm or fail a failover group?

Kafka decides alone, member by member, whether a consumer-protocol member converts a classic group: a
member without ``group.remote.assignor=failover`` converts a migration-ready failover group to the
broker's default assignor (which spreads its partitions), and one that joins a protected group gets
librdkafka's fatal "The group id does not exist". :func:`consumer_protocol_preflight` reads what decides
it — every broker's ``group.consumer.assignors`` and the group as described — and raises one
:class:`~kafka_placement.errors.ConsumerConfigError` line saying what to change
(:func:`kafka_placement.groups.migration.join_problem`) before the member says anything to the group.
Reads that fail (no permission to describe configs, a coordinator moving) are logged and skipped: the
check never keeps a member out for its own failure.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from kafka_placement.errors import ConsumerConfigError
from kafka_placement.groups.description import DescribedGroup
from kafka_placement.groups.migration import join_problem

log = logging.getLogger(__name__)

#: How long each read of the check may take (a member should not wait long on a check).
PREFLIGHT_TIMEOUT_S = 10.0


def server_assignors(admin: Any, timeout_s: float = PREFLIGHT_TIMEOUT_S) -> dict[int, tuple[str, ...]]:
    """Every broker's ``group.consumer.assignors`` through a confluent-kafka ``AdminClient`` (one
    DescribeConfigs per broker: librdkafka refuses more than one BROKER resource in a call)."""
    from confluent_kafka.admin import ConfigResource, ResourceType  # type: ignore[attr-defined]

    brokers = sorted(admin.list_topics(timeout=timeout_s).brokers)
    futures = {
        broker: admin.describe_configs(
            [ConfigResource(ResourceType.BROKER, str(broker))], request_timeout=timeout_s
        )
        for broker in brokers
    }
    out: dict[int, tuple[str, ...]] = {}
    for broker, answer in futures.items():
        entries = next(iter(answer.values())).result(timeout_s)
        entry = entries.get("group.consumer.assignors")
        value = str(entry.value or "") if entry is not None else ""
        out[broker] = tuple(part.strip() for part in value.split(",") if part.strip())
    return out


def described_group(config: Mapping[str, Any], group_id: str) -> DescribedGroup | None:
    """The group as ``group describe`` reads a classic one (its members' subscriptions and assignment
    userData decide whether Kafka would convert it); None when no broker lists it; a consumer-protocol
    group only by its type (joining one never converts anything)."""
    from kafka_placement.clients.confluent.consumer_config import kafka_python_connection
    from kafka_placement.clients.kafka_python.group_description import (
        RawGroupsAdmin,
        describe_classic_group,
        group_type,
    )

    connection = {
        **kafka_python_connection(config),
        "client_id": "kafka-placement-preflight",
        "request_timeout_ms": int(PREFLIGHT_TIMEOUT_S * 1000),
    }
    admin = RawGroupsAdmin(**connection)
    try:
        found = group_type(admin, group_id)
        if found is None:
            return None
        kind, state = found
        if kind == "classic":
            return describe_classic_group(admin, group_id, state)
        return DescribedGroup(group_id, kind, state, None)
    finally:
        admin.close()


def consumer_protocol_preflight(config: Mapping[str, Any], timeout_s: float = PREFLIGHT_TIMEOUT_S) -> None:
    """Raise :class:`ConsumerConfigError` when a consumer-protocol member with ``config`` must not join.
    Both reads together take at most ``timeout_s``; a cluster that does not answer in time is not judged
    (logged): librdkafka then reports its own connection errors as it would without the check."""
    group_id = str(config.get("group.id") or "")
    if not group_id:
        return  # librdkafka refuses a consumer without a group id by itself
    found: dict[str, Any] = {}

    def read() -> None:
        from confluent_kafka.admin import AdminClient

        connection = {
            k: v
            for k, v in config.items()
            if k.startswith(("bootstrap.", "security.", "sasl.", "ssl.")) or k == "client.id"
        }
        try:
            found["offered"] = server_assignors(AdminClient(connection, logger=log), timeout_s)
        except Exception as exc:  # e.g. no DESCRIBE_CONFIGS permission on a managed cluster
            found["offered_error"] = exc
        try:
            found["group"] = described_group(config, group_id)
        except Exception as exc:
            found["group_error"] = exc

    reader = threading.Thread(target=read, name="kafka-placement-preflight", daemon=True)
    reader.start()
    reader.join(timeout_s)
    for what, key in (
        ("the brokers' group.consumer.assignors", "offered_error"),
        (f"group {group_id!r}", "group_error"),
    ):
        if key in found:
            log.warning("consumer-protocol preflight: could not read %s (%s)", what, found[key])
    if reader.is_alive():
        log.warning(
            "consumer-protocol preflight: the cluster did not answer within %.0f s; joining "
            "group %r unchecked",
            timeout_s,
            group_id,
        )
    problem = join_problem(
        group_id, config.get("group.remote.assignor"), found.get("offered"), found.get("group")
    )
    if problem is not None:
        raise ConsumerConfigError(problem)
