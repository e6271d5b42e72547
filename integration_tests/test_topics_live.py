"""Creating topics right after the broker kafka-python's admin client sends CreateTopics to was restarted
— the case where kafka-python's own ``create_topics`` fails with ``UnknownBrokerIdError`` until its
metadata is refreshed (minutes): the test harness (``testing.topics.create_topic``, a fresh client) and
the library (``clients.kafka_python.admin.create_topic``, the same client told to forget its controller)
both create the topic."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

pytestmark = pytest.mark.integration


def test_a_topic_is_created_right_after_the_admins_controller_was_restarted(kafka_cluster: Any) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic
    from kafka.errors import UnknownBrokerIdError

    from kafka_placement.clients.kafka_python import admin as kp_admin
    from kafka_placement.testing.topics import create_topic

    def fresh_admin() -> Any:
        return KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap_servers, client_id="topics-live")

    admin = fresh_admin()
    names = [f"topics-live-{uuid.uuid4().hex[:8]}" for _ in range(4)]
    try:
        create_topic(admin, names[0], 3, 1, fresh_admin=fresh_admin)
        # kafka-python keeps the broker it sent CreateTopics to; nothing public names it
        target = admin._controller_id
        kafka_cluster.stop_broker(target)
        try:
            deadline = time.monotonic() + 30
            while admin._manager.cluster.broker_metadata(target) is not None:
                assert time.monotonic() < deadline, f"the admin's metadata still lists broker {target}"
                admin.describe_topics([names[0]])  # a metadata refresh: the stopped broker drops out
                time.sleep(0.2)
        finally:
            kafka_cluster.start_broker(target)

        # the situation this module exists for: the plain client cannot create a topic now
        with pytest.raises(UnknownBrokerIdError):
            admin.create_topics([NewTopic(names[1], 3, 1)])

        create_topic(admin, names[2], 6, 2, fresh_admin=fresh_admin)
        (described,) = admin.describe_topics([names[2]])
        partitions = described["partitions"]
        assert len(partitions) == 6
        assert all(p["leader_id"] >= 0 and len(p["replica_nodes"]) == 2 for p in partitions)

        # the harness used another client: this one is still stale, and the library copes with it
        with pytest.raises(UnknownBrokerIdError):
            admin.create_topics([NewTopic(names[1], 3, 1)])
        others = [b for b in kafka_cluster.broker_ids if b != target]
        placed = {0: [target, others[0]], 1: [others[0], target]}
        assert kp_admin.create_topic(admin, names[3], placed, require_rack_diversity=False) == placed
        (described,) = admin.describe_topics([names[3]])
        assert {p["partition_index"]: p["replica_nodes"] for p in described["partitions"]} == placed
    finally:
        cleanup = fresh_admin()
        try:
            existing = set(cleanup.list_topics())
            cleanup.delete_topics([n for n in names if n in existing])
        finally:
            cleanup.close()
            admin.close()
