"""Live checks of the secured embedded cluster (``kafka_secure_cluster``: SASL_SSL + SCRAM-SHA-512 with
ACLs; an SSL-only one-broker cluster started through ``kafka-placement cluster up``).

- kafka-python and confluent-kafka clients configured only from the cluster's client settings (and
  from the written ``.properties`` file read back independently) create a topic, produce and consume
  one record over TLS + SCRAM;
- the brokers' racks are read back over the secured listener;
- a plaintext client, a wrong password and a client that does not trust the CA are refused;
- with ACLs on, ``alice`` gets TOPIC_AUTHORIZATION_FAILED until ``admin`` grants her access.
"""

from __future__ import annotations

import os
import shutil
import ssl
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

SECURE_RACKS = {0: "rack1", 1: "rack2", 2: "rack3"}


def read_java_properties(path: Path) -> dict[str, str]:
    """A reader for the simple ``key=value`` lines we write (independent of our writer)."""
    out: dict[str, str] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "!")):
            continue
        key, _, value = line.partition("=")
        out[key.strip()] = value.strip().replace("\\\\", "\\")
    return out


def librdkafka_from_java(props: dict[str, str]) -> dict[str, str]:
    """Java client properties → librdkafka settings, written out here independently of the harness."""
    conf = {"bootstrap.servers": props["bootstrap.servers"], "security.protocol": props["security.protocol"]}
    if "sasl.jaas.config" in props:
        jaas = props["sasl.jaas.config"]
        conf["sasl.mechanism"] = props["sasl.mechanism"]
        conf["sasl.username"] = jaas.split('username="', 1)[1].split('"', 1)[0]
        conf["sasl.password"] = jaas.split('password="', 1)[1].split('"', 1)[0]
    if "ssl.truststore.location" in props:
        assert props["ssl.truststore.type"] == "PEM"
        conf["ssl.ca.location"] = props["ssl.truststore.location"]
    return conf


def produce_and_consume(cluster: Any, topic: str, user: str | None, java_props: dict[str, str]) -> None:
    """kafka-python produces one record; confluent-kafka (configured from ``java_props``) reads it."""
    from confluent_kafka import Consumer
    from kafka import KafkaProducer

    value = uuid.uuid4().bytes
    producer = KafkaProducer(**cluster.kafka_python_settings(user), acks="all")
    try:
        producer.send(topic, key=b"k", value=value).get(timeout=30)
    finally:
        producer.close()
    conf = librdkafka_from_java(java_props)
    conf.update({"group.id": f"g-{uuid.uuid4().hex[:8]}", "auto.offset.reset": "earliest"})
    consumer = Consumer(conf)
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 45
        while time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            assert (msg.key(), msg.value()) == (b"k", value)
            return
        raise AssertionError(f"record not consumed from {topic} within 45 s")
    finally:
        consumer.close()


def create_topic(cluster: Any, name: str, partitions: int, rf: int) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(**cluster.kafka_python_settings("admin"))
    try:
        admin.create_topics([NewTopic(name, partitions, rf)])
    finally:
        admin.close()


@pytest.fixture(scope="module")
def sasl_cluster(kafka_secure_cluster: Any) -> Any:
    return kafka_secure_cluster


JAVA_CHECK = Path(__file__).with_name("java") / "CommandConfigCheck.java"


def java_command_config(props_file: Path) -> list[str]:
    """Kafka's Java Admin client reading ``props_file`` exactly as the tools read --command-config."""
    from kafka_placement.conformance.jars import JavaReferenceUnavailable, class_path

    java = shutil.which("java")
    try:
        jars = class_path()
        if java is None:
            raise JavaReferenceUnavailable("java not found")
    except JavaReferenceUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Java client check cannot run in CI: {exc}")
        pytest.skip(f"Java client check cannot run ({exc}); run scripts/fetch-java-reference.sh")
    proc = subprocess.run(
        [java, "-cp", ":".join(map(str, jars)), str(JAVA_CHECK), str(props_file)],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.splitlines()


def test_sasl_ssl_settings_and_racks(sasl_cluster: Any, tmp_path: Path) -> None:
    settings = sasl_cluster.client_settings("alice")
    assert settings["security.protocol"] == "SASL_SSL"
    assert settings["sasl.mechanism"] == "SCRAM-SHA-512"
    assert 'username="alice"' in settings["sasl.jaas.config"]
    for user in ("admin", "alice"):
        assert sasl_cluster.security.password(user) not in repr(sasl_cluster.security)
    # The racks as the admin API reports them over SASL_SSL (kafka-python and librdkafka).
    assert sasl_cluster.describe() == SECURE_RACKS
    from confluent_kafka.admin import AdminClient

    client = AdminClient(sasl_cluster.librdkafka_settings("admin"))  # keep a reference while waiting
    described = client.describe_cluster().result(timeout=30)
    assert {n.id: n.rack for n in described.nodes} == SECURE_RACKS
    # Every advertised endpoint is the secured listener (port of the bootstrap list).
    assert sorted(f"{n.host}:{n.port}" for n in described.nodes) == sorted(
        sasl_cluster.bootstrap_servers.split(",")
    )


def test_sasl_ssl_produce_consume_with_acls(sasl_cluster: Any, tmp_path: Path) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin import ACL, ACLOperation, ACLPermissionType, ACLResourcePatternType, ResourcePattern
    from kafka.admin import ResourceType as KResourceType
    from kafka.errors import TopicAuthorizationFailedError

    topic = f"secure-{uuid.uuid4().hex[:8]}"
    create_topic(sasl_cluster, topic, partitions=3, rf=3)
    props_file = sasl_cluster.write_client_config(tmp_path / "alice.properties", "alice")
    assert (tmp_path / "alice-ca.pem").read_bytes() == sasl_cluster.ca_pem.read_bytes()
    assert oct(props_file.stat().st_mode & 0o777) == "0o600"
    props = read_java_properties(props_file)
    assert props["ssl.truststore.location"] == str(tmp_path / "alice-ca.pem")

    # No ACL yet: alice is refused (allow.everyone.if.no.acl.found=false), admin (super user) is not.
    alice_admin = KafkaAdminClient(**sasl_cluster.kafka_python_settings("alice"))
    try:
        [described] = alice_admin.describe_topics([topic])
        assert described["error_code"] == TopicAuthorizationFailedError.errno == 29  # Kafka's code
        assert topic not in alice_admin.list_topics()
    finally:
        alice_admin.close()

    admin = KafkaAdminClient(**sasl_cluster.kafka_python_settings("admin"))
    try:
        grants = [
            ACL(
                "User:alice",
                "*",
                op,
                ACLPermissionType.ALLOW,
                ResourcePattern(KResourceType.TOPIC, topic, ACLResourcePatternType.LITERAL),
            )
            for op in (ACLOperation.DESCRIBE, ACLOperation.WRITE, ACLOperation.READ)
        ] + [
            ACL(
                "User:alice",
                "*",
                ACLOperation.READ,
                ACLPermissionType.ALLOW,
                ResourcePattern(KResourceType.GROUP, "*", ACLResourcePatternType.LITERAL),
            )
        ]
        result = admin.create_acls(grants)
        assert not result["failed"], result["failed"]
    finally:
        admin.close()
    # ACLs propagate through the metadata log; the first produce may race them, so retry briefly.
    deadline = time.monotonic() + 20
    while True:
        try:
            produce_and_consume(sasl_cluster, topic, "alice", props)
            break
        except Exception as exc:
            if "uthoriz" not in repr(exc) or time.monotonic() > deadline:
                raise
            time.sleep(1)
    # Kafka's own Java client reads the same file (Utils.loadProps, as --command-config): it sees the
    # racks, and alice may describe exactly the one topic she was granted.
    assert java_command_config(props_file) == [
        *(f"node {b} {r}" for b, r in sorted(SECURE_RACKS.items())),
        "topics 1",
    ]


def test_our_consumers_synchronous_commits_are_exchanged_over_tls_and_scram(sasl_cluster: Any) -> None:
    """Our confluent Consumer over SASL_SSL committing after every record: after its first request,
    each commit is one exchange on the commit connection's TLS transport on the calling thread, and
    what it committed is what the group holds (read back by a plain confluent-kafka client)."""
    import confluent_kafka
    from kafka import KafkaProducer

    from kafka_placement.clients.confluent import Consumer, FailoverAssignor

    topic, records = f"secure-commits-{uuid.uuid4().hex[:8]}", 60
    create_topic(sasl_cluster, topic, partitions=3, rf=3)
    producer = KafkaProducer(**sasl_cluster.kafka_python_settings("admin"), acks="all")
    try:
        for i in range(records):
            producer.send(topic, key=str(i).encode(), value=b"v")
        producer.flush(30)
    finally:
        producer.close()
    conf = {
        **sasl_cluster.librdkafka_settings("admin"),
        "group.id": f"g-{uuid.uuid4().hex[:8]}",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    }
    consumer = Consumer(conf, assignor=FailoverAssignor(priority=1))
    last: dict[int, int] = {}
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 60
        consumed = 0
        while consumed < records and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None or msg.error() is not None:
                continue
            [committed] = consumer.commit(msg, asynchronous=False)
            assert (committed.partition, committed.offset) == (msg.partition(), msg.offset() + 1)
            last[msg.partition()] = msg.offset()
            consumed += 1
        assert consumed == records, f"{consumed} of {records} records within 60 s"
        connection = consumer._commits._connection  # the commit connection's own counters
        assert connection is not None and connection.requests_sent == records
        assert connection.exchanges == records - 1  # all but the first, which set the connection up
    finally:
        consumer.close()
    reader = confluent_kafka.Consumer(conf)
    try:
        partitions = [confluent_kafka.TopicPartition(topic, p) for p in range(3)]
        held = {tp.partition: tp.offset for tp in reader.committed(partitions, timeout=30)}
    finally:
        reader.close()
    assert held == {p: offset + 1 for p, offset in last.items()}


def test_sasl_ssl_refuses_wrong_clients(sasl_cluster: Any) -> None:
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError

    good = sasl_cluster.kafka_python_settings("alice")
    wrong_password = {**good, "sasl_plain_password": "not-" + str(good["sasl_plain_password"])}
    plaintext = {"bootstrap_servers": sasl_cluster.bootstrap_servers, "security_protocol": "PLAINTEXT"}
    untrusted = {**good, "ssl_cafile": None, "ssl_context": ssl.create_default_context()}
    for name, kwargs in (
        ("wrong password", wrong_password),
        ("plaintext", plaintext),
        ("CA not trusted", untrusted),
    ):
        t0 = time.monotonic()
        with pytest.raises(KafkaError):  # NoBrokersAvailable / SaslAuthenticationFailedError
            client = KafkaAdminClient(**kwargs, request_timeout_ms=3000, bootstrap_timeout_ms=3000)
            try:
                client.list_topics()
            finally:
                client.close()
        assert time.monotonic() - t0 < 30, name


def test_cluster_cli_ssl_up_status_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``kafka-placement cluster up --security ssl --brokers 1 --client-config F``: one stdout line (the
    bootstrap address); clients configured only from F reach the TLS listener; status; down."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, NewTopic

    from kafka_placement.cli import main

    monkeypatch.setenv("KAFKA_PLACEMENT_STATE", str(tmp_path / "state.json"))  # never the shared one
    config = tmp_path / "client.properties"
    t0 = time.monotonic()
    try:
        rc = main(
            [
                "cluster",
                "up",
                "--security",
                "ssl",
                "--brokers",
                "1",
                "--racks",
                "rackA",
                "--client-config",
                str(config),
                "--name",
                f"kp-cli-{uuid.uuid4().hex[:6]}",
            ]
        )
        startup = time.monotonic() - t0
        captured = capsys.readouterr()
        out = captured.out
        assert rc == 0, captured.err
        [bootstrap] = out.splitlines()
        props = read_java_properties(config)
        assert props["bootstrap.servers"] == bootstrap and props["security.protocol"] == "SSL"
        assert props["ssl.truststore.location"] == str(tmp_path / "client-ca.pem")
        assert "sasl.jaas.config" not in props

        assert main(["cluster", "status"]) == 0
        status = capsys.readouterr().out
        assert "(healthy)" in status and "security: SSL" in status and "{0: 'rackA'}" in status

        conf = librdkafka_from_java(props)
        admin = AdminClient(conf)
        described = admin.describe_cluster().result(timeout=30)
        assert {n.id: n.rack for n in described.nodes} == {0: "rackA"}
        topic = f"tls-{uuid.uuid4().hex[:8]}"
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=30)

        class FromFile:  # kafka-python kwargs derived from the file, not from the harness
            @staticmethod
            def kafka_python_settings(user: str | None) -> dict[str, object]:
                return {
                    "bootstrap_servers": props["bootstrap.servers"],
                    "security_protocol": "SSL",
                    "ssl_cafile": props["ssl.truststore.location"],
                }

        produce_and_consume(FromFile, topic, None, props)
        # librdkafka speaking plaintext to the TLS listener gets no metadata.
        plain = AdminClient({"bootstrap.servers": bootstrap, "security.protocol": "PLAINTEXT"})
        with pytest.raises(KafkaException):
            plain.list_topics(timeout=5)
        print(f"cluster up (1 broker, SSL) took {startup:.1f}s")
    finally:
        assert main(["cluster", "down"]) == 0
    assert "removed cluster" in capsys.readouterr().out
    assert not (tmp_path / "state.json").exists()
