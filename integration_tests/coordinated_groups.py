"""Group ids coordinated by a chosen broker, and a run through that coordinator's silence, for the live
tests of the guards that stop a member whose session may have ended."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kafka_placement.soak.health import coordinator_partition
from member_process import wait_until


def coordinated_by(prefix: str, broker: int, leaders: dict[int, int], partitions: int) -> str:
    """A fresh group id coordinated by ``broker`` (the leader of its ``__consumer_offsets`` partition)."""
    for _ in range(10_000):
        group = f"{prefix}-{uuid.uuid4().hex[:8]}"
        if leaders.get(coordinator_partition(group, partitions)) == broker:
            return group
    raise AssertionError(f"no group id coordinated by broker {broker} among 10,000: leaders {leaders}")


def settled_group(prefix: str, cluster: Any) -> str:
    """A fresh group id whose coordinator stays put for the test: its ``__consumer_offsets`` partition is
    led by its preferred replica (the first), so Kafka's automatic preferred-leader election
    (``auto.leader.rebalance.enable``) does not move it. A broker an earlier test restarted leaves
    partitions led elsewhere, and the election moves them back minutes later: once in the middle of the
    consumer-protocol failover test (CI, session 29), where the members then had to find the new
    coordinator within their session."""
    from kafka_placement.clients.kafka_python.admin import open_admin

    admin = open_admin(cluster.kafka_python_settings())
    try:
        wait_until(lambda: offsets_leaders(admin), 60, "__consumer_offsets, every partition led", step=0.5)
        described = admin.describe_topics(["__consumer_offsets"])[0]["partitions"]
    finally:
        admin.close()
    settled = {
        p["partition_index"]
        for p in described
        if p["replica_nodes"] and p["leader_id"] == p["replica_nodes"][0]
    }
    for _ in range(10_000):
        group = f"{prefix}-{uuid.uuid4().hex[:8]}"
        if coordinator_partition(group, len(described)) in settled:
            return group
    raise AssertionError(f"no __consumer_offsets partition led by its preferred replica: {described}")


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


@dataclass
class SilenceRun:
    """What two or more members did while their group coordinator (broker 0) swallowed every byte the
    clients sent it. ``consumed``: member → (monotonic time, partition, offset) of every record it got;
    ``produced``: (partition, offset) of every record acknowledged."""

    silent_from: float
    silent_until: float
    consumed: dict[str, list[tuple[float, int, int]]]
    produced: set[tuple[int, int]]

    def count_between(self, name: str, start: float, end: float) -> int:
        return sum(1 for at, _, _ in self.consumed[name] if start <= at < end)

    def recovered_s(self, name: str) -> float:
        return min(at for at, _, _ in self.consumed[name] if at >= self.silent_until) - self.silent_until


def run_through_silence(
    cluster: Any,
    produce_one: Callable[[set[tuple[int, int]]], None],
    polls: Mapping[str, Callable[[], list[tuple[int, int]]]],
    flush: Callable[[], None],
    *,
    silence_s: float,
    recovery_s: float,
) -> SilenceRun:
    """Produce one record per turn (``produce_one(produced)`` adds each acknowledged (partition, offset)
    to ``produced``) and poll each member (``polls``: name → one short poll's records) until every member
    consumes; then 3 s more; then ``silence_s`` with a ``timeout`` toxic on everything the clients send to
    broker 0; then until every member consumes again and every record produced is consumed by each."""
    from kafka_placement.testing.toxiproxy import timeout

    produced: set[tuple[int, int]] = set()
    consumed: dict[str, list[tuple[float, int, int]]] = {name: [] for name in polls}

    def turn() -> None:
        produce_one(produced)
        for name, poll in polls.items():
            got = poll()
            now = time.monotonic()
            consumed[name] += [(now, partition, offset) for partition, offset in got]

    def run_for(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            turn()

    def each_consumed_since(t: float) -> bool:
        turn()
        return all(any(at >= t for at, _, _ in got) for got in consumed.values())

    wait_until(lambda: each_consumed_since(0.0), 90, "every member consuming", step=0.0)
    run_for(3.0)
    with cluster.faults.toxic(timeout(0, stream="upstream"), brokers=[0]):
        silent_from = time.monotonic()
        run_for(silence_s)
        silent_until = time.monotonic()
    wait_until(
        lambda: each_consumed_since(silent_until), recovery_s, "every member consuming again", step=0.0
    )
    flush()

    def everything_consumed() -> bool:
        turn()
        return all(produced <= {(p, o) for _, p, o in got} for got in consumed.values())

    wait_until(everything_consumed, recovery_s, "every record produced consumed by every member", step=0.0)
    return SilenceRun(silent_from, silent_until, consumed, produced)


def groups_behind_broker_0(admin: Any, prefix: str, topic: str, partitions: int) -> dict[str, str]:
    """Two fresh group ids (``guarded``, ``plain``) coordinated by broker 0, and ``topic`` created with its
    partitions led by brokers 1 and 2 (broker 0 a follower): silencing broker 0 silences the groups'
    coordinator and nothing the members fetch from."""
    from kafka.admin import NewTopic

    wait_until(lambda: offsets_leaders(admin), 60, "__consumer_offsets, every partition led", step=0.5)
    leaders = offsets_leaders(admin)
    groups = {name: coordinated_by(prefix, 0, leaders, len(leaders)) for name in ("guarded", "plain")}
    admin.create_topics(
        [
            NewTopic(
                topic,
                replica_assignments={p: [1 + p % 2, 2 - p % 2, 0] for p in range(partitions)},
                topic_configs={"min.insync.replicas": "2"},
            )
        ]
    )

    def led_by_1_and_2() -> bool:
        described = admin.describe_topics([topic])[0].get("partitions") or []
        return len(described) == partitions and all(p["leader_id"] in (1, 2) for p in described)

    wait_until(led_by_1_and_2, 60, f"{topic}'s partitions led by brokers 1 and 2", step=0.5)
    return groups
