"""Client settings and .properties rendering of the secured test cluster (expected values written
out by hand from Kafka's client property names and librdkafka's / kafka-python's option names)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.testing.security import (
    ClusterSecurity,
    parse_security,
    render_properties,
    write_client_properties,
)

BOOT = "127.0.0.1:1,127.0.0.1:2"
CA = Path("/x/ca.pem")
SEC = ClusterSecurity(protocol="sasl_ssl", users={"admin": "pw0admin", "alice": "pw1alice"}, acls=True)


@pytest.mark.parametrize(
    ("raw", "norm"),
    [
        ("SASL_SSL", "sasl_ssl"),
        ("sasl-plaintext", "sasl_plaintext"),
        (" ssl ", "ssl"),
        ("PLAINTEXT", "plaintext"),
    ],
)
def test_parse_security(raw: str, norm: str) -> None:
    assert parse_security(raw) == norm


def test_parse_security_rejects_with_the_allowed_values() -> None:
    allowed = "plaintext, ssl, sasl_plaintext, sasl_ssl"
    with pytest.raises(InvalidArgumentError, match=f"'tls' is not one of {allowed}"):
        parse_security("tls")


def test_create_random_users_and_hidden_repr() -> None:
    a, b = ClusterSecurity.create("sasl_ssl"), ClusterSecurity.create("sasl_ssl")
    assert set(a.users) == {"admin", "alice"}
    assert a.users["admin"] != b.users["admin"] and a.users["admin"] != a.users["alice"]
    for pw in a.users.values():
        assert len(pw) == 32 and pw not in repr(a)
    assert ClusterSecurity.create("ssl").users == {}


def test_acls_need_sasl() -> None:
    with pytest.raises(InvalidArgumentError, match="acls need a SASL listener"):
        ClusterSecurity.create("ssl", acls=True)


def test_java_client_settings_sasl_ssl() -> None:
    assert SEC.java_client_settings(BOOT, CA, "alice") == {
        "bootstrap.servers": BOOT,
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="alice" password="pw1alice";',
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": "/x/ca.pem",
    }
    assert 'username="admin"' in SEC.java_client_settings(BOOT, CA)["sasl.jaas.config"]


def test_other_client_flavours() -> None:
    assert SEC.kafka_python_settings(BOOT, CA, "alice") == {
        "bootstrap_servers": BOOT,
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "alice",
        "sasl_plain_password": "pw1alice",
        "ssl_cafile": "/x/ca.pem",
        "ssl_check_hostname": True,
    }
    assert SEC.librdkafka_settings(BOOT, CA, "alice") == {
        "bootstrap.servers": BOOT,
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "alice",
        "sasl.password": "pw1alice",
        "ssl.ca.location": "/x/ca.pem",
    }
    plain = ClusterSecurity()
    assert plain.java_client_settings(BOOT, None) == {
        "bootstrap.servers": BOOT,
        "security.protocol": "PLAINTEXT",
    }
    sasl_plain = ClusterSecurity("sasl_plaintext", users={"admin": "a1"})
    assert "ssl.truststore.location" not in sasl_plain.java_client_settings(BOOT, None)


def test_unknown_user() -> None:
    with pytest.raises(InvalidArgumentError, match=r"user 'bob' not in \['admin', 'alice'\]"):
        SEC.java_client_settings(BOOT, CA, "bob")


def test_render_properties_escapes_like_java_properties() -> None:
    text = render_properties({"b.key": "C:\\dir\\ca.pem", "a key": " lead", "c": 'x="1";'}, "head\nline")
    assert text == ('# head\n# line\na\\ key=\\ lead\nb.key=C:\\\\dir\\\\ca.pem\nc=x="1";\n')


def test_written_file_is_private(tmp_path: Path) -> None:
    path = write_client_properties(tmp_path / "sub" / "c.properties", {"k": "v"})
    assert path.read_text() == "k=v\n"
    assert path.stat().st_mode & 0o777 == 0o600
