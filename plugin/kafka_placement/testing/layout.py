"""The test cluster's shape and the broker/controller configuration it runs with (pure, no I/O).

One KRaft controller (node id :data:`CONTROLLER_ID`) and six brokers, ids 0–5, with the racks
0:rack1, 1:rack3, 2:rack3, 3:rack2, 4:rack2, 5:rack1. Everything is rendered as the ``KAFKA_*`` /
``CLUSTER_ID`` environment contract of the official ``apache/kafka`` image (which the offline image
in ``docker/offline`` mirrors).
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kafka_placement.broker_plugin.settings import CONTROLLER_GROUP_LIMITS
from kafka_placement.testing.security import (
    ADMIN_USER,
    CA_PEM,
    KEYSTORE_P12,
    SASL_MECHANISM,
    SECURITY_PROTOCOLS,
)

#: Broker id → rack of the default test cluster.
BROKER_RACKS: Mapping[int, str] = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
#: Node id of the single KRaft controller (outside the broker id range 0–5).
CONTROLLER_ID = 100
#: Only loopback: every listener binds and advertises this address (host networking).
HOST = "127.0.0.1"
#: A proxied cluster's inter-broker listener: brokers reach each other here, never through the fault proxy.
INTERNAL_LISTENER = "BROKER"

#: Small JVMs for a 2-core machine running seven of them.
DEFAULT_HEAP_OPTS = "-Xmx256m -Xms128m"
#: Quick JVM start-up: C1 only, serial GC, no perf-data file.
DEFAULT_JVM_PERFORMANCE_OPTS = (
    "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData -Xss512k -Djava.awt.headless=true"
)

#: Broker settings for fast, deterministic tests on few cores (properties names, not env names).
FAST_BROKER_PROPERTIES: Mapping[str, str] = {
    "group.initial.rebalance.delay.ms": "0",
    "offsets.topic.replication.factor": "3",
    "offsets.topic.num.partitions": "12",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "transaction.state.log.num.partitions": "6",
    "share.coordinator.state.topic.replication.factor": "3",
    "share.coordinator.state.topic.min.isr": "2",
    "num.network.threads": "2",
    "num.io.threads": "2",
    "background.threads": "2",
    "num.replica.fetchers": "1",
    "num.recovery.threads.per.data.dir": "1",
    "log.cleaner.threads": "1",
    # Kafka's 128 MiB default would take half of a 256 MiB heap (and fail to allocate in smaller ones).
    "log.cleaner.dedupe.buffer.size": str(16 * 1024 * 1024),
    "broker.heartbeat.interval.ms": "1000",
    "broker.session.timeout.ms": "6000",
}
#: Controller settings for the same reasons.
FAST_CONTROLLER_PROPERTIES: Mapping[str, str] = {
    "num.network.threads": "1",
    "num.io.threads": "2",
    "background.threads": "1",
    "broker.heartbeat.interval.ms": "1000",
    "broker.session.timeout.ms": "6000",
}

#: Where the secured cluster's secrets directory (CA, keystore, JAAS, entry script) is mounted; the
#: official image's contract expects keystores and their credential files here.
SECRETS_MOUNT = "/etc/kafka/secrets"
#: The script a secured cluster's containers run before the image's own entry point (``run``).
ENTRY_SCRIPT = "kp-start.sh"
KEYSTORE_CREDENTIALS = "keystore.credentials"
KEY_CREDENTIALS = "key.credentials"
JAAS_FILE = "kafka_server_jaas.conf"
SCRAM_USERS_FILE = "scram-users"
CONTROLLER_PROPERTIES_FILE = "controller.properties"
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

#: Env names that are JVM/launcher options, not broker properties (official image contract).
NON_PROPERTY_ENV = frozenset(
    {
        "KAFKA_HEAP_OPTS",
        "KAFKA_OPTS",
        "KAFKA_JVM_PERFORMANCE_OPTS",
        "KAFKA_LOG4J_OPTS",
        "KAFKA_JMX_OPTS",
        "KAFKA_GC_LOG_OPTS",
        "KAFKA_LOG4J_ROOT_LOGLEVEL",
        "KAFKA_LOG4J_LOGGERS",
        "KAFKA_TOOLS_LOG4J_LOGLEVEL",
        "KAFKA_VERSION",
        "KAFKA_HOME",
        "KAFKA_JMX_HOSTNAME",
    }
)


def property_to_env(name: str) -> str:
    """``broker.rack`` → ``KAFKA_BROKER_RACK`` (``_`` → ``___``, ``-`` → ``__``, ``.`` → ``_``)."""
    if not name or name != name.strip() or "=" in name:
        raise ValueError(f"invalid Kafka property name {name!r}")
    return "KAFKA_" + name.replace("_", "___").replace("-", "__").replace(".", "_").upper()


def env_to_property(env_name: str) -> str:
    """Inverse of :func:`property_to_env`: ``KAFKA_BROKER_RACK`` → ``broker.rack``."""
    if not env_name.startswith("KAFKA_") or env_name in NON_PROPERTY_ENV:
        raise ValueError(f"{env_name!r} is not a KAFKA_<property> configuration variable")
    key = env_name[len("KAFKA_") :]
    return key.replace("___", "\x01").replace("__", "-").replace("_", ".").replace("\x01", "_").lower()


def new_cluster_id() -> str:
    """A fresh KRaft cluster id: 16 random bytes, URL-safe base64 without padding (Kafka's Uuid form).

    Never starting with ``-``, as Kafka's ``Uuid.randomUuid()`` ensures: ``kafka-storage format --cluster-id
    -abc…`` reads such an id as an option and fails (1 start in 64 did)."""
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode("ascii").rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


@dataclass(frozen=True)
class ClusterLayout:
    """Ports and identity of one cluster; everything needed to render the containers' environment."""

    cluster_id: str
    controller_port: int
    broker_ports: Mapping[int, int]
    racks: Mapping[int, str] = field(default_factory=lambda: dict(BROKER_RACKS))
    heap_opts: str = DEFAULT_HEAP_OPTS
    jvm_performance_opts: str = DEFAULT_JVM_PERFORMANCE_OPTS
    broker_properties: Mapping[str, str] = field(default_factory=dict)
    #: The client (and inter-broker) listener's protocol: plaintext | ssl | sasl_plaintext | sasl_ssl.
    security: str = "plaintext"
    #: StandardAuthorizer on every node; ``admin`` is a super user, everyone else needs ACLs.
    acls: bool = False
    #: A proxied cluster (empty: not proxied): broker id → the port of the fault proxy in front of its client
    #: listener, which the broker advertises; ``internal_ports`` are then its direct inter-broker listener.
    proxy_ports: Mapping[int, int] = field(default_factory=dict)
    internal_ports: Mapping[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.security not in SECURITY_PROTOCOLS:
            raise ValueError(f"security {self.security!r} is not one of {', '.join(SECURITY_PROTOCOLS)}")
        if self.acls and not self.security.startswith("sasl"):
            raise ValueError(f"acls need a SASL listener (security {self.security!r})")
        if not self.racks:
            raise ValueError("a cluster needs at least one broker")
        if set(self.broker_ports) != set(self.racks):
            raise ValueError(
                f"broker ids with ports {sorted(self.broker_ports)} differ from broker ids with racks "
                f"{sorted(self.racks)}"
            )
        from kafka_placement.errors import InvalidArgumentError

        if bool(self.proxy_ports) != bool(self.internal_ports):
            raise InvalidArgumentError(
                f"a proxied cluster needs both proxy_ports ({dict(self.proxy_ports)}) and internal_ports "
                f"({dict(self.internal_ports)})"
            )
        for what, extra in (("proxy_ports", self.proxy_ports), ("internal_ports", self.internal_ports)):
            if extra and set(extra) != set(self.racks):
                raise InvalidArgumentError(
                    f"broker ids with {what} {sorted(extra)} differ from broker ids {sorted(self.racks)}"
                )
        ports = [
            self.controller_port,
            *self.broker_ports.values(),
            *self.proxy_ports.values(),
            *self.internal_ports.values(),
        ]
        for port in ports:
            if not 1 <= port <= 65535:
                raise ValueError(f"port {port} out of range [1, 65535]")
        if len(set(ports)) != len(ports):
            raise ValueError(f"ports must be distinct, got {ports}")
        if CONTROLLER_ID in self.racks:
            raise ValueError(f"broker id {CONTROLLER_ID} is reserved for the controller")

    @property
    def broker_ids(self) -> list[int]:
        return sorted(self.broker_ports)

    @property
    def quorum_voters(self) -> str:
        return f"{CONTROLLER_ID}@{HOST}:{self.controller_port}"

    def broker_address(self, broker_id: int) -> str:
        if broker_id not in self.broker_ports:
            raise KeyError(f"broker id {broker_id} not in {self.broker_ids}")
        return f"{HOST}:{self.broker_ports[broker_id]}"

    @property
    def proxied(self) -> bool:
        return bool(self.proxy_ports)

    def client_address(self, broker_id: int) -> str:
        """Where clients reach ``broker_id``: its fault proxy when proxied, else its client listener."""
        if not self.proxied:
            return self.broker_address(broker_id)
        if broker_id not in self.proxy_ports:
            raise KeyError(f"broker id {broker_id} not in {self.broker_ids}")
        return f"{HOST}:{self.proxy_ports[broker_id]}"

    @property
    def bootstrap_servers(self) -> str:
        """Every broker's client address (through the fault proxy when proxied)."""
        return ",".join(self.client_address(b) for b in self.broker_ids)

    @property
    def listener_name(self) -> str:
        """The brokers' one listener (clients and inter-broker traffic): ``SASL_SSL`` etc."""
        return self.security.upper()

    @property
    def secured(self) -> bool:
        return self.security != "plaintext"

    def _replication_properties(self) -> dict[str, str]:
        """Internal topics' replication capped by the broker count (1- and 2-broker clusters)."""
        rf = min(3, len(self.racks))
        isr = min(2, rf)
        return {
            "offsets.topic.replication.factor": str(rf),
            "transaction.state.log.replication.factor": str(rf),
            "transaction.state.log.min.isr": str(isr),
            "share.coordinator.state.topic.replication.factor": str(rf),
            "share.coordinator.state.topic.min.isr": str(isr),
        }

    def _authorizer_properties(self, super_users: list[str]) -> dict[str, str]:
        if not self.acls:
            return {}
        return {
            "authorizer.class.name": STANDARD_AUTHORIZER,
            "super.users": ";".join(f"User:{u}" for u in super_users),
            "allow.everyone.if.no.acl.found": "false",
        }

    def _common_env(self) -> dict[str, str]:
        return {
            "CLUSTER_ID": self.cluster_id,
            "KAFKA_CONTROLLER_QUORUM_VOTERS": self.quorum_voters,
            "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
            "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "CONTROLLER:PLAINTEXT,"
            + f"{self.listener_name}:{self.listener_name}"
            + (f",{INTERNAL_LISTENER}:{self.listener_name}" if self.proxied else ""),
            "KAFKA_LOG_DIRS": "/tmp/kraft-logs",
            "KAFKA_HEAP_OPTS": self.heap_opts,
            "KAFKA_JVM_PERFORMANCE_OPTS": self.jvm_performance_opts,
        }

    def controller_properties(self) -> dict[str, str]:
        """The controller's configuration as properties (what the image renders from its env)."""
        return {
            env_to_property(k): v
            for k, v in self.controller_env().items()
            if k.startswith("KAFKA_") and k not in NON_PROPERTY_ENV
        }

    def _security_broker_properties(self) -> dict[str, str]:
        props: dict[str, str] = {}
        if self.security in ("ssl", "sasl_ssl"):
            props.update(
                {
                    # Official image contract: keystore file and its credential files under SECRETS_MOUNT
                    # (its configure step sets ssl.keystore.location and the passwords from them).
                    "ssl.keystore.filename": KEYSTORE_P12,
                    "ssl.keystore.credentials": KEYSTORE_CREDENTIALS,
                    "ssl.key.credentials": KEY_CREDENTIALS,
                    "ssl.keystore.type": "PKCS12",
                    "ssl.keystore.location": f"{SECRETS_MOUNT}/{KEYSTORE_P12}",
                    # Brokers are TLS clients of each other: they trust the throwaway CA (PEM, no password).
                    "ssl.truststore.type": "PEM",
                    "ssl.truststore.location": f"{SECRETS_MOUNT}/{CA_PEM}",
                    "ssl.client.auth": "none",
                }
            )
        if self.security.startswith("sasl"):
            props.update(
                {
                    "sasl.enabled.mechanisms": SASL_MECHANISM,
                    "sasl.mechanism.inter.broker.protocol": SASL_MECHANISM,
                }
            )
        props.update(self._authorizer_properties([ADMIN_USER]))
        return props

    def controller_env(self) -> dict[str, str]:
        env = self._common_env()
        env.update({property_to_env(k): v for k, v in FAST_CONTROLLER_PROPERTIES.items()})
        # Brokers reach the controller on its PLAINTEXT listener, where they are User:ANONYMOUS.
        env.update(
            {property_to_env(k): v for k, v in self._authorizer_properties([ADMIN_USER, "ANONYMOUS"]).items()}
        )
        env.update(
            {property_to_env(k): v for k, v in self.broker_properties.items() if k in CONTROLLER_GROUP_LIMITS}
        )
        env.update(
            {
                "KAFKA_NODE_ID": str(CONTROLLER_ID),
                "KAFKA_PROCESS_ROLES": "controller",
                "KAFKA_LISTENERS": f"CONTROLLER://{HOST}:{self.controller_port}",
            }
        )
        return env

    def broker_env(self, broker_id: int) -> dict[str, str]:
        address = self.broker_address(broker_id)
        env = self._common_env()
        env.update({property_to_env(k): v for k, v in FAST_BROKER_PROPERTIES.items()})
        env.update({property_to_env(k): v for k, v in self._replication_properties().items()})
        env.update({property_to_env(k): v for k, v in self._security_broker_properties().items()})
        env.update({property_to_env(k): v for k, v in self.broker_properties.items()})
        if self.security.startswith("sasl"):
            # Official image contract: SASL needs KAFKA_OPTS with the JAAS file (the broker's own
            # SCRAM login for inter-broker traffic; the password stays in the mounted file).
            env["KAFKA_OPTS"] = f"-Djava.security.auth.login.config={SECRETS_MOUNT}/{JAAS_FILE}"
        listener = f"{self.listener_name}://{address}"
        advertised, inter_broker = listener, self.listener_name
        if self.proxied:
            # Clients are told the proxy's address; brokers replicate over a second listener of the same
            # protocol that no proxy fronts (the SSL and SASL settings above are not per listener).
            internal = f"{INTERNAL_LISTENER}://{HOST}:{self.internal_ports[broker_id]}"
            advertised = f"{self.listener_name}://{self.client_address(broker_id)},{internal}"
            listener = f"{listener},{internal}"
            inter_broker = INTERNAL_LISTENER
        env.update(
            {
                "KAFKA_NODE_ID": str(broker_id),
                "KAFKA_PROCESS_ROLES": "broker",
                "KAFKA_BROKER_RACK": self.racks[broker_id],
                "KAFKA_LISTENERS": listener,
                "KAFKA_ADVERTISED_LISTENERS": advertised,
                "KAFKA_INTER_BROKER_LISTENER_NAME": inter_broker,
            }
        )
        return env


#: Bounds of ``--brokers`` (each broker is a JVM; more than this does not fit a dev machine).
MAX_BROKERS = 32


def cluster_racks(brokers: int | None = None, racks: Sequence[str] | None = None) -> dict[int, str]:
    """Broker id → rack for ``brokers`` brokers: broker ``i`` gets ``racks[i % len(racks)]``.

    Defaults: the seed's six brokers and racks; ``racks`` alone means one broker per rack entry;
    ``brokers`` alone cycles the seed's rack pattern.
    """
    from kafka_placement.errors import InvalidArgumentError

    pattern = list(BROKER_RACKS.values()) if racks is None else list(racks)
    if not pattern:
        raise InvalidArgumentError("racks must name at least one rack")
    for rack in pattern:
        if not rack or rack != rack.strip() or "," in rack or not rack.isprintable() or len(rack) > 255:
            raise InvalidArgumentError(
                f"rack {rack!r} must be 1-255 printable characters without commas or surrounding blanks"
            )
    count = brokers
    if count is None:
        count = len(pattern) if racks is not None else len(BROKER_RACKS)
    if not 1 <= count <= MAX_BROKERS:
        raise InvalidArgumentError(f"brokers {count} out of range [1, {MAX_BROKERS}]")
    if racks is None:
        pattern = pattern[:count]  # the seed's pattern, cut or cycled to the broker count
    if len(pattern) > count:
        raise InvalidArgumentError(
            f"{len(pattern)} racks for {count} brokers: give at most one rack per broker"
        )
    return {i: pattern[i % len(pattern)] for i in range(count)}
