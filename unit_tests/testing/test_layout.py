"""ClusterLayout rendering, checked against the offline image's real entry point (docker/offline/run)."""

from __future__ import annotations

import base64
import os
import stat
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.testing.layout import (
    BROKER_RACKS,
    CONTROLLER_ID,
    NON_PROPERTY_ENV,
    ClusterLayout,
    env_to_property,
    new_cluster_id,
    property_to_env,
)

RUN_SCRIPT = Path(__file__).resolve().parents[2] / "docker" / "offline" / "run"

PORTS = {b: 30000 + b for b in range(6)}


def layout(**kw: object) -> ClusterLayout:
    args: dict[str, object] = {
        "cluster_id": new_cluster_id(),
        "controller_port": 29999,
        "broker_ports": PORTS,
    }
    args.update(kw)
    return ClusterLayout(**args)  # type: ignore[arg-type]


def test_seed_racks() -> None:
    assert dict(BROKER_RACKS) == {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert CONTROLLER_ID not in BROKER_RACKS


@pytest.mark.parametrize(
    ("prop", "env"),
    [
        ("broker.rack", "KAFKA_BROKER_RACK"),
        ("node.id", "KAFKA_NODE_ID"),
        ("controller.quorum.voters", "KAFKA_CONTROLLER_QUORUM_VOTERS"),
        ("listener.security.protocol.map", "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"),
        # official image convention: '-' -> '__', '_' -> '___'
        ("ssl.key-store", "KAFKA_SSL_KEY__STORE"),
        ("a_b.c", "KAFKA_A___B_C"),
    ],
)
def test_property_env_names(prop: str, env: str) -> None:
    assert property_to_env(prop) == env
    assert env_to_property(env) == prop


@given(st.from_regex(r"[a-z][a-z0-9]*([._-][a-z0-9]+)*", fullmatch=True))
def test_env_name_roundtrip(prop: str) -> None:
    assert env_to_property(property_to_env(prop)) == prop


@pytest.mark.parametrize("bad", ["", " x", "a=b"])
def test_property_to_env_rejects(bad: str) -> None:
    with pytest.raises(ValueError, match="invalid Kafka property name"):
        property_to_env(bad)


@pytest.mark.parametrize("bad", ["KAFKA_HEAP_OPTS", "NODE_ID", "KAFKA_OPTS"])
def test_env_to_property_rejects(bad: str) -> None:
    with pytest.raises(ValueError, match="is not a KAFKA_<property>"):
        env_to_property(bad)


def test_cluster_id_is_16_bytes_urlsafe_base64_never_read_as_an_option() -> None:
    ids = {new_cluster_id() for _ in range(2000)}  # a leading "-" would come up ~31 times in 2000
    assert len(ids) == 2000
    for cid in ids:
        assert len(cid) == 22 and "=" not in cid
        assert len(base64.urlsafe_b64decode(cid + "==")) == 16
        assert not cid.startswith("-")  # kafka-storage format --cluster-id would take it for an option


def test_broker_env_listeners_racks_and_quorum() -> None:
    lay = layout()
    assert lay.bootstrap_servers == ",".join(f"127.0.0.1:{30000 + b}" for b in range(6))
    assert lay.quorum_voters == f"{CONTROLLER_ID}@127.0.0.1:29999"
    for b in range(6):
        env = lay.broker_env(b)
        assert env["KAFKA_NODE_ID"] == str(b)
        assert env["KAFKA_BROKER_RACK"] == BROKER_RACKS[b]
        assert env["KAFKA_PROCESS_ROLES"] == "broker"
        listener = f"PLAINTEXT://127.0.0.1:{30000 + b}"
        assert env["KAFKA_LISTENERS"] == env["KAFKA_ADVERTISED_LISTENERS"] == listener
        assert env["KAFKA_CONTROLLER_QUORUM_VOTERS"] == lay.quorum_voters
        assert env["CLUSTER_ID"] == lay.cluster_id
        assert env["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"] == "3"
        assert env["KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS"] == "0"
    c = lay.controller_env()
    assert c["KAFKA_NODE_ID"] == str(CONTROLLER_ID) and c["KAFKA_PROCESS_ROLES"] == "controller"
    assert c["KAFKA_LISTENERS"] == "CONTROLLER://127.0.0.1:29999"
    assert "KAFKA_ADVERTISED_LISTENERS" not in c  # forbidden on a KRaft controller in apache/kafka
    assert "KAFKA_BROKER_RACK" not in c


def test_extra_broker_properties_override_defaults() -> None:
    lay = layout(broker_properties={"offsets.topic.replication.factor": "2", "log.retention.ms": "1000"})
    env = lay.broker_env(4)
    assert env["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"] == "2"
    assert env["KAFKA_LOG_RETENTION_MS"] == "1000"


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"broker_ports": {0: 1, 1: 2}}, "differ from broker ids with racks"),
        ({"controller_port": 30003}, "ports must be distinct"),
        ({"controller_port": 70000}, r"port 70000 out of range \[1, 65535\]"),
        (
            {"broker_ports": {**PORTS, CONTROLLER_ID: 31000}, "racks": {**BROKER_RACKS, CONTROLLER_ID: "r"}},
            "reserved for the controller",
        ),
    ],
)
def test_layout_validation(kw: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        layout(**kw)


def test_broker_address_unknown_id() -> None:
    with pytest.raises(KeyError, match="broker id 9 not in"):
        layout().broker_address(9)


# ---------------------------------------------------------------- the image's entry point agrees
def _run_entrypoint(tmp_path: Path, env: dict[str, str]) -> tuple[int, dict[str, str], str]:
    """Run docker/offline/run with stand-ins for the JVM launchers; return the config it wrote."""
    home = tmp_path / "kafka"
    (home / "bin").mkdir(parents=True)
    (home / "config").mkdir()
    (home / "VERSION").write_text("test\n")
    for tool in ("kafka-storage.sh", "kafka-server-start.sh"):
        script = home / "bin" / tool
        script.write_text(f'#!/bin/bash\necho "{tool} $*"\n')
        script.chmod(script.stat().st_mode | stat.S_IEXEC)
    full_env = {"PATH": os.environ["PATH"], "KAFKA_HOME": str(home), **env}
    proc = subprocess.run(
        ["bash", str(RUN_SCRIPT)], env=full_env, capture_output=True, text=True, check=False
    )
    config = home / "config" / "server.properties"
    props: dict[str, str] = {}
    if config.exists():
        for line in config.read_text().splitlines():
            key, _, value = line.partition("=")
            props[key] = value
    return proc.returncode, props, proc.stdout + proc.stderr


@pytest.mark.parametrize("node", [0, 3, CONTROLLER_ID])
def test_entrypoint_writes_exactly_the_rendered_properties(tmp_path: Path, node: int) -> None:
    lay = layout()
    env = lay.controller_env() if node == CONTROLLER_ID else lay.broker_env(node)
    rc, props, out = _run_entrypoint(tmp_path, env)
    assert rc == 0, out
    expected = {
        env_to_property(k): v for k, v in env.items() if k.startswith("KAFKA_") and k not in NON_PROPERTY_ENV
    }
    assert props == expected
    assert f"kafka-storage.sh format --ignore-formatted --cluster-id {lay.cluster_id}" in out
    assert "kafka-server-start.sh" in out


def test_entrypoint_rejects_advertised_listeners_on_controller(tmp_path: Path) -> None:
    env = layout().controller_env()
    env["KAFKA_ADVERTISED_LISTENERS"] = "PLAINTEXT://127.0.0.1:1"
    rc, _props, out = _run_entrypoint(tmp_path, env)
    assert rc == 1
    assert "KAFKA_ADVERTISED_LISTENERS is not supported on a KRaft controller." in out


def test_entrypoint_defaults_cluster_id_like_the_official_image(tmp_path: Path) -> None:
    env = layout().broker_env(0)
    del env["CLUSTER_ID"]
    rc, _props, out = _run_entrypoint(tmp_path, env)
    assert rc == 0, out
    assert "--cluster-id 5L6g3nShT-eMCtK--X86sw" in out


# ---------------------------------------------------------------- secured listeners
def test_sasl_ssl_broker_env_with_acls() -> None:
    lay = layout(security="sasl_ssl", acls=True)
    env = lay.broker_env(2)
    listener = "SASL_SSL://127.0.0.1:30002"
    assert env["KAFKA_LISTENERS"] == env["KAFKA_ADVERTISED_LISTENERS"] == listener
    assert env["KAFKA_INTER_BROKER_LISTENER_NAME"] == "SASL_SSL"
    assert env["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"] == "CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL"
    assert env["KAFKA_SASL_ENABLED_MECHANISMS"] == "SCRAM-SHA-512"
    assert env["KAFKA_SASL_MECHANISM_INTER_BROKER_PROTOCOL"] == "SCRAM-SHA-512"
    assert env["KAFKA_OPTS"] == "-Djava.security.auth.login.config=/etc/kafka/secrets/kafka_server_jaas.conf"
    # the official image's SSL contract
    assert env["KAFKA_SSL_KEYSTORE_FILENAME"] == "broker.keystore.p12"
    assert env["KAFKA_SSL_KEYSTORE_CREDENTIALS"] == "keystore.credentials"
    assert env["KAFKA_SSL_KEY_CREDENTIALS"] == "key.credentials"
    assert env["KAFKA_SSL_TRUSTSTORE_TYPE"] == "PEM"
    assert env["KAFKA_AUTHORIZER_CLASS_NAME"] == "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
    assert env["KAFKA_SUPER_USERS"] == "User:admin"
    assert env["KAFKA_ALLOW_EVERYONE_IF_NO_ACL_FOUND"] == "false"
    assert not any("PASSWORD" in k for k in env)  # passwords only in mounted files
    c = lay.controller_env()
    assert c["KAFKA_SUPER_USERS"] == "User:admin;User:ANONYMOUS"
    assert c["KAFKA_LISTENERS"] == "CONTROLLER://127.0.0.1:29999"
    assert lay.controller_properties()["super.users"] == "User:admin;User:ANONYMOUS"


def test_ssl_without_sasl_has_no_jaas_or_authorizer() -> None:
    env = layout(security="ssl").broker_env(0)
    assert env["KAFKA_LISTENERS"] == "SSL://127.0.0.1:30000"
    assert "KAFKA_OPTS" not in env and "KAFKA_AUTHORIZER_CLASS_NAME" not in env
    with pytest.raises(ValueError, match="acls need a SASL listener"):
        layout(security="ssl", acls=True)


def test_replication_capped_by_broker_count() -> None:
    lay = layout(broker_ports={0: 30000}, racks={0: "r1"})
    env = lay.broker_env(0)
    assert env["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"] == "1"
    assert env["KAFKA_TRANSACTION_STATE_LOG_MIN_ISR"] == "1"


def test_entrypoint_renders_secured_env(tmp_path: Path) -> None:
    lay = layout(security="sasl_ssl", acls=True)
    rc, props, out = _run_entrypoint(tmp_path, lay.broker_env(1))
    assert rc == 0, out
    assert props["listeners"] == "SASL_SSL://127.0.0.1:30001"
    assert props["ssl.keystore.location"] == "/etc/kafka/secrets/broker.keystore.p12"
    assert "kafka_opts" not in " ".join(props)


def test_controller_shares_the_group_limits_and_nothing_else_of_the_broker_settings() -> None:
    lay = layout(
        broker_properties={
            "group.consumer.min.session.timeout.ms": "6000",
            "group.consumer.session.timeout.ms": "6000",
            "group.consumer.assignors": "uniform,range,com.example.Plugin",
            "log.retention.ms": "1000",
        }
    )
    props = lay.controller_properties()
    assert props["group.consumer.min.session.timeout.ms"] == "6000"
    assert props["group.consumer.session.timeout.ms"] == "6000"
    # the plugin class exists only in the brokers' image path
    assert "group.consumer.assignors" not in props and "log.retention.ms" not in props


PROXIES = {b: 32000 + b for b in range(6)}
INTERNAL = {b: 33000 + b for b in range(6)}


@pytest.mark.parametrize("security", ["plaintext", "sasl_ssl"])
def test_proxied_brokers_advertise_their_proxy_and_replicate_on_a_direct_listener(security: str) -> None:
    lay = layout(proxy_ports=PROXIES, internal_ports=INTERNAL, security=security)
    name = security.upper()
    assert lay.proxied
    assert lay.bootstrap_servers == ",".join(f"127.0.0.1:{32000 + b}" for b in range(6))
    assert lay.broker_address(2) == "127.0.0.1:30002"  # the proxy's upstream: the broker's own listener
    env = lay.broker_env(2)
    assert env["KAFKA_LISTENERS"] == f"{name}://127.0.0.1:30002,BROKER://127.0.0.1:33002"
    assert env["KAFKA_ADVERTISED_LISTENERS"] == f"{name}://127.0.0.1:32002,BROKER://127.0.0.1:33002"
    assert env["KAFKA_INTER_BROKER_LISTENER_NAME"] == "BROKER"
    assert env["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"] == f"CONTROLLER:PLAINTEXT,{name}:{name},BROKER:{name}"
    assert lay.controller_env()["KAFKA_LISTENERS"] == "CONTROLLER://127.0.0.1:29999"


def test_unproxied_layout_has_one_listener_as_before() -> None:
    lay = layout()
    assert not lay.proxied
    assert lay.client_address(3) == lay.broker_address(3) == "127.0.0.1:30003"
    assert "BROKER" not in lay.broker_env(3)["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"]


@pytest.mark.parametrize(
    ("kw", "error", "message"),
    [
        (
            {"proxy_ports": PROXIES},
            InvalidArgumentError,
            r"needs both proxy_ports \(\{0: 32000, .*\) and internal_ports \(\{\}\)",
        ),
        (
            {"proxy_ports": {0: 32000}, "internal_ports": INTERNAL},
            InvalidArgumentError,
            r"with proxy_ports \[0\] differ",
        ),
        (
            {"proxy_ports": {**PROXIES, 5: 30001}, "internal_ports": INTERNAL},
            ValueError,
            "ports must be distinct",
        ),
    ],
)
def test_proxied_layout_validation(kw: dict[str, object], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        layout(**kw)


def test_proxied_entrypoint_writes_both_listeners(tmp_path: Path) -> None:
    env = layout(proxy_ports=PROXIES, internal_ports=INTERNAL).broker_env(1)
    rc, props, out = _run_entrypoint(tmp_path, env)
    assert rc == 0, out
    assert props["advertised.listeners"] == "PLAINTEXT://127.0.0.1:32001,BROKER://127.0.0.1:33001"
    assert props["inter.broker.listener.name"] == "BROKER"
