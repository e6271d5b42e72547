"""Connection settings in Kafka's own vocabulary, turned into each client's configuration.

Settings are Java client property names (what ``kafka-topics.sh --command-config FILE`` reads), plus
librdkafka's spellings where they differ (``sasl.username``/``sasl.password``, ``ssl.ca.location``,
``ssl.certificate.location``/``ssl.key.location``). :func:`connection_settings` builds them from a
bootstrap address, a ``.properties`` file and ``key=value`` overrides; :class:`ConnectionSettings` then
gives kafka-python keyword arguments, a confluent-kafka (librdkafka) configuration, aiokafka keyword
arguments (with an ``ssl.SSLContext``) and Spark Kafka-source options. A setting a client cannot honour
raises :class:`~kafka_placement.errors.ConnectionSettingsError` naming it — nothing is dropped silently —
and secrets never appear in a ``repr``, a message or a log line.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_placement.clients.connection import stores
from kafka_placement.clients.connection.properties import (
    jaas_quote,
    masked,
    parse_jaas,
    parse_override,
    read_properties,
)
from kafka_placement.errors import ConnectionSettingsError

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
#: Default for every network wait of a command (``--timeout`` changes it).
DEFAULT_TIMEOUT_S = 15.0
#: The Python logger that receives librdkafka's own log lines (``FAIL``, ``REQTMOUT`` … — syslog level 3
#: as ``ERROR``, 4 as ``WARNING`` …) from every confluent client built on :meth:`ConnectionSettings.
#: confluent`, instead of librdkafka printing them to stderr. confluent-kafka hands them over when the
#: client is polled. Its level and handlers are the application's; the CLI sets them once
#: (``--librdkafka-log-level``).
LIBRDKAFKA_LOGGER = "kafka_placement.librdkafka"

_JAAS_MODULES = {
    "org.apache.kafka.common.security.plain.PlainLoginModule": ("PLAIN",),
    "org.apache.kafka.common.security.scram.ScramLoginModule": ("SCRAM-SHA-256", "SCRAM-SHA-512"),
}

#: Settings every translation understands (Java names first, then librdkafka's).
KNOWN = frozenset(
    {
        "bootstrap.servers",
        "security.protocol",
        "sasl.mechanism",
        "sasl.mechanisms",
        "sasl.jaas.config",
        "sasl.username",
        "sasl.password",
        "ssl.truststore.location",
        "ssl.truststore.type",
        "ssl.truststore.password",
        "ssl.ca.location",
        "ssl.keystore.location",
        "ssl.keystore.type",
        "ssl.keystore.password",
        "ssl.key.password",
        "ssl.certificate.location",
        "ssl.key.location",
        "ssl.endpoint.identification.algorithm",
        "client.id",
        "request.timeout.ms",
    }
)


@dataclass(frozen=True)
class ConnectionSettings:
    """Where the cluster is and how to talk to it, in Java client property names."""

    bootstrap_servers: str
    properties: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = DEFAULT_TIMEOUT_S

    def __post_init__(self) -> None:
        servers = self.servers
        if not self.bootstrap_servers.strip() or not all(servers):
            raise ConnectionSettingsError(
                f"bootstrap servers must be host:port[,host:port…], got {self.bootstrap_servers!r}"
            )
        for server in servers:
            host, sep, port = server.rpartition(":")
            if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
                raise ConnectionSettingsError(
                    f"bootstrap server {server!r} is not host:port with a port in [1, 65535]"
                )
        if not 0 < self.timeout_s <= 3600:
            raise ConnectionSettingsError(f"timeout must be in (0, 3600] seconds, got {self.timeout_s}")
        protocol = self.security_protocol
        if protocol not in PROTOCOLS:
            raise ConnectionSettingsError(
                f"security.protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}"
            )
        if self.sasl and self.sasl_mechanism not in MECHANISMS:
            raise ConnectionSettingsError(
                f"sasl.mechanism must be one of {', '.join(MECHANISMS)}, got {self.sasl_mechanism!r}"
            )

    def __repr__(self) -> str:
        return (
            f"ConnectionSettings(bootstrap_servers={self.bootstrap_servers!r}, "
            f"properties={masked(self.properties)!r}, timeout_s={self.timeout_s})"
        )

    # ---- what the settings say -----------------------------------------------------------------
    def get(self, name: str) -> str | None:
        value = self.properties.get(name)
        return None if value is None or value == "" else value

    @property
    def servers(self) -> list[str]:
        """The bootstrap addresses, ``host:port`` each."""
        return [s.strip() for s in self.bootstrap_servers.split(",")]

    @property
    def security_protocol(self) -> str:
        return (self.get("security.protocol") or "PLAINTEXT").upper()

    @property
    def tls(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.security_protocol.startswith("SASL_")

    @property
    def sasl_mechanism(self) -> str:
        return (self.get("sasl.mechanism") or self.get("sasl.mechanisms") or "GSSAPI").upper()

    @property
    def check_hostname(self) -> bool:
        """Java's default ``ssl.endpoint.identification.algorithm=https``; an empty value turns it off."""
        value = self.properties.get("ssl.endpoint.identification.algorithm", "https")
        if value.lower() in ("", "none"):
            return False
        if value.lower() != "https":
            raise ConnectionSettingsError(
                f"ssl.endpoint.identification.algorithm must be https or empty, got {value!r}"
            )
        return True

    def credentials(self) -> tuple[str, str]:
        """SASL ``(username, password)`` from ``sasl.jaas.config`` or librdkafka's ``sasl.username`` and
        ``sasl.password``."""
        jaas = self.get("sasl.jaas.config")
        if jaas is not None:
            module, options = parse_jaas(jaas)
            allowed = _JAAS_MODULES.get(module)
            if allowed is None or self.sasl_mechanism not in allowed:
                raise ConnectionSettingsError(
                    f"sasl.jaas.config uses {module}, which does not serve "
                    f"sasl.mechanism={self.sasl_mechanism}"
                )
            if "username" not in options or "password" not in options:
                raise ConnectionSettingsError('sasl.jaas.config must set username="…" and password="…"')
            return options["username"], options["password"]
        user, password = self.get("sasl.username"), self.get("sasl.password")
        if user is None or password is None:
            raise ConnectionSettingsError(
                f"security.protocol={self.security_protocol} with sasl.mechanism={self.sasl_mechanism} needs "
                "sasl.jaas.config (or sasl.username and sasl.password)"
            )
        return user, password

    def ca_file(self) -> str | None:
        """A PEM file of trusted CAs (a PKCS12 trust store is converted; JKS is refused)."""
        if self.get("ssl.ca.location"):
            return stores.truststore_pem(self.properties["ssl.ca.location"], "PEM", None, "ssl.ca.location")
        location = self.get("ssl.truststore.location")
        if location is None:
            return None
        return stores.truststore_pem(
            location, self.get("ssl.truststore.type"), self.get("ssl.truststore.password")
        )

    def client_certificate(self) -> tuple[str, str, str | None] | None:
        """``(certificate chain PEM, key PEM, key password)`` for mutual TLS, or None."""
        if self.get("ssl.certificate.location") or self.get("ssl.key.location"):
            cert, key = self.get("ssl.certificate.location"), self.get("ssl.key.location")
            if cert is None or key is None:
                raise ConnectionSettingsError("ssl.certificate.location and ssl.key.location go together")
            return cert, key, self.get("ssl.key.password")
        location = self.get("ssl.keystore.location")
        if location is None:
            return None
        password = self.get("ssl.keystore.password")
        cert, key = stores.keystore_pem(location, self.get("ssl.keystore.type"), password)
        return cert, key, self.get("ssl.key.password") or password

    def _unknown(self, client: str, extra: Iterable[str] = ()) -> None:
        unknown = sorted(set(self.properties) - KNOWN - set(extra))
        if unknown:
            raise ConnectionSettingsError(
                f"{client} cannot honour setting(s) {', '.join(unknown)}; "
                f"supported: {', '.join(sorted(KNOWN))}"
            )

    def _oauth(self, client: str) -> None:
        if self.sasl and self.sasl_mechanism == "OAUTHBEARER":
            raise ConnectionSettingsError(
                f"sasl.mechanism=OAUTHBEARER cannot be configured from properties for {client}; use the "
                "confluent client (librdkafka's sasl.oauthbearer.* settings) or Spark"
            )
        if self.sasl and self.sasl_mechanism == "GSSAPI":
            raise ConnectionSettingsError(
                f"sasl.mechanism=GSSAPI (Kerberos) is not supported for {client}; set sasl.mechanism to "
                "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"
            )

    # ---- per client ----------------------------------------------------------------------------
    def _python_client_kwargs(self, client: str, bootstrap_servers: object) -> dict[str, Any]:
        """What kafka-python and aiokafka spell alike: address, protocol, timeout, client id, SASL."""
        self._unknown(client)
        self._oauth(client)
        kwargs: dict[str, Any] = {
            "bootstrap_servers": bootstrap_servers,
            "security_protocol": self.security_protocol,
            "request_timeout_ms": int(self.get("request.timeout.ms") or self.timeout_s * 1000),
        }
        if self.get("client.id"):
            kwargs["client_id"] = self.properties["client.id"]
        if self.sasl:
            user, password = self.credentials()
            kwargs.update(
                sasl_mechanism=self.sasl_mechanism, sasl_plain_username=user, sasl_plain_password=password
            )
        return kwargs

    def kafka_python(self) -> dict[str, Any]:
        """Keyword arguments for kafka-python's KafkaAdminClient / KafkaProducer / KafkaConsumer."""
        kwargs = self._python_client_kwargs("kafka-python", self.bootstrap_servers.split(","))
        if self.tls:
            kwargs["ssl_check_hostname"] = self.check_hostname
            ca = self.ca_file()
            if ca is not None:
                kwargs["ssl_cafile"] = ca
            client = self.client_certificate()
            if client is not None:
                kwargs.update(ssl_certfile=client[0], ssl_keyfile=client[1])
                if client[2]:
                    kwargs["ssl_password"] = client[2]
        return kwargs

    def confluent(self) -> dict[str, Any]:
        """A confluent-kafka (librdkafka) configuration; librdkafka's log lines go to the Python logger
        :data:`LIBRDKAFKA_LOGGER`."""
        self._unknown("confluent-kafka")
        conf: dict[str, Any] = {
            "bootstrap.servers": self.bootstrap_servers,
            "security.protocol": self.security_protocol,
            "logger": logging.getLogger(LIBRDKAFKA_LOGGER),
        }
        if self.get("client.id"):
            conf["client.id"] = self.properties["client.id"]
        if self.sasl:
            conf["sasl.mechanism"] = self.sasl_mechanism
            if self.sasl_mechanism == "OAUTHBEARER":
                raise ConnectionSettingsError(
                    "sasl.mechanism=OAUTHBEARER: pass librdkafka's sasl.oauthbearer.* settings to the "
                    "confluent client directly; properties files cannot carry a token provider"
                )
            if self.sasl_mechanism == "GSSAPI":
                self._oauth("confluent-kafka")
            conf["sasl.username"], conf["sasl.password"] = self.credentials()
        if self.tls:
            conf["ssl.endpoint.identification.algorithm"] = "https" if self.check_hostname else "none"
            ca = self.ca_file()
            if ca is not None:
                conf["ssl.ca.location"] = ca
            client = self.client_certificate()
            if client is not None:
                conf["ssl.certificate.location"], conf["ssl.key.location"] = client[0], client[1]
                if client[2]:
                    conf["ssl.key.password"] = client[2]
        return conf

    def aiokafka(self) -> dict[str, Any]:
        """Keyword arguments for aiokafka (TLS through an ``ssl.SSLContext``)."""
        kwargs = self._python_client_kwargs("aiokafka", self.bootstrap_servers)
        if self.tls:
            kwargs["ssl_context"] = self.ssl_context()
        return kwargs

    def ssl_context(self) -> ssl.SSLContext:
        """An ``ssl.SSLContext`` with the trusted CAs, the client certificate and hostname checking."""
        ca = self.ca_file()
        context = ssl.create_default_context(cafile=ca)
        context.check_hostname = self.check_hostname
        client = self.client_certificate()
        if client is not None:
            context.load_cert_chain(client[0], client[1], client[2])
        return context

    def spark_options(self) -> dict[str, str]:
        """Spark Kafka source/sink options: the Java client reads every Java property itself (``kafka.``
        prefix, JKS included); librdkafka spellings are turned into their Java equivalents."""
        opts = {"kafka.bootstrap.servers": self.bootstrap_servers}
        java_only_translated = {
            "sasl.username",
            "sasl.password",
            "sasl.mechanisms",
            "ssl.ca.location",
            "ssl.certificate.location",
            "ssl.key.location",
        }
        for key, value in self.properties.items():
            if key not in java_only_translated and key != "bootstrap.servers":
                opts[f"kafka.{key}"] = value
        if self.sasl:
            opts["kafka.sasl.mechanism"] = self.sasl_mechanism
            if self.get("sasl.jaas.config") is None and self.sasl_mechanism != "OAUTHBEARER":
                user, password = self.credentials()
                module = (
                    "org.apache.kafka.common.security.plain.PlainLoginModule"
                    if self.sasl_mechanism == "PLAIN"
                    else "org.apache.kafka.common.security.scram.ScramLoginModule"
                )
                opts["kafka.sasl.jaas.config"] = (
                    f'{module} required username="{jaas_quote(user)}" password="{jaas_quote(password)}";'
                )
        if self.get("ssl.ca.location"):
            opts["kafka.ssl.truststore.location"] = self.properties["ssl.ca.location"]
            opts["kafka.ssl.truststore.type"] = "PEM"
        if self.get("ssl.certificate.location"):
            raise ConnectionSettingsError(
                "Spark's Java client takes a client certificate as ssl.keystore.location (PKCS12, or PEM "
                "with the key and chain in one file), not ssl.certificate.location/ssl.key.location"
            )
        return opts

    def write_properties(self, path: str | Path) -> Path:
        """These settings as a Java client ``.properties`` file (mode 0600: it may hold a password)."""
        import javaproperties

        target = Path(path)
        target.touch(mode=0o600)
        target.chmod(0o600)
        props = {"bootstrap.servers": self.bootstrap_servers, **self.properties}
        target.write_text(
            javaproperties.dumps(props, timestamp=False), encoding="latin-1", errors="backslashreplace"
        )
        return target

    def describe(self) -> str:
        """One line for messages: where and how, never a secret."""
        how = self.security_protocol
        if self.sasl:
            how += f"/{self.sasl_mechanism}"
        return f"{self.bootstrap_servers} ({how})"


def connection_settings(
    bootstrap_server: str | None = None,
    command_config: str | None = None,
    overrides: Iterable[str] | Mapping[str, str] = (),
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> ConnectionSettings:
    """Settings from a bootstrap address, a Java client ``.properties`` file and ``key=value`` overrides
    (later wins: file, then overrides, then ``bootstrap_server``)."""
    props: dict[str, str] = read_properties(command_config) if command_config else {}
    items = overrides.items() if isinstance(overrides, Mapping) else (parse_override(o) for o in overrides)
    for key, value in items:
        props[key] = value
    servers = bootstrap_server or props.get("bootstrap.servers")
    if not servers:
        raise ConnectionSettingsError(
            "no bootstrap servers: pass --bootstrap-server host:port "
            "(or bootstrap.servers in --command-config)"
        )
    props.pop("bootstrap.servers", None)
    return ConnectionSettings(servers.strip(), props, timeout_s)
