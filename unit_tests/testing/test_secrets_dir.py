"""The secured cluster's secrets directory and the redaction of container output."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives.serialization import pkcs12

from kafka_placement.testing.cluster import redact
from kafka_placement.testing.layout import ClusterLayout, new_cluster_id
from kafka_placement.testing.secrets_dir import (
    ENTRY_SCRIPT_TEXT,
    prepare_secrets_dir,
    read_scram_users,
    remove_secrets_dir,
)
from kafka_placement.testing.security import ClusterSecurity


def _layout(security: str, acls: bool = False) -> ClusterLayout:
    return ClusterLayout(
        cluster_id=new_cluster_id(),
        controller_port=29999,
        broker_ports={0: 30000, 1: 30001},
        racks={0: "a", 1: "b"},
        security=security,
        acls=acls,
    )


def test_sasl_ssl_directory(tmp_path: Path) -> None:
    sec = ClusterSecurity.create("sasl_ssl", acls=True)
    d = tmp_path / "s"
    material = prepare_secrets_dir(d, _layout("sasl_ssl", True), sec, "c1")
    assert material is not None
    assert sorted(p.name for p in d.iterdir()) == sorted(
        [
            ".kafka-placement-secrets",
            "ca.pem",
            "broker.keystore.p12",
            "keystore.credentials",
            "key.credentials",
            "kafka_server_jaas.conf",
            "scram-users",
            "controller.properties",
            "kp-start.sh",
        ]
    )
    password = (d / "keystore.credentials").read_text()
    _key, cert, cas = pkcs12.load_key_and_certificates(
        (d / "broker.keystore.p12").read_bytes(), password.encode()
    )
    ca = x509.load_pem_x509_certificate((d / "ca.pem").read_bytes())
    assert cert == material.broker_cert and cas == [ca]
    assert read_scram_users(d) == dict(sec.users)
    jaas = (d / "kafka_server_jaas.conf").read_text()
    assert jaas.startswith(
        "KafkaServer {\n    org.apache.kafka.common.security.scram.ScramLoginModule required"
    )
    assert f'username="admin" password="{sec.users["admin"]}";' in jaas
    props = (d / "controller.properties").read_text()
    assert "process.roles=controller" in props
    assert "super.users=User:admin;User:ANONYMOUS" in props
    assert remove_secrets_dir(d) and not d.exists()


def test_ssl_directory_has_no_sasl_files(tmp_path: Path) -> None:
    prepare_secrets_dir(tmp_path, _layout("ssl"), ClusterSecurity.create("ssl"), "c2")
    names = {p.name for p in tmp_path.iterdir()}
    assert "ca.pem" in names and "scram-users" not in names and "kafka_server_jaas.conf" not in names


def test_remove_refuses_a_foreign_directory(tmp_path: Path) -> None:
    (tmp_path / "keep").write_text("x")
    assert not remove_secrets_dir(tmp_path)
    assert (tmp_path / "keep").exists()


def test_entry_script_is_valid_bash() -> None:
    proc = subprocess.run(
        ["bash", "-n"], input=ENTRY_SCRIPT_TEXT, text=True, capture_output=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "exec /etc/kafka/docker/run" in ENTRY_SCRIPT_TEXT
    assert "--add-scram" in ENTRY_SCRIPT_TEXT
    assert "SCRAM-SHA-512=[name=$user,password=$password]" in ENTRY_SCRIPT_TEXT


def test_redact_hides_password_values() -> None:
    text = (
        "     ssl.keystore.password=abc123\n\tssl.key.password = [hidden]\n"
        'listener.name.x.sasl.jaas.config=Scram required password="p";\nbroker.rack=r1\n'
    )
    out = redact(text)
    assert "abc123" not in out and 'password="p"' not in out
    assert "broker.rack=r1" in out and "ssl.keystore.password=[hidden]" in out
