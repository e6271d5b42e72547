"""Live checks of the secured embedded cluster (``kafka_secure_cluster``: SASL_SSL + SCRAM-SHA-512 with
ACLs; an SSL-only cluster from ``kafka_cluster_factory``).

- kafka-python and confluent-kafka clients configured only from the cluster's client settings (and
  from the written ``.properties`` file read back independently) create a topic, produce and consume
  one record over TLS + SCRAM;
- the brokers' racks are read back over the secured listener;
- a plaintext client, a wrong password and a client that does not trust the CA are refused;
- with ACLs on, ``alice`` gets TOPIC_AUTHORIZATION_FAILED until ``admin`` grants her access.
"""

from __future__ import annotations

import ssl
import time
import uuid
from collections.abc import Callable, Iterator
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


@pytest.fixture(scope="module")
def ssl_cluster(kafka_cluster_factory: Callable[..., Any]) -> Iterator[Any]:
    yield kafka_cluster_factory("ssl", racks={0: "rack1"})


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
        sasl_cluster.bootstrap_servers.split(","))


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
            ACL("User:alice", "*", op, ACLPermissionType.ALLOW,
                ResourcePattern(KResourceType.TOPIC, topic, ACLResourcePatternType.LITERAL))
            for op in (ACLOperation.DESCRIBE, ACLOperation.WRITE, ACLOperation.READ)
        ] + [ACL("User:alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
                 ResourcePattern(KResourceType.GROUP, "*", ACLResourcePatternType.LITERAL))]
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


def test_sasl_ssl_refuses_wrong_clients(sasl_cluster: Any) -> None:
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError

    good = sasl_cluster.kafka_python_settings("alice")
    wrong_password = {**good, "sasl_plain_password": "not-" + str(good["sasl_plain_password"])}
    plaintext = {"bootstrap_servers": sasl_cluster.bootstrap_servers, "security_protocol": "PLAINTEXT"}
    untrusted = {**good, "ssl_cafile": None, "ssl_context": ssl.create_default_context()}
    for name, kwargs in (("wrong password", wrong_password), ("plaintext", plaintext),
                         ("CA not trusted", untrusted)):
        t0 = time.monotonic()
        with pytest.raises(KafkaError):  # NoBrokersAvailable / SaslAuthenticationFailedError
            client = KafkaAdminClient(**kwargs, request_timeout_ms=5000, bootstrap_timeout_ms=5000)
            try:
                client.list_topics()
            finally:
                client.close()
        assert time.monotonic() - t0 < 30, name


def test_ssl_cluster_clients(ssl_cluster: Any, tmp_path: Path) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    assert ssl_cluster.describe() == {0: "rack1"}
    topic = f"tls-{uuid.uuid4().hex[:8]}"
    create_topic(ssl_cluster, topic, partitions=1, rf=1)
    props = read_java_properties(ssl_cluster.write_client_config(tmp_path / "client.properties"))
    assert props["security.protocol"] == "SSL" and "sasl.jaas.config" not in props
    produce_and_consume(ssl_cluster, topic, None, props)
    # librdkafka speaking plaintext to the TLS listener gets no metadata.
    plain = AdminClient({"bootstrap.servers": ssl_cluster.bootstrap_servers,
                         "security.protocol": "PLAINTEXT"})
    with pytest.raises(KafkaException):
        plain.list_topics(timeout=5)
