"""A throwaway certificate authority and broker certificate for the secured test cluster.

Generated with ``cryptography`` at cluster start: an EC P-256 CA (self-signed, ``CA:TRUE``) and one
broker certificate it signs, valid for ``127.0.0.1`` and ``localhost`` (every broker listens on
127.0.0.1, so one certificate serves them all; Java clients verify the IP SAN with their default
``ssl.endpoint.identification.algorithm=https``). The broker key and chain are written as a PKCS12
keystore (Kafka's default keystore type); the CA certificate as PEM, which Kafka
(``ssl.truststore.type=PEM``), librdkafka (``ssl.ca.location``) and kafka-python (``ssl_cafile``)
all read.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

#: Names every broker certificate is valid for (the harness only ever binds loopback).
BROKER_DNS_NAMES = ("localhost",)
BROKER_IP_ADDRESSES = ("127.0.0.1",)
#: Long enough for a dev cluster left up for weeks; short enough to be obviously throwaway.
VALIDITY = datetime.timedelta(days=90)


@dataclass(frozen=True)
class TlsMaterial:
    """A CA and the broker certificate it issued (PEM bytes), plus the broker key object."""

    ca_cert: x509.Certificate
    broker_cert: x509.Certificate
    broker_key: ec.EllipticCurvePrivateKey

    @property
    def ca_pem(self) -> bytes:
        return self.ca_cert.public_bytes(serialization.Encoding.PEM)

    @property
    def broker_cert_pem(self) -> bytes:
        return self.broker_cert.public_bytes(serialization.Encoding.PEM)

    def broker_pkcs12(self, password: str) -> bytes:
        """The broker key + certificate chain (broker, CA) as a password-protected PKCS12 keystore."""
        return pkcs12.serialize_key_and_certificates(
            name=b"broker",
            key=self.broker_key,
            cert=self.broker_cert,
            cas=[self.ca_cert],
            encryption_algorithm=serialization.BestAvailableEncryption(password.encode("ascii")),
        )

    def __repr__(self) -> str:  # never show key material
        return f"TlsMaterial(ca={self.ca_cert.subject.rfc4514_string()!r})"


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kafka-placement test cluster"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def generate_tls_material(cluster_name: str, *, now: datetime.datetime | None = None) -> TlsMaterial:
    """A fresh CA and a broker certificate for ``127.0.0.1``/``localhost`` signed by it."""
    now = now or datetime.datetime.now(datetime.UTC)
    not_before = now - datetime.timedelta(minutes=5)  # tolerate small clock differences
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name(f"kafka-placement CA {cluster_name}")
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    broker_key = ec.generate_private_key(ec.SECP256R1())
    san = x509.SubjectAlternativeName(
        [x509.DNSName(d) for d in BROKER_DNS_NAMES]
        + [x509.IPAddress(ipaddress.ip_address(ip)) for ip in BROKER_IP_ADDRESSES]
    )
    broker_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("localhost"))
        .issuer_name(ca_name)
        .public_key(broker_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=True,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        # Brokers are TLS clients of each other too (inter-broker traffic uses the same listener).
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
            critical=False,
        )
        .add_extension(san, critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return TlsMaterial(ca_cert=ca_cert, broker_cert=broker_cert, broker_key=broker_key)


def write_private(path: Path, data: bytes, mode: int = 0o644) -> Path:
    """Write ``data`` to ``path`` with ``mode`` (the containers' user must be able to read it)."""
    path.write_bytes(data)
    path.chmod(mode)
    return path
