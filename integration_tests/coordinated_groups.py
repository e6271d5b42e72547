"""Group ids coordinated by a chosen broker, for live tests that silence one coordinator."""

from __future__ import annotations

import uuid
from typing import Any

from kafka_placement.soak.health import coordinator_partition


def coordinated_by(prefix: str, broker: int, leaders: dict[int, int], partitions: int) -> str:
    """A fresh group id coordinated by ``broker`` (the leader of its ``__consumer_offsets`` partition)."""
    for _ in range(10_000):
        group = f"{prefix}-{uuid.uuid4().hex[:8]}"
        if leaders.get(coordinator_partition(group, partitions)) == broker:
            return group
    raise AssertionError(f"no group id coordinated by broker {broker} among 10,000: leaders {leaders}")


def offsets_leaders(admin: Any) -> dict[int, int]:
    """``__consumer_offsets`` partition → its leader; empty until the topic exists with every partition led
    (a FindCoordinator creates it: the first answers are COORDINATOR_NOT_AVAILABLE)."""
    from kafka.errors import KafkaError

    try:
        admin.describe_groups(["fencing-guard-warm"])
        described = admin.describe_topics(["__consumer_offsets"])[0].get("partitions") or []
    except KafkaError:
        return {}
    leaders = {p["partition_index"]: p["leader_id"] for p in described}
    return leaders if leaders and min(leaders.values()) >= 0 else {}
