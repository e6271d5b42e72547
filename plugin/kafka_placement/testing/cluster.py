"""A real, rack-labelled Apache Kafka cluster in containers: 1 KRaft controller + 6 brokers.

Testcontainers' generic ``DockerContainer`` runs each node with host networking; every listener
binds 127.0.0.1 on ports chosen free at start, so several clusters can run side by side. The Docker
engine, the containers' labels and the clean-up of leftovers are in :mod:`kafka_placement.testing.engine`;
stopping, killing and restarting one broker in :mod:`~kafka_placement.testing.broker_controls`; asking the
cluster what it is in :mod:`~kafka_placement.testing.probe`.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from kafka_placement import errors
from kafka_placement.errors import ClusterError
from kafka_placement.testing.broker_controls import BrokerControls
from kafka_placement.testing.engine import (
    LABEL,
    NODE_LABEL,
    OWNER_LABEL,
    ROLE_LABEL,
    EngineUnavailable,
    _without_ryuk,
    docker_client,
    remove_leftovers,
    remove_orphans,
)
from kafka_placement.testing.failover_plugin import failover_broker_properties, plugin_jar
from kafka_placement.testing.fault_proxy import ClusterFaults
from kafka_placement.testing.image import resolve_image
from kafka_placement.testing.layout import (
    BROKER_RACKS,
    CONTROLLER_ID,
    DEFAULT_HEAP_OPTS,
    DEFAULT_JVM_PERFORMANCE_OPTS,
    ClusterLayout,
    new_cluster_id,
)
from kafka_placement.testing.node_container import container_name, node_container
from kafka_placement.testing.ports import free_ports
from kafka_placement.testing.probe import describe_brokers, redact, transient_errors
from kafka_placement.testing.secrets_dir import prepare_secrets_dir, remove_secrets_dir, security_of
from kafka_placement.testing.security import CA_PEM, ClusterSecurity, write_client_properties
from kafka_placement.testing.state import ClusterState
from kafka_placement.testing.toxiproxy import ToxiproxyServer
from kafka_placement.versions import KAFKA_VERSION, supported_kafka_version

__all__ = [
    "LABEL",
    "NODE_LABEL",
    "OWNER_LABEL",
    "ROLE_LABEL",
    "ClusterError",
    "EngineUnavailable",
    "KafkaCluster",
    "describe_brokers",
    "docker_client",
    "redact",
    "remove_leftovers",
    "remove_orphans",
]


def _log(msg: str) -> None:
    print(f"kafka-placement: {msg}", file=sys.stderr, flush=True)


class KafkaCluster(BrokerControls):
    """One KRaft controller (node id 100) + brokers 0–5 with racks ``BROKER_RACKS``.

    Use as a context manager or call :meth:`start` / :meth:`stop`. :meth:`attach` binds to a cluster
    started by another process (the shared dev cluster) without owning it.
    """

    def __init__(
        self,
        image: str | None = None,
        *,
        racks: Mapping[int, str] = BROKER_RACKS,
        name: str | None = None,
        heap_opts: str = DEFAULT_HEAP_OPTS,
        jvm_performance_opts: str = DEFAULT_JVM_PERFORMANCE_OPTS,
        broker_properties: Mapping[str, str] | None = None,
        startup_timeout_s: float = 240.0,
        persistent: bool = False,
        owner_pid: int | None = None,
        log: Callable[[str], None] = _log,
        security: str | ClusterSecurity = "plaintext",
        acls: bool = False,
        secrets_dir: Path | None = None,
        failover_assignor: bool = True,
        fault_proxy: bool = False,
        kafka_version: str = KAFKA_VERSION,
    ) -> None:
        #: Any 4.x from 4.0.0 to the pin: picks the image (unless ``image`` is given) and the plugin build.
        self.kafka_version = supported_kafka_version(kafka_version)  # before any container or build
        self._image = image
        self._persistent = persistent
        self._owner_pid = owner_pid or os.getpid()  # whose death makes the containers orphans
        self._racks = dict(racks)
        if not self._racks:
            raise errors.InvalidArgumentError("a cluster needs at least one broker")
        self._security = (
            security if isinstance(security, ClusterSecurity) else ClusterSecurity.create(security, acls=acls)
        )
        self._secrets_dir = secrets_dir
        self._own_secrets_dir = False
        self.name = name or f"kp-{os.getpid()}-{int(time.time() * 1000) % 10**8}"
        self._heap_opts = heap_opts
        self._jvm_opts = jvm_performance_opts
        self._broker_properties = dict(broker_properties or {})
        #: Load our failover assignor into every broker (see :mod:`~kafka_placement.testing.failover_plugin`).
        self._failover_assignor = failover_assignor
        self._plugin_jar: Path | None = None
        self.startup_timeout_s = startup_timeout_s
        self._log = log
        self._layout: ClusterLayout | None = None
        self._client: Any = None
        self._containers: dict[int, Any] = {}  # node id (CONTROLLER_ID for the controller) → docker-py
        self._tc: list[Any] = []  # testcontainers objects we own
        self._owner = True
        self._stopped: set[int] = set()  # brokers deliberately stopped/killed (not a failure)
        self._lock = threading.Lock()
        self.startup_seconds: float | None = None
        self.started_at: float | None = None
        #: Clients reach each broker through its own Toxiproxy proxy (:attr:`faults`); brokers talk directly.
        self._fault_proxy = fault_proxy
        self._toxiproxy: ToxiproxyServer | None = None
        self._faults: ClusterFaults | None = None

    # ------------------------------------------------------------------ public read-only API
    @property
    def layout(self) -> ClusterLayout:
        if self._layout is None:
            raise ClusterError("cluster not started")
        return self._layout

    @property
    def image(self) -> str:
        if self._image is None:
            raise ClusterError("cluster not started (image not resolved yet)")
        return self._image

    @property
    def bootstrap_servers(self) -> str:
        """Comma-separated ``127.0.0.1:port`` of all brokers."""
        return self.layout.bootstrap_servers

    @property
    def broker_racks(self) -> dict[int, str]:
        return dict(self._racks)

    @property
    def broker_ids(self) -> list[int]:
        return sorted(self._racks)

    def broker_address(self, broker_id: int) -> str:
        """``127.0.0.1:port`` of one broker's client listener (behind its proxy when proxied)."""
        return self.layout.broker_address(broker_id)

    @property
    def faults(self) -> ClusterFaults:
        """The per-broker fault proxies of a cluster started with ``fault_proxy=True``."""
        if self._faults is None:
            raise ClusterError(f"cluster {self.name} was not started with fault_proxy=True (or not started)")
        return self._faults

    # ------------------------------------------------------------------ security / client settings
    @property
    def security(self) -> ClusterSecurity:
        """Protocol, SCRAM users and ACL switch (its repr hides the passwords)."""
        return self._security

    @property
    def secrets_dir(self) -> Path | None:
        """Directory holding the CA, keystore and JAAS file (None for a plaintext cluster)."""
        return self._secrets_dir

    @property
    def ca_pem(self) -> Path | None:
        """The throwaway CA certificate (PEM) clients trust; None without TLS."""
        if not self._security.tls or self._secrets_dir is None:
            return None
        return self._secrets_dir / CA_PEM

    def client_settings(self, user: str | None = None) -> dict[str, str]:
        """Java client properties for ``user`` (default ``admin``): bootstrap.servers,
        security.protocol, sasl.mechanism, sasl.jaas.config, ssl.truststore.type/location."""
        return self._security.java_client_settings(self.bootstrap_servers, self.ca_pem, user)

    def kafka_python_settings(self, user: str | None = None) -> dict[str, object]:
        """The same settings as kafka-python keyword arguments."""
        return self._security.kafka_python_settings(self.bootstrap_servers, self.ca_pem, user)

    def librdkafka_settings(self, user: str | None = None) -> dict[str, str]:
        """The same settings as a confluent-kafka configuration dict."""
        return self._security.librdkafka_settings(self.bootstrap_servers, self.ca_pem, user)

    def write_client_config(self, path: Path, user: str | None = None) -> Path:
        """Write the Java client ``.properties`` file for ``user`` (``--command-config``); with TLS the
        CA is copied next to it as ``<name>-ca.pem`` and the file points at that copy."""
        path = Path(path).expanduser().resolve()
        settings = self.client_settings(user)
        ca = self.ca_pem
        if ca is not None:
            ca_copy = path.with_name(f"{path.stem}-ca.pem")
            ca_copy.parent.mkdir(parents=True, exist_ok=True)
            ca_copy.write_bytes(ca.read_bytes())
            settings["ssl.truststore.location"] = str(ca_copy)
        header = (
            f"kafka-placement test cluster {self.name} ({self._security.kafka_protocol}), "
            f"user {user or ('admin' if self._security.sasl else 'none')}"
        )
        return write_client_properties(path, settings, header)

    def describe(self, timeout_s: float = 5.0) -> dict[int, str | None]:
        """Broker id → rack, asked on the client listener with this cluster's security (as ``admin``)."""
        extra = {k: v for k, v in self.kafka_python_settings().items() if k != "bootstrap_servers"}
        return describe_brokers(self.bootstrap_servers, timeout_s=timeout_s, client_kwargs=extra)

    def state(self) -> ClusterState:
        return ClusterState(
            name=self.name,
            image=self.image,
            layout=self.layout,
            controller_container=container_name(self.name, CONTROLLER_ID),
            broker_containers={b: container_name(self.name, b) for b in self.broker_ids},
            started_at=self.started_at or time.time(),
            security=self._security.protocol,
            acls=self._security.acls,
            secrets_dir=str(self._secrets_dir) if self._secrets_dir is not None else None,
        )

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> KafkaCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> KafkaCluster:
        t0 = time.monotonic()
        self._client = docker_client()
        for stale in remove_orphans(self._client):
            self._log(f"removed orphaned cluster {stale} (its process is gone)")
        if self._image is None:
            self._image = resolve_image(self._client, version=self.kafka_version)
        if self._fault_proxy and self._toxiproxy is None:
            try:
                self._toxiproxy = ToxiproxyServer().start()
            except Exception:
                self.stop()
                raise
            self._faults = ClusterFaults(self._toxiproxy.client, self.name)
        for attempt in (1, 2):
            try:
                self._start_nodes(t0)
                break
            except ClusterError as exc:
                # Another process may grab one of the free ports before our broker binds it.
                if attempt == 2 or "Address already in use" not in str(exc):
                    raise
                self._log("a port was taken meanwhile; retrying with fresh ports")
        self.started_at = time.time()
        self.startup_seconds = time.monotonic() - t0
        self._log(f"cluster {self.name} ready in {self.startup_seconds:.1f}s: {self.bootstrap_servers}")
        return self

    def _start_nodes(self, t0: float) -> None:
        brokers = len(self._racks)
        ports = free_ports(1 + brokers * (2 if self._faults is not None else 1))
        proxy_ports: dict[int, int] = {}
        internal_ports: dict[int, int] = {}
        if self._faults is not None:  # each client listener behind a proxy; a direct inter-broker listener
            client_ports = dict(zip(sorted(self._racks), ports[1 : 1 + brokers], strict=True))
            internal_ports = dict(zip(sorted(self._racks), ports[1 + brokers :], strict=True))
            proxy_ports = self._faults.create_proxies(client_ports)
            ports = ports[: 1 + brokers]
        broker_properties = dict(self._broker_properties)
        if self._failover_assignor and self._plugin_jar is None:
            self._plugin_jar = plugin_jar(self._log, self.kafka_version)
        if self._plugin_jar is not None:  # explicit broker_properties still win
            broker_properties = {**failover_broker_properties(), **broker_properties}
        self._layout = ClusterLayout(
            cluster_id=new_cluster_id(),
            controller_port=ports[0],
            broker_ports=dict(zip(sorted(self._racks), ports[1:], strict=True)),
            racks=self._racks,
            heap_opts=self._heap_opts,
            jvm_performance_opts=self._jvm_opts,
            broker_properties=broker_properties,
            security=self._security.protocol,
            acls=self._security.acls,
            proxy_ports=proxy_ports,
            internal_ports=internal_ports,
        )
        if self._security.secured:
            if self._secrets_dir is None:
                self._secrets_dir = Path(tempfile.mkdtemp(prefix=f"{self.name}-secrets-"))
                self._own_secrets_dir = True
            prepare_secrets_dir(self._secrets_dir, self._layout, self._security, self.name)
        self._log(
            f"starting cluster {self.name} (Kafka {self.kafka_version}) from {self._image}: "
            f"controller {CONTROLLER_ID} + brokers "
            f"{self.broker_ids} on {self._layout.bootstrap_servers} ({self._security.kafka_protocol}"
            f"{', ACLs' if self._security.acls else ''})"
        )
        try:
            nodes = [CONTROLLER_ID, *self.broker_ids]
            with _without_ryuk(), ThreadPoolExecutor(max_workers=len(nodes)) as pool:
                list(pool.map(self._start_container, nodes))
            self.wait_ready(self.startup_timeout_s, deadline_from=t0)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Remove every container of this cluster (only if this object started it)."""
        if not self._owner:
            return

        def remove(tc: Any) -> None:
            with contextlib.suppress(Exception):
                tc.stop()

        if self._tc:
            with ThreadPoolExecutor(max_workers=len(self._tc)) as pool:
                list(pool.map(remove, list(self._tc)))
        self._tc.clear()
        self._containers.clear()
        if self._client is not None:
            with contextlib.suppress(Exception):
                remove_leftovers(self._client, self.name)
        if self._own_secrets_dir and self._secrets_dir is not None:
            remove_secrets_dir(self._secrets_dir)
        if self._toxiproxy is not None:
            self._toxiproxy.stop()  # its proxies go with it
            self._toxiproxy = None
            self._faults = None

    @classmethod
    def attach(cls, state: ClusterState, *, log: Callable[[str], None] = _log) -> KafkaCluster:
        """Bind to a running cluster described by ``state`` (not owned: :meth:`stop` leaves it)."""
        security, secrets_dir = security_of(state)
        cluster = cls(
            state.image,
            racks=state.layout.racks,
            name=state.name,
            log=log,
            security=security,
            secrets_dir=secrets_dir,
        )
        cluster._owner = False
        cluster._layout = state.layout
        cluster._client = docker_client()
        cluster.started_at = state.started_at
        not_found: type[Exception] = importlib.import_module("docker.errors").NotFound
        names = {CONTROLLER_ID: state.controller_container, **state.broker_containers}
        for node, cname in names.items():
            try:
                cluster._containers[node] = cluster._client.containers.get(cname)
            except not_found as exc:
                raise ClusterError(f"container {cname} of cluster {state.name} is gone") from exc
        return cluster

    # ------------------------------------------------------------------ readiness
    def wait_ready(
        self,
        timeout_s: float = 120.0,
        *,
        deadline_from: float | None = None,
        expect: Mapping[int, str] | None = None,
    ) -> None:
        """Until describe_cluster lists exactly ``expect`` (default: all brokers with their racks)."""
        expect = dict(self._racks if expect is None else expect)
        deadline = (deadline_from if deadline_from is not None else time.monotonic()) + timeout_s
        last: object = "no answer yet"
        while True:
            self._check_running()
            try:
                seen = self.describe(5.0)
                if seen == expect:
                    return
                last = f"describe_cluster lists {dict(sorted(seen.items()))}"
            except transient_errors() as exc:
                last = f"{type(exc).__name__}: {exc}"
            if time.monotonic() > deadline:
                raise ClusterError(
                    f"cluster {self.name} not ready after {timeout_s:.0f}s: want brokers {expect}, {last}"
                    + self._logs_tail()
                )
            time.sleep(0.5)

    @property
    def owns_containers(self) -> bool:
        """True when this object started the cluster (False when attached to the shared one)."""
        return self._owner

    # ------------------------------------------------------------------ containers
    def _start_container(self, node: int) -> None:
        tc = node_container(
            self.image,
            self.layout,
            node,
            cluster=self.name,
            owner_pid=None if self._persistent else self._owner_pid,
            plugin_jar=self._plugin_jar,
            secrets_dir=self._secrets_dir if self._security.secured else None,
        )
        with self._lock:
            self._tc.append(tc)
        tc.start()
        with self._lock:
            self._containers[node] = tc.get_wrapped_container()
