"""Security of the test cluster's client listener and the client settings that reach it (pure, no I/O
except :func:`write_client_properties`).

``plaintext`` | ``ssl`` | ``sasl_plaintext`` | ``sasl_ssl`` (Kafka's ``security.protocol`` values in
lower case). SASL uses SCRAM-SHA-512 with users created when the controller's storage is formatted:
``admin`` (a super user; brokers use it for inter-broker traffic) and ``alice`` (ordinary: with ACLs
on she may do only what tests grant her). Passwords are random per cluster and never appear in a
repr, log line or exception message.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kafka_placement.errors import InvalidArgumentError

SECURITY_PROTOCOLS = ("plaintext", "ssl", "sasl_plaintext", "sasl_ssl")
SASL_MECHANISM = "SCRAM-SHA-512"
ADMIN_USER = "admin"
ORDINARY_USER = "alice"
#: Kafka's SCRAM login module (the ``sasl.jaas.config`` a Java client needs).
SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
#: File names inside the secrets directory (mounted read-only at ``/etc/kafka/secrets``).
CA_PEM = "ca.pem"
KEYSTORE_P12 = "broker.keystore.p12"


def parse_security(value: str) -> str:
    """``SASL_SSL`` / ``sasl-ssl`` / ``sasl_ssl`` → ``sasl_ssl``; anything else is an error."""
    norm = value.strip().lower().replace("-", "_")
    if norm not in SECURITY_PROTOCOLS:
        raise InvalidArgumentError(f"security {value!r} is not one of {', '.join(SECURITY_PROTOCOLS)}")
    return norm


def new_password() -> str:
    """32 hex characters: no character SCRAM, JAAS or a .properties file would need escaped."""
    return secrets.token_hex(16)


@dataclass(frozen=True)
class ClusterSecurity:
    """The client listener's protocol, SCRAM users (name → password) and whether ACLs are enforced."""

    protocol: str = "plaintext"
    users: Mapping[str, str] = field(default_factory=dict, repr=False)
    acls: bool = False

    def __post_init__(self) -> None:
        if self.protocol not in SECURITY_PROTOCOLS:
            raise InvalidArgumentError(
                f"security {self.protocol!r} is not one of {', '.join(SECURITY_PROTOCOLS)}"
            )
        if self.sasl and ADMIN_USER not in self.users:
            raise InvalidArgumentError(f"a SASL cluster needs the {ADMIN_USER!r} user")
        if self.acls and not self.sasl:
            raise InvalidArgumentError(
                f"acls need a SASL listener to tell users apart (security {self.protocol!r})"
            )
        for name, password in self.users.items():
            if not name.isalnum() or not password.isalnum():
                raise InvalidArgumentError(f"user name {name!r} and its password must be alphanumeric")

    @classmethod
    def create(cls, protocol: str = "plaintext", *, acls: bool = False) -> ClusterSecurity:
        """Fresh random passwords for ``admin`` and ``alice`` when the protocol is SASL."""
        protocol = parse_security(protocol)
        users = (
            {ADMIN_USER: new_password(), ORDINARY_USER: new_password()} if protocol.startswith("sasl") else {}
        )
        return cls(protocol=protocol, users=users, acls=acls)

    @property
    def kafka_protocol(self) -> str:
        """Kafka's spelling: ``SASL_SSL``."""
        return self.protocol.upper()

    @property
    def tls(self) -> bool:
        return self.protocol in ("ssl", "sasl_ssl")

    @property
    def sasl(self) -> bool:
        return self.protocol.startswith("sasl")

    @property
    def secured(self) -> bool:
        return self.protocol != "plaintext"

    def password(self, user: str) -> str:
        if user not in self.users:
            raise InvalidArgumentError(f"user {user!r} not in {sorted(self.users)}")
        return self.users[user]

    def jaas_config(self, user: str) -> str:
        """The ``sasl.jaas.config`` value for ``user`` (holds the password: never log it)."""
        return f'{SCRAM_LOGIN_MODULE} required username="{user}" password="{self.password(user)}";'

    def _user(self, user: str | None) -> str:
        return ADMIN_USER if user is None else user

    def java_client_settings(
        self, bootstrap_servers: str, ca_pem: Path | None, user: str | None = None
    ) -> dict[str, str]:
        """Java client properties (what ``kafka-topics.sh --command-config`` reads) for ``user``."""
        settings = {"bootstrap.servers": bootstrap_servers, "security.protocol": self.kafka_protocol}
        if self.sasl:
            name = self._user(user)
            settings["sasl.mechanism"] = SASL_MECHANISM
            settings["sasl.jaas.config"] = self.jaas_config(name)
        if self.tls:
            if ca_pem is None:
                raise InvalidArgumentError("a TLS cluster's client settings need the CA PEM path")
            settings["ssl.truststore.type"] = "PEM"
            settings["ssl.truststore.location"] = str(ca_pem)
        return settings

    def kafka_python_settings(
        self, bootstrap_servers: str, ca_pem: Path | None, user: str | None = None
    ) -> dict[str, object]:
        """The same as kafka-python keyword arguments (the harness's own readiness checks use these)."""
        kwargs: dict[str, object] = {
            "bootstrap_servers": bootstrap_servers,
            "security_protocol": self.kafka_protocol,
        }
        if self.sasl:
            name = self._user(user)
            kwargs.update(
                sasl_mechanism=SASL_MECHANISM,
                sasl_plain_username=name,
                sasl_plain_password=self.password(name),
            )
        if self.tls:
            kwargs.update(ssl_cafile=str(ca_pem), ssl_check_hostname=True)
        return kwargs

    def librdkafka_settings(
        self, bootstrap_servers: str, ca_pem: Path | None, user: str | None = None
    ) -> dict[str, str]:
        """The same as a confluent-kafka (librdkafka) configuration dict."""
        conf = {"bootstrap.servers": bootstrap_servers, "security.protocol": self.kafka_protocol}
        if self.sasl:
            name = self._user(user)
            conf.update(
                {
                    "sasl.mechanism": SASL_MECHANISM,
                    "sasl.username": name,
                    "sasl.password": self.password(name),
                }
            )
        if self.tls:
            conf["ssl.ca.location"] = str(ca_pem)
        return conf


def render_properties(settings: Mapping[str, str], header: str | None = None) -> str:
    """``settings`` in ``java.util.Properties`` text form (keys sorted; ``\\`` and line breaks escaped)."""
    lines = [f"# {line}" for line in (header or "").splitlines()]
    for key in sorted(settings):
        lines.append(f"{_escape(key, is_key=True)}={_escape(settings[key], is_key=False)}")
    return "\n".join(lines) + "\n"


def _escape(text: str, *, is_key: bool) -> str:
    out = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    if is_key:
        out = out.replace("=", "\\=").replace(":", "\\:").replace(" ", "\\ ")
    elif out.startswith(" "):
        out = "\\" + out  # leading blanks of a value are otherwise dropped
    return out


def write_client_properties(path: Path, settings: Mapping[str, str], header: str | None = None) -> Path:
    """Write a Java client ``.properties`` file (mode 0600: it may hold a password)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600, exist_ok=True)
    path.chmod(0o600)
    path.write_text(render_properties(settings, header), encoding="utf-8")
    return path
