"""A mixed failover group on the live cluster: our confluent-kafka ``Consumer``, a kafka-python
consumer with our ``FailoverAssignor`` and Kafka's Java consumer with a Java failover assignor
written independently of ours (``integration_tests/java/member/.../FailoverAssignor.java``), in one group
(same protocol name ``failover``, same userData: a 4-byte big-endian priority).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest

from member_process import MemberProcess, create_ready_topic, wait_until

pytestmark = [pytest.mark.integration]

PARTITIONS = 6
SESSION_TIMEOUT_S = 6.0
HERE = Path(__file__).parent


@pytest.fixture()
def topic(kafka_cluster: Any) -> str:
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap_servers, client_id="cf-live")
    try:
        return create_ready_topic(admin, "cf-mixed", PARTITIONS, 2)
    finally:
        admin.close()


class AnyMember(MemberProcess):
    """A member of any kind: the confluent wrapper, a kafka-python worker or the Java consumer;
    all report ``assignment`` events (partitions as numbers or [topic, partition] pairs)."""

    def __init__(self, name: str, argv: list[str], log_dir: Path) -> None:
        self.name = name
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115
            prefix=f"cf-mixed-{name}-", suffix=".log", delete=False, dir=log_dir
        )
        super().__init__(argv, stderr=self.log)

    def owned(self) -> set[int]:
        event = self.last("assignment")
        return {p[1] if isinstance(p, list) else p for p in event["parts"]} if event else set()

    def alive_owned(self) -> set[int]:
        return self.owned() if self.alive() else set()


@pytest.fixture()
def mixed(kafka_cluster: Any, java_member_classpath: str, tmp_path: Path) -> Any:
    started: list[AnyMember] = []
    bootstrap = kafka_cluster.bootstrap_servers

    def start(kind: str, group: str, topic: str, priority: int) -> AnyMember:
        name = f"{kind}-p{priority}"
        if kind == "java":
            argv = [
                shutil.which("java") or "java",
                "-cp",
                java_member_classpath,
                "io.kafkaplacement.conformance.live.GroupMember",
                bootstrap,
                group,
                name,
                topic,
                f"failover:{priority}",
            ]
        elif kind == "kafka-python":
            config = {
                "bootstrap": bootstrap,
                "group": group,
                "name": name,
                "topics": [topic],
                "strategy": "failover",
                "priority": priority,
            }
            argv = [sys.executable, str(HERE / "kafka_python_member.py"), json.dumps(config)]
        else:
            config = {
                "bootstrap": bootstrap,
                "group": group,
                "name": name,
                "topics": [topic],
                "strategy": "failover",
                "priority": priority,
                "session_timeout_ms": int(SESSION_TIMEOUT_S * 1000),
            }
            argv = [sys.executable, str(HERE / "confluent_member.py"), json.dumps(config)]
        member = AnyMember(name, argv, tmp_path)
        started.append(member)
        return member

    yield start
    for member in started:
        member.close(timeout=15)


def _only_owner(owner: AnyMember, members: list[AnyMember], what: str) -> None:
    everything = set(range(PARTITIONS))

    def settled() -> bool:
        return owner.alive_owned() == everything and all(
            not m.alive_owned() for m in members if m is not owner
        )

    try:
        wait_until(settled, 60, what)
    except AssertionError:
        state = {m.name: (sorted(m.alive_owned()), m.alive()) for m in members}
        raise AssertionError(f"{what}: {state}") from None


def test_mixed_group_wrapper_kafka_python_and_java_follow_priority(topic: str, mixed: Any) -> None:
    """One failover group of three clients. First the Java consumer leads (its own Java
    FailoverAssignor assigns, reading the priorities our userData encoders wrote), then — in a
    second group — the wrapper leads (our assignor reads the Java member's userData)."""
    group = f"cf-mixed-java-leads-{uuid.uuid4().hex[:8]}"
    java = mixed("java", group, topic, 1)
    _only_owner(java, [java], "java alone (leader)")
    ours = mixed("confluent", group, topic, 5)
    _only_owner(ours, [java, ours], "wrapper p5 over java p1 (java assigns)")
    kp = mixed("kafka-python", group, topic, 10)
    _only_owner(kp, [java, ours, kp], "kafka-python p10 over all (java assigns)")
    kp.close()
    _only_owner(ours, [java, ours, kp], "wrapper p5 after kafka-python p10 left")
    for m in (ours, java):
        m.close()

    group = f"cf-mixed-ours-leads-{uuid.uuid4().hex[:8]}"
    ours = mixed("confluent", group, topic, 5)
    _only_owner(ours, [ours], "wrapper alone (leader)")
    java = mixed("java", group, topic, 10)
    _only_owner(java, [ours, java], "java p10 over wrapper p5 (our assignor assigns)")
    kp = mixed("kafka-python", group, topic, 1)
    wait_until(lambda: kp.last("assignment") is not None, 60, "kafka-python p1 in the group")
    _only_owner(java, [ours, java, kp], "java p10 still over wrapper p5 and kafka-python p1")
    java.close()
    _only_owner(ours, [ours, java, kp], "wrapper p5 after java p10 left")
