"""The throwaway CA and broker certificate, checked independently of the code that made them:
cryptography's own verifier, a real TLS handshake through Python's ``ssl`` module, and Java's
``keytool`` reading the PKCS12 keystore."""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import ssl
import subprocess
import threading
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.verification import PolicyBuilder, Store

from kafka_placement.testing.tls import TlsMaterial, generate_tls_material


@pytest.fixture(scope="module")
def material() -> TlsMaterial:
    return generate_tls_material("unit")


def test_sans_and_ca_flags(material: TlsMaterial) -> None:
    san = material.broker_cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]
    assert san.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    assert material.ca_cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert not material.broker_cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost"])
def test_chain_verifies_with_cryptography(material: TlsMaterial, name: str) -> None:
    builder = PolicyBuilder().store(Store([material.ca_cert]))
    subject: x509.IPAddress | x509.DNSName = (
        x509.IPAddress(ipaddress.ip_address(name)) if name[0].isdigit() else x509.DNSName(name)
    )
    verifier = builder.build_server_verifier(subject)
    chain = verifier.verify(material.broker_cert, [])
    assert chain[-1] == material.ca_cert


def test_other_ca_does_not_verify(material: TlsMaterial) -> None:
    other = generate_tls_material("other")
    verifier = PolicyBuilder().store(Store([other.ca_cert])).build_server_verifier(x509.DNSName("localhost"))
    with pytest.raises(x509.verification.VerificationError):
        verifier.verify(material.broker_cert, [])


def _serve_once(material: TlsMaterial, tmp_path: Path) -> tuple[int, threading.Thread]:
    key = tmp_path / "key.pem"
    key.write_bytes(
        material.broker_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    cert = tmp_path / "cert.pem"
    cert.write_bytes(material.broker_cert_pem + material.ca_pem)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        with listener:
            listener.settimeout(10)
            conn, _ = listener.accept()
            try:
                with ctx.wrap_socket(conn, server_side=True) as tls:
                    tls.sendall(b"ok")
            except (ssl.SSLError, OSError):
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return port, thread


@pytest.mark.parametrize("server_name", ["127.0.0.1", "localhost"])
def test_tls_handshake_with_python_ssl(material: TlsMaterial, tmp_path: Path, server_name: str) -> None:
    port, thread = _serve_once(material, tmp_path)
    ca = tmp_path / "ca.pem"
    ca.write_bytes(material.ca_pem)
    client = ssl.create_default_context(cafile=str(ca))  # check_hostname=True, CERT_REQUIRED
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        client.wrap_socket(raw, server_hostname=server_name) as tls,
    ):
        assert tls.recv(2) == b"ok"
    thread.join(10)


def test_tls_handshake_refused_without_the_ca(material: TlsMaterial, tmp_path: Path) -> None:
    port, thread = _serve_once(material, tmp_path)
    client = ssl.create_default_context()  # system CAs only
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        pytest.raises(ssl.SSLCertVerificationError),
    ):
        client.wrap_socket(raw, server_hostname="127.0.0.1")
    thread.join(10)


def test_pkcs12_keystore_round_trip(material: TlsMaterial) -> None:
    data = material.broker_pkcs12("s3cret")
    key, cert, cas = pkcs12.load_key_and_certificates(data, b"s3cret")
    assert cert == material.broker_cert
    assert cas == [material.ca_cert]
    assert key is not None and key.public_key() == material.broker_key.public_key()
    with pytest.raises(ValueError):
        pkcs12.load_key_and_certificates(data, b"wrong")


def test_java_keytool_reads_the_keystore(material: TlsMaterial, tmp_path: Path) -> None:
    keytool = shutil.which("keytool") or (
        str(Path(os.environ["JAVA_HOME"]) / "bin" / "keytool") if "JAVA_HOME" in os.environ else None
    )
    if keytool is None or not Path(keytool).exists():
        pytest.skip("no keytool (JDK) on this machine")
    store = tmp_path / "broker.p12"
    store.write_bytes(material.broker_pkcs12("s3cret"))
    out = subprocess.run(
        [keytool, "-list", "-v", "-storetype", "PKCS12", "-keystore", str(store), "-storepass", "s3cret"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert "Entry type: PrivateKeyEntry" in out.stdout
    assert "Certificate chain length: 2" in out.stdout
    assert "IPAddress: 127.0.0.1" in out.stdout and "DNSName: localhost" in out.stdout


def test_repr_hides_key_material(material: TlsMaterial) -> None:
    assert "PRIVATE" not in repr(material) and "BEGIN" not in repr(material)
