"""Connection settings: Java .properties in, each client's configuration out; secrets never shown;
the pre-flight probe's one-line diagnoses (against sockets that behave like a wrong listener)."""

from __future__ import annotations

import datetime
import logging
import socket
import ssl
import threading
import time
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

from kafka_placement.clients.connection import (
    ConnectionSettings,
    check_connection,
    connection_settings,
    masked,
    parse_jaas,
    read_properties,
)
from kafka_placement.errors import ConnectionFailedError, ConnectionSettingsError

SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"


def _ca(tmp_path: Path) -> tuple[Path, x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-ca")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = tmp_path / "ca.pem"
    pem.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return pem, cert, key


def test_properties_file_java_syntax(tmp_path: Path) -> None:
    """Escapes, continuation lines, ':' and blank separators, comments — as java.util.Properties reads."""
    f = tmp_path / "client.properties"
    f.write_text(
        "# comment\n! other comment\n"
        "security.protocol = SASL_SSL\n"
        "sasl.mechanism:SCRAM-SHA-512\n"
        f'sasl.jaas.config={SCRAM} required \\\n    username="alice" \\\n    password="p\\\\w=d";\n'
        "ssl.truststore.location /etc/ca.pem\n"
        "client.id=caf\\u00e9\n"
    )
    assert read_properties(str(f)) == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": f'{SCRAM} required username="alice" password="p\\w=d";',
        "ssl.truststore.location": "/etc/ca.pem",
        "client.id": "café",
    }


def test_jaas_parsing_and_credentials() -> None:
    module, options = parse_jaas(f'{SCRAM} required username="al\\"ice" password="s3 cr=t";')
    assert module == SCRAM and options == {"username": 'al"ice', "password": "s3 cr=t"}
    s = ConnectionSettings(
        "h:1",
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": f'{PLAIN} required username="u" password="p";',
        },
    )
    assert s.credentials() == ("u", "p")
    wrong = ConnectionSettings(
        "h:1",
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": f'{SCRAM} required username="u" password="p";',
        },
    )
    with pytest.raises(ConnectionSettingsError, match=r"does not serve sasl\.mechanism=PLAIN"):
        wrong.credentials()


def test_every_client_gets_the_same_cluster(tmp_path: Path) -> None:
    ca, _, _ = _ca(tmp_path)
    s = connection_settings(
        "b1:9093,b2:9093",
        overrides=[
            "security.protocol=SASL_SSL",
            "sasl.mechanism=SCRAM-SHA-512",
            f'sasl.jaas.config={SCRAM} required username="alice" password="pw";',
            f"ssl.truststore.location={ca}",
            "ssl.truststore.type=PEM",
            "client.id=me",
        ],
    )
    kp = s.kafka_python()
    assert kp["bootstrap_servers"] == ["b1:9093", "b2:9093"]
    assert (kp["security_protocol"], kp["sasl_mechanism"]) == ("SASL_SSL", "SCRAM-SHA-512")
    assert (kp["sasl_plain_username"], kp["sasl_plain_password"], kp["ssl_cafile"]) == (
        "alice",
        "pw",
        str(ca),
    )
    assert kp["ssl_check_hostname"] is True and kp["client_id"] == "me"
    assert s.confluent() == {
        "logger": logging.getLogger("kafka_placement.librdkafka"),
        "bootstrap.servers": "b1:9093,b2:9093",
        "security.protocol": "SASL_SSL",
        "client.id": "me",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "alice",
        "sasl.password": "pw",
        "ssl.endpoint.identification.algorithm": "https",
        "ssl.ca.location": str(ca),
    }
    aio = s.aiokafka()
    assert isinstance(aio["ssl_context"], ssl.SSLContext) and aio["sasl_plain_password"] == "pw"
    spark = s.spark_options()
    assert spark["kafka.bootstrap.servers"] == "b1:9093,b2:9093"
    assert spark["kafka.sasl.jaas.config"].endswith('password="pw";')
    assert spark["kafka.ssl.truststore.location"] == str(ca)


def test_librdkafka_spellings_become_java_for_spark(tmp_path: Path) -> None:
    ca, _, _ = _ca(tmp_path)
    s = ConnectionSettings(
        "h:1",
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "PLAIN",
            "sasl.username": 'u"1',
            "sasl.password": "p\\2",
            "ssl.ca.location": str(ca),
            "ssl.endpoint.identification.algorithm": "",
        },
    )
    opts = s.spark_options()
    assert opts["kafka.sasl.jaas.config"] == f'{PLAIN} required username="u\\"1" password="p\\\\2";'
    assert (opts["kafka.ssl.truststore.location"], opts["kafka.ssl.truststore.type"]) == (str(ca), "PEM")
    assert s.confluent()["ssl.endpoint.identification.algorithm"] == "none"
    assert s.kafka_python()["ssl_check_hostname"] is False


def test_pkcs12_truststore_is_converted_with_cryptography(tmp_path: Path) -> None:
    _, cert, _key = _ca(tmp_path)
    store = tmp_path / "trust.p12"
    store.write_bytes(
        pkcs12.serialize_key_and_certificates(
            b"ca", None, cert, None, serialization.BestAvailableEncryption(b"changeit")
        )
    )
    s = ConnectionSettings(
        "h:1",
        {
            "security.protocol": "SSL",
            "ssl.truststore.location": str(store),
            "ssl.truststore.type": "PKCS12",
            "ssl.truststore.password": "changeit",
        },
    )
    pem = Path(s.kafka_python()["ssl_cafile"])
    assert x509.load_pem_x509_certificate(pem.read_bytes()) == cert
    assert pem.stat().st_mode & 0o077 == 0
    bad = ConnectionSettings("h:1", {**s.properties, "ssl.truststore.password": "s3cret-x"})
    with pytest.raises(ConnectionSettingsError, match="cannot be opened as PKCS12") as info:
        bad.kafka_python()
    assert "s3cret-x" not in str(info.value)


def test_pkcs12_keystore_gives_client_certificate_files(tmp_path: Path) -> None:
    _, cert, key = _ca(tmp_path)
    store = tmp_path / "client.p12"
    store.write_bytes(
        pkcs12.serialize_key_and_certificates(
            b"me", key, cert, None, serialization.BestAvailableEncryption(b"kpw")
        )
    )
    s = ConnectionSettings(
        "h:1",
        {
            "security.protocol": "SSL",
            "ssl.keystore.location": str(store),
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.password": "kpw",
        },
    )
    kp = s.kafka_python()
    chain = x509.load_pem_x509_certificate(Path(kp["ssl_certfile"]).read_bytes())
    loaded = serialization.load_pem_private_key(Path(kp["ssl_keyfile"]).read_bytes(), b"kpw")
    assert chain == cert and kp["ssl_password"] == "kpw"
    assert loaded.public_key().public_numbers() == key.public_key().public_numbers()  # type: ignore[attr-defined]


def test_jks_is_refused_with_the_conversion_command(tmp_path: Path) -> None:
    store = tmp_path / "truststore.jks"
    store.write_bytes(b"\xfe\xed\xfe\xed")
    s = ConnectionSettings("h:1", {"security.protocol": "SSL", "ssl.truststore.location": str(store)})
    with pytest.raises(ConnectionSettingsError, match=r"keytool -importkeystore .* -deststoretype PKCS12"):
        s.confluent()
    assert s.spark_options()["kafka.ssl.truststore.location"] == str(store)  # Java reads JKS itself


@pytest.mark.parametrize(
    ("props", "message"),
    [
        (
            {"security.protocol": "TLS"},
            "security.protocol must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL",
        ),
        ({"security.protocol": "SASL_SSL", "sasl.mechanism": "MD5"}, "sasl.mechanism must be one of"),
        ({"ssl.enabled.protocols": "TLSv1.3"}, "kafka-python cannot honour setting(s) ssl.enabled.protocols"),
        ({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"}, "OAUTHBEARER"),
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, "needs sasl.jaas.config"),
    ],
)
def test_settings_a_client_cannot_honour_are_errors(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConnectionSettingsError) as info:
        ConnectionSettings("h:1", props).kafka_python()
    assert message in str(info.value)


@pytest.mark.parametrize("servers", ["", "nohost", "h:0", "h:99999", "h:1,", "h:x"])
def test_bad_bootstrap_servers(servers: str) -> None:
    with pytest.raises(ConnectionSettingsError):
        ConnectionSettings(servers)


def test_secrets_never_in_repr_or_masked_views() -> None:
    s = ConnectionSettings(
        "h:1",
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": f'{PLAIN} required username="u" password="hunter2";',
            "ssl.key.password": "hunter3",
            "sasl.password": "hunter4",
        },
    )
    assert "hunter" not in repr(s) and "hunter" not in s.describe()
    assert all("hunter" not in str(v) for v in masked(s.confluent()).values())


def test_write_properties_round_trip(tmp_path: Path) -> None:
    s = ConnectionSettings(
        "h:1",
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": f'{PLAIN} required username="ü" password="p=1";',
        },
    )
    path = s.write_properties(tmp_path / "c.properties")
    assert path.stat().st_mode & 0o777 == 0o600
    again = connection_settings(command_config=str(path))
    assert again == s


def test_missing_and_oversized_properties_file(tmp_path: Path) -> None:
    with pytest.raises(ConnectionSettingsError, match="cannot be read"):
        read_properties(str(tmp_path / "nope.properties"))
    with pytest.raises(ConnectionSettingsError, match="is not a file"):
        read_properties(str(tmp_path))
    big = tmp_path / "big.properties"
    big.write_bytes(b"a=" + b"x" * (1024 * 1024))
    with pytest.raises(ConnectionSettingsError, match="at most 1048576 bytes"):
        read_properties(str(big))


# --- the probe against sockets that behave like a wrong listener -----------------------------------------


def _server(handler: str) -> tuple[socket.socket, int]:
    """A loopback listener that closes every connection at once ("close") or never answers ("silent")."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)

    def loop() -> None:
        held = []
        try:
            while True:
                try:
                    conn, _ = srv.accept()
                except OSError:
                    return
                if handler == "close":
                    conn.recv(1024)
                    conn.close()
                else:
                    held.append(conn)
        finally:  # the listener was closed: so are the connections it held open
            for conn in held:
                conn.close()

    threading.Thread(target=loop, daemon=True).start()
    return srv, srv.getsockname()[1]


def test_probe_refused_is_one_clear_line_within_seconds() -> None:
    t0 = time.monotonic()
    with pytest.raises(ConnectionFailedError, match=r"127.0.0.1:1 \(PLAINTEXT\): connection refused"):
        check_connection(ConnectionSettings("127.0.0.1:1", timeout_s=10))
    assert time.monotonic() - t0 < 8


def test_probe_listener_closing_at_first_request() -> None:
    srv, port = _server("close")
    try:
        t0 = time.monotonic()
        with pytest.raises(ConnectionFailedError, match="closed the connection at our first request"):
            check_connection(ConnectionSettings(f"127.0.0.1:{port}", timeout_s=10))
        assert time.monotonic() - t0 < 8
    finally:
        srv.close()


def test_probe_tls_client_on_a_plaintext_listener() -> None:
    srv, port = _server("close")
    try:
        t0 = time.monotonic()
        with pytest.raises(ConnectionFailedError, match="does not seem to speak TLS"):
            settings = ConnectionSettings(f"127.0.0.1:{port}", {"security.protocol": "SSL"}, timeout_s=10)
            check_connection(settings)
        assert time.monotonic() - t0 < 8
    finally:
        srv.close()


def test_probe_silent_listener_times_out_on_the_timeout() -> None:
    srv, port = _server("silent")
    try:
        t0 = time.monotonic()
        with pytest.raises(ConnectionFailedError, match="no broker answered within 2 s"):
            check_connection(ConnectionSettings(f"127.0.0.1:{port}", timeout_s=2))
        assert time.monotonic() - t0 < 5
    finally:
        srv.close()


# librdkafka reports how long the connection was up before the peer closed it; the count depends on
# how busy the machine is, the diagnosis must not.
_SASL_SSL_CLOSE = (
    "sasl_ssl://127.0.0.1:{port}/bootstrap: SSL connection closed by peer (after {ms}ms in state UP{tail})"
)


@pytest.mark.parametrize(
    ("ms", "tail"), [(0, ""), (1, ""), (37, ", 1 identical error(s) suppressed"), (2048, "")]
)
def test_a_tls_client_on_a_sasl_listener_is_diagnosed_however_long_the_close_took(ms: int, tail: str) -> None:
    from kafka_placement.clients.connection.probe import diagnose

    settings = ConnectionSettings("127.0.0.1:9094", {"security.protocol": "SSL"})
    verdict = diagnose([_SASL_SSL_CLOSE.format(port=9094, ms=ms, tail=tail)], settings)
    assert "the listener expects SASL" in verdict, verdict


def test_a_plaintext_disconnect_in_state_up_is_not_taken_for_sasl() -> None:
    from kafka_placement.clients.connection.probe import diagnose

    settings = ConnectionSettings("127.0.0.1:9092", {})
    verdict = diagnose(["127.0.0.1:9092/1: Disconnected (after 5012ms in state UP)"], settings)
    assert "SASL" not in verdict, verdict


def test_probe_tls_client_on_a_silent_listener_is_not_told_the_port_speaks_no_tls() -> None:
    """A handshake that timed out (an overloaded broker, a proxy holding bytes) proves nothing about the
    port: once, a soak's ``reassign plan`` at load average 200 was told a SASL_SSL listener "does not seem
    to speak TLS"."""
    srv, port = _server("silent")
    try:
        t0 = time.monotonic()
        settings = ConnectionSettings(f"127.0.0.1:{port}", {"security.protocol": "SSL"}, timeout_s=4)
        with pytest.raises(ConnectionFailedError) as failed:
            check_connection(settings)
        verdict = str(failed.value)
        assert "did not finish in time" in verdict or "no broker answered within 4 s" in verdict, verdict
        assert "does not seem to speak TLS" not in verdict
        assert 3.5 < time.monotonic() - t0 < 8  # kept trying until its timeout
    finally:
        srv.close()


# What librdkafka 2.16 reports when a plaintext listener cuts a TLS handshake (the peer resets it).
_CUT = (
    "ssl://127.0.0.1:9093/bootstrap: SSL handshake failed: Disconnected: connection reset by peer: "
    "connecting to a PLAINTEXT broker listener? (after {ms}ms in state SSL_HANDSHAKE)"
)
_TIMED_OUT = (
    "ssl://127.0.0.1:9093/bootstrap: Connection setup timed out in state SSL_HANDSHAKE "
    "(after 3027ms in state SSL_HANDSHAKE)"
)


@pytest.mark.parametrize("cuts", [1, 2])
def test_a_handshake_cut_once_or_twice_is_not_yet_a_verdict(cuts: int) -> None:
    from kafka_placement.clients.connection.probe import HANDSHAKES_CUT_FOR_VERDICT, diagnose

    assert cuts < HANDSHAKES_CUT_FOR_VERDICT
    settings = ConnectionSettings("127.0.0.1:9093", {"security.protocol": "SSL"})
    verdict = diagnose([_CUT.format(ms=ms) for ms in range(cuts)], settings)
    assert f"cut off ({cuts} time(s))" in verdict and "does not seem to speak TLS" not in verdict, verdict


def test_every_handshake_cut_is_a_plaintext_listener() -> None:
    from kafka_placement.clients.connection.probe import HANDSHAKES_CUT_FOR_VERDICT, diagnose

    settings = ConnectionSettings("127.0.0.1:9093", {"security.protocol": "SSL"})
    verdict = diagnose([_CUT.format(ms=ms) for ms in range(HANDSHAKES_CUT_FOR_VERDICT)], settings)
    assert "does not seem to speak TLS" in verdict, verdict


def test_a_timed_out_handshake_outweighs_cut_ones() -> None:
    from kafka_placement.clients.connection.probe import diagnose

    settings = ConnectionSettings("127.0.0.1:9093", {"security.protocol": "SSL"})
    verdict = diagnose([_CUT.format(ms=1), _TIMED_OUT, _CUT.format(ms=2), _CUT.format(ms=3)], settings)
    assert "did not finish in time" in verdict, verdict


def test_bytes_that_are_not_tls_are_a_verdict_at_once() -> None:
    from kafka_placement.clients.connection.probe import diagnose

    settings = ConnectionSettings("127.0.0.1:9093", {"security.protocol": "SSL"})
    message = (
        "ssl://127.0.0.1:9093/bootstrap: SSL handshake failed: "
        "error:0A00010B:SSL routines::wrong version number"
    )
    assert "does not seem to speak TLS" in diagnose([message], settings)


def test_handshakes_cut_by_one_of_several_brokers_are_not_a_verdict() -> None:
    """The secured soak of session 32: one killed broker behind a proxy that accepts and then resets cut
    three handshakes within seconds while the other brokers spoke TLS; "does not seem to speak TLS" was
    final, and the reassignment never started."""
    from kafka_placement.clients.connection.probe import HANDSHAKES_CUT_FOR_VERDICT, diagnose

    settings = ConnectionSettings(
        "127.0.0.1:9093,127.0.0.1:9094,127.0.0.1:9095", {"security.protocol": "SSL"}
    )
    one = [_CUT.format(ms=ms) for ms in range(HANDSHAKES_CUT_FOR_VERDICT + 2)]  # all from 127.0.0.1:9093
    verdict = diagnose(one, settings)
    assert "cut off (5 time(s))" in verdict and "does not seem to speak TLS" not in verdict, verdict
    two = [*one, _CUT.format(ms=9).replace(":9093/", ":9094/")]  # a second broker cuts too: the port
    assert "does not seem to speak TLS" in diagnose(two, settings)


# What librdkafka 2.16 logs when a broker closes a plaintext client's connection at its first request,
# and what its error callback then reports (the same address, quoted inside the KafkaError).
_CLOSED = "plaintext://127.0.0.1:9093/bootstrap: Connection closed by peer: receive 0 after POLLIN"
_CLOSED_REPORTED = (
    'KafkaError{code=_TRANSPORT,val=-195,str="plaintext://127.0.0.1:9093/bootstrap: Disconnected while '
    "requesting ApiVersion: might be caused by incorrect security.protocol configuration (connecting to a "
    "SSL listener?) or broker version is < 0.10 (see api.version.request) (after 0ms in state "
    'APIVERSION_QUERY)"}'
)


def test_connections_closed_by_one_of_several_brokers_are_not_a_verdict() -> None:
    """The PLAINTEXT soak of seed 51: at load average 200, with one broker's link resetting, ``reassign
    plan`` was told at once that "the broker closed the connection at our first request" (a plaintext
    client on a TLS or SASL listener?) and the reassignment never started."""
    from kafka_placement.clients.connection.probe import _FINAL, diagnose

    settings = ConnectionSettings("127.0.0.1:9093,127.0.0.1:9094,127.0.0.1:9095")
    one = [_CLOSED, _CLOSED_REPORTED, _CLOSED]
    verdict = diagnose(one, settings)
    assert "one broker closed connections at the first request (3 time(s))" in verdict, verdict
    assert not any(final in verdict for final in _FINAL), verdict  # the probe keeps trying
    two = [*one, _CLOSED.replace(":9093/", ":9095/")]  # a second broker closes too: the listener
    assert "closed the connection at our first request" in diagnose(two, settings)
    only = ConnectionSettings("127.0.0.1:9093")  # the only address there is
    assert "closed the connection at our first request" in diagnose([_CLOSED], only)
