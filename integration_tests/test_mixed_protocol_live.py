"""A classic failover group meets a consumer-protocol member (KIP-848), live on Kafka 4.4.

Two kafka-python members run our ``FailoverAssignor`` (priorities 10 and 5: 10 owns every
partition); then a plain confluent-kafka consumer with ``group.protocol=consumer`` joins the same
group id. Kafka converts a classic group to the consumer protocol on such a join unless a member's
*assignment* userData is non-empty (KAFKA-18134); a converted group is assigned by the broker's
``uniform`` assignor, which would hand the standby member partitions beside the active one.

The priorities must never be dropped silently: the standby keeps nothing, the active member keeps
everything, and the consumer-protocol member is refused loudly (librdkafka: a fatal error).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from live_group import ConsumerProtocolMember, Worker
from member_process import MemberProcess, create_ready_topic, wait_until

pytestmark = [pytest.mark.integration]

PARTITIONS = 6
HERE = Path(__file__).parent
#: How long the group is watched after the consumer-protocol member was answered: a converted group
#: makes the classic members rejoin within a heartbeat interval (1 s) plus a JoinGroup round.
WATCH_S = 10.0


class ConfluentFailoverMember(MemberProcess):
    """``confluent_member.py``: our confluent ``Consumer`` with ``FailoverAssignor`` (classic protocol)."""

    def __init__(
        self, bootstrap: str, group: str, name: str, topic: str, priority: int, log_dir: Path
    ) -> None:
        self.name = name
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115
            prefix=f"cf-{name}-", suffix=".log", delete=False, dir=log_dir
        )
        config = {
            "bootstrap": bootstrap,
            "group": group,
            "name": name,
            "topics": [topic],
            "strategy": "failover",
            "priority": priority,
        }
        argv = [sys.executable, str(HERE / "confluent_member.py"), json.dumps(config)]
        super().__init__(argv, stderr=self.log)

    def assignment(self) -> set[tuple[str, int]]:
        event = self.last("assignment")
        return {("", p) for p in event["parts"]} if event else set()


def _owned(worker: Worker | ConfluentFailoverMember) -> set[int]:
    return {p for _, p in worker.assignment()} if worker.alive() else set()


def _group_type(bootstrap: str, group: str) -> str:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    description = admin.describe_consumer_groups([group], request_timeout=20)[group].result(timeout=30)
    return str(description.type.name)


@pytest.mark.parametrize("standby_client", ["kafka-python", "confluent"])
def test_consumer_protocol_member_never_silently_drops_failover_priorities(
    kafka_cluster: Any, tmp_path: Path, standby_client: str
) -> None:
    """The standby runs in kafka-python, or in our confluent ``Consumer`` (its classic membership is
    kafka-python's, its assignor the same ``FailoverAssignor``)."""
    from kafka import KafkaAdminClient

    bootstrap = kafka_cluster.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="mixed-protocol-live")
    try:
        topic = create_ready_topic(admin, "mixed-protocol", PARTITIONS, 2)
    finally:
        admin.close()
    group = f"mixed-protocol-{uuid.uuid4().hex[:8]}"
    everything = set(range(PARTITIONS))
    active = Worker(bootstrap, group, "classic-p10", [topic], "failover", str(tmp_path), priority=10)
    standby: Worker | ConfluentFailoverMember
    if standby_client == "confluent":
        standby = ConfluentFailoverMember(bootstrap, group, "classic-p5", topic, 5, tmp_path)
    else:
        standby = Worker(bootstrap, group, "classic-p5", [topic], "failover", str(tmp_path), priority=5)
    intruder: ConsumerProtocolMember | None = None
    try:
        wait_until(
            lambda: (
                _owned(active) == everything
                and standby.last("assignment") is not None
                and not _owned(standby)
            ),
            90,
            "p10 owning every partition, p5 in the group with none",
        )
        assert _group_type(bootstrap, group) == "CLASSIC"

        intruder = ConsumerProtocolMember(bootstrap, group, "consumer-protocol", topic, tmp_path)
        cp = intruder
        wait_until(
            lambda: cp.errors() or cp.owned(),
            60,
            "the consumer-protocol member to be refused or to get partitions",
        )
        # whatever the broker did, watch the group long enough for a converted group to rebalance
        deadline = time.monotonic() + WATCH_S
        while time.monotonic() < deadline:
            state = {
                "p10": sorted(_owned(active)),
                "p5": sorted(_owned(standby)),
                "consumer": sorted(cp.owned()),
            }
            assert state["p5"] == [] and state["consumer"] == [], (
                f"failover priorities silently dropped after a consumer-protocol member joined: {state}; "
                f"errors the consumer-protocol member saw: {cp.errors()}"
            )
            time.sleep(0.2)
        assert _owned(active) == everything
        # librdkafka drops the broker's error message ("... because an unsupported custom assignor is
        # in use ..."): it reports GROUP_ID_NOT_FOUND as a fatal error of the consumer
        refused = [
            e
            for e in cp.errors()
            if "ConsumerGroupHeartbeat fatal error" in e["text"] and "group id does not exist" in e["text"]
        ]
        assert refused, f"the consumer-protocol member was not told it was refused: {cp.errors()}"
        assert _group_type(bootstrap, group) == "CLASSIC"
    finally:
        for member in (intruder, active, standby):
            if member is not None:
                member.close(timeout=15)


def test_failover_member_joining_a_consumer_protocol_group_logs_that_no_failover_leader_assigns(
    kafka_cluster: Any, tmp_path: Path
) -> None:
    """The other order: the group is a consumer-protocol group already, so the broker assigns it and our
    classic failover member (which Kafka admits into it) gets partitions by the ``uniform`` assignor,
    whatever its priority. Nothing can prevent that from the member's side; it says so in one log line."""
    from kafka import KafkaAdminClient

    from kafka_placement.assignment.strategies import NOT_FROM_FAILOVER_LEADER

    bootstrap = kafka_cluster.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="mixed-protocol-live")
    try:
        topic = create_ready_topic(admin, "mixed-protocol", PARTITIONS, 2)
    finally:
        admin.close()
    group = f"mixed-protocol-cp-first-{uuid.uuid4().hex[:8]}"
    first = ConsumerProtocolMember(bootstrap, group, "consumer-protocol", topic, tmp_path)
    classic: Worker | None = None
    try:
        wait_until(
            lambda: first.owned() == set(range(PARTITIONS)),
            60,
            "the consumer-protocol member owning every partition",
        )
        assert _group_type(bootstrap, group) == "CONSUMER"
        classic = Worker(bootstrap, group, "classic-p10", [topic], "failover", str(tmp_path), priority=10)
        member = classic
        wait_until(
            lambda: NOT_FROM_FAILOVER_LEADER in member.log_tail(400),
            60,
            "the classic failover member's log line saying no failover leader assigned it",
        )
        lines = [line for line in member.log_tail(400).splitlines() if NOT_FROM_FAILOVER_LEADER in line]
        assert len(lines) == 1 and " WARNING " in lines[0], lines
    finally:
        for m in (classic, first):
            if m is not None:
                m.close(timeout=15)


def test_the_soak_member_loop_ends_on_the_fatal_error_librdkafka_really_delivers(
    kafka_cluster: Any, tmp_path: Path
) -> None:
    """The soak's consumer-protocol member replaces a consumer that failed for good; it must see the
    failure as librdkafka delivers it. The refusal above is a real one: a consumer-protocol consumer
    joining a classic failover group is answered GROUP_ID_NOT_FOUND, a fatal error. The member's loop
    must end on it (before the fix it polled the dead consumer until told to close)."""
    import threading

    from confluent_kafka import Consumer
    from kafka import KafkaAdminClient

    from kafka_placement.soak.confluent_member import FatalConsumerError, consume_confluent

    bootstrap = kafka_cluster.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="mixed-protocol-fatal")
    try:
        topic = create_ready_topic(admin, "mixed-protocol-fatal", PARTITIONS, 2)
    finally:
        admin.close()
    group = f"mixed-protocol-fatal-{uuid.uuid4().hex[:8]}"
    active = Worker(bootstrap, group, "classic-p10", [topic], "failover", str(tmp_path), priority=10)
    closing = threading.Event()
    timer = threading.Timer(90, closing.set)  # bounds the loop when the fatal error is missed
    consumer = None
    try:
        wait_until(lambda: _owned(active) == set(range(PARTITIONS)), 90, "p10 owning every partition")
        consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "client.id": "consumer-protocol-fatal",
                "group.protocol": "consumer",
                "enable.auto.commit": False,
            }
        )
        consumer.subscribe([topic])
        timer.start()
        started = time.monotonic()
        with pytest.raises(FatalConsumerError, match="group id does not exist"):
            consume_confluent(consumer, lambda: None, lambda event: None, group, "cp", closing)
        assert not closing.is_set(), "the fatal error was seen only after the loop was told to close"
        assert time.monotonic() - started < 60
    finally:
        timer.cancel()
        if consumer is not None:
            consumer.close()
        active.close(timeout=15)
