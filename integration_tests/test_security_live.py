"""Every networked path on a real SASL_SSL cluster (SCRAM-SHA-512 over TLS, ACLs on, racks rack1-3),
configured only through ``--command-config`` / :func:`connection_settings`, plus each connection failure
as one line, exit 2, in under 15 s, with no traceback.

Expected partitions come from Java's murmur2 as kafka-python's own ``murmur2`` computes it (an
independent implementation), ``toPositive(h) % n``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from kafka_placement.clients.connection import ConnectionSettings, connection_settings

pytestmark = pytest.mark.integration

PARTITIONS = 6


def cli(*argv: str, timeout: float = 120) -> tuple[int, str, str, float]:
    """``kafka-placement ARGV`` in a subprocess: (exit code, stdout, stderr, seconds)."""
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_placement.cli", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return proc.returncode, proc.stdout, proc.stderr, time.monotonic() - t0


def expected_partition(key: bytes) -> int:
    from kafka.partitioner.default import murmur2  # kafka-python's own implementation, not ours

    return (murmur2(key) & 0x7FFFFFFF) % PARTITIONS


@pytest.fixture(scope="module")
def secured(kafka_secure_cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The cluster, the admin's and alice's properties files, and a topic with RF 2 the admin created."""
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    d = tmp_path_factory.mktemp("security")
    admin_props = kafka_secure_cluster.write_client_config(d / "admin.properties", "admin")
    alice_props = kafka_secure_cluster.write_client_config(d / "alice.properties", "alice")
    topic = f"secure-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(**kafka_secure_cluster.kafka_python_settings("admin"))
    try:
        admin.create_topics([NewTopic(topic, PARTITIONS, 2)])
    finally:
        admin.close()
    settings = connection_settings(command_config=str(admin_props))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # every partition has a leader
        code, out, _, _ = cli("audit", "--command-config", str(admin_props), "--topic", topic, "--json")
        if code == 0 and json.loads(out)["topics"][0]["partitions"] == PARTITIONS:
            break
        time.sleep(1)
    return {
        "cluster": kafka_secure_cluster,
        "admin": admin_props,
        "alice": alice_props,
        "topic": topic,
        "settings": settings,
    }


def test_audit_through_command_config(secured: dict[str, Any]) -> None:
    code, out, err, _ = cli("audit", "--command-config", str(secured["admin"]), "--topic", secured["topic"])
    assert code == 0, err
    assert "brokers: 0(rack1), 1(rack2), 2(rack3)" in out
    assert secured["topic"] in out


def test_audit_without_describe_acl_is_not_authorised(secured: dict[str, Any]) -> None:
    code, out, err, seconds = cli(
        "audit", "--command-config", str(secured["alice"]), "--topic", secured["topic"]
    )
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert lines[0].startswith("kafka-placement audit: error: not authorised to Describe topic")
    assert "as user 'alice'" in lines[0] and seconds < 15


def _failure(secured: dict[str, Any], tmp_path: Path, case: str) -> list[str]:
    cluster = secured["cluster"]
    props = dict(
        line.split("=", 1)
        for line in secured["admin"].read_text().splitlines()
        if line and not line.startswith("#")
    )
    servers = cluster.bootstrap_servers
    if case == "wrong password":
        bad = tmp_path / "bad.properties"
        bad.write_text(
            secured["admin"]
            .read_text()
            .replace(
                props["sasl.jaas.config"],
                props["sasl.jaas.config"].split("password=")[0] + 'password="nope";',
            )
        )
        return ["--command-config", str(bad)]
    if case == "plaintext client on the TLS port":
        return ["--bootstrap-server", servers]
    if case == "TLS without SASL on the SASL_SSL port":
        return [
            "--bootstrap-server",
            servers,
            "-X",
            "security.protocol=SSL",
            "-X",
            f"ssl.truststore.location={props['ssl.truststore.location']}",
            "-X",
            "ssl.truststore.type=PEM",
        ]
    if case == "unknown CA":
        noca = tmp_path / "noca.properties"
        noca.write_text("".join(f"{k}={v}\n" for k, v in props.items() if not k.startswith("ssl.")))
        return ["--command-config", str(noca)]
    assert case == "unreachable"
    return ["--bootstrap-server", "127.0.0.1:1"]


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("wrong password", "SASL authentication failed"),
        ("plaintext client on the TLS port", "closed the connection at our first request"),
        ("TLS without SASL on the SASL_SSL port", "the listener expects SASL"),
        ("unknown CA", "the broker's TLS certificate is not trusted"),
        ("unreachable", "connection refused"),
    ],
)
@pytest.mark.parametrize("command", [["audit"], ["reassign", "plan"]])
def test_each_failure_is_one_line_exit_2_fast(
    secured: dict[str, Any], tmp_path: Path, case: str, message: str, command: list[str]
) -> None:
    code, _out, err, seconds = cli(*command, *_failure(secured, tmp_path, case))
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    assert message in lines[0], lines[0]
    assert "nope" not in err and "password=" not in err
    assert seconds < 15


def test_tls_client_on_a_plaintext_listener(kafka_cluster: Any, tmp_path: Path) -> None:
    code, _, err, seconds = cli(
        "audit", "--bootstrap-server", kafka_cluster.bootstrap_servers, "-X", "security.protocol=SSL"
    )
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "does not seem to speak TLS" in err or "TLS handshake failed" in err, err
    assert seconds < 15


def test_reassign_plan_apply_verify_through_command_config(secured: dict[str, Any], tmp_path: Path) -> None:
    plan_file, rollback = tmp_path / "plan.json", tmp_path / "rollback.json"
    cfg = ["--command-config", str(secured["admin"])]
    code, _, err, _ = cli(
        "reassign",
        "plan",
        *cfg,
        "--topic",
        secured["topic"],
        "--brokers",
        "0,1",
        "--output",
        str(plan_file),
        "--rollback",
        str(rollback),
    )
    assert code == 0, err
    plan = json.loads(plan_file.read_text())
    assert plan["partitions"] and all(set(p["replicas"]) <= {0, 1} for p in plan["partitions"])
    code, out, err, _ = cli("reassign", "apply", *cfg, "--plan", str(plan_file), timeout=300)
    assert code == 0, out + err
    code, out, err, _ = cli("reassign", "verify", *cfg, "--plan", str(plan_file))
    assert code == 0, out + err
    assert "is completed" in out


def test_producers_with_our_partitioners_and_failover_group(secured: dict[str, Any]) -> None:
    """kafka-python (JavaDefaultPartitioner) and our confluent Producer (murmur2_random) produce through
    the settings; a failover consumer group (kafka-python) reads everything back: every keyed record is
    in the partition Java's murmur2 gives, nothing is lost."""
    from kafka import KafkaConsumer, KafkaProducer

    from kafka_placement.clients.confluent.producer import Producer
    from kafka_placement.clients.kafka_python.assignors import FailoverAssignor
    from kafka_placement.clients.kafka_python.partitioners import JavaDefaultPartitioner

    settings: ConnectionSettings = secured["settings"]
    topic = secured["topic"]
    keys = [f"user-{i}".encode() for i in range(300)]
    kp = KafkaProducer(partitioner=JavaDefaultPartitioner(), acks="all", **settings.kafka_python())
    try:
        for k in keys[:150]:
            kp.send(topic, key=k, value=b"kp")
        kp.flush(60)
    finally:
        kp.close()
    ck = Producer({**settings.confluent(), "acks": "all"}, partitioner="murmur2_random")
    for k in keys[150:]:
        ck.produce(topic, b"ck", k)
    assert ck.flush(60) == 0
    consumer = KafkaConsumer(
        topic,
        group_id=f"secure-failover-{uuid.uuid4().hex[:6]}",
        auto_offset_reset="earliest",
        partition_assignment_strategy=[FailoverAssignor(priority=10)],
        enable_auto_commit=False,
        **settings.kafka_python(),
    )
    seen: dict[bytes, int] = {}
    try:
        deadline = time.monotonic() + 90
        while len(seen) < len(keys) and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=1000).values():
                for r in records:
                    seen[r.key] = r.partition
        assignment = consumer.assignment()
    finally:
        consumer.close()
    assert sorted(seen) == sorted(keys)
    assert {k: seen[k] for k in keys} == {k: expected_partition(k) for k in keys}
    assert {tp.partition for tp in assignment} == set(range(PARTITIONS))  # the one member owns all


@pytest.mark.spark
def test_plan_reads_the_topic_over_sasl_ssl(secured: dict[str, Any], tmp_path: Path) -> None:
    """Spark's Kafka source, configured from the same properties file, reads the secured topic."""
    out = tmp_path / "plan"
    code, stdout, err, _ = cli(
        "plan",
        "--topic",
        secured["topic"],
        "--command-config",
        str(secured["admin"]),
        "--partitions",
        str(PARTITIONS),
        "--output",
        str(out),
        timeout=600,
    )
    assert code == 0, stdout[-2000:] + err[-3000:]
    totals = json.loads((out / "plan.json").read_text())["totals"]
    assert totals["records"] >= 300  # the records the producers test and the fixture wrote
