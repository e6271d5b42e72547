"""pytest plugin (entry point ``pytest11``): Kafka clusters for tests, configured by options or ini.

Fixtures: ``kafka_cluster`` (session: a fresh cluster started with Testcontainers, or the running one
named by ``--kafka-bootstrap-server``), ``kafka_admin`` (a kafka-python admin client on it),
``kafka_topic_factory`` (``create(partitions=3, replication_factor=1)`` → a fresh topic name, deleted
after the test), ``kafka_secure_cluster`` (SASL_SSL + SCRAM-SHA-512 + ACLs, 3 brokers on 3 racks) and
``kafka_cluster_factory`` (any security/racks/Kafka 4.x version, one cluster per distinct shape per
session) and
``kafka_proxied_cluster`` (TLS, 3 brokers, every client byte through a Toxiproxy proxy per broker).

Options (each also an ini key with ``-`` → ``_``, the command line wins): ``--kafka-image``,
``--kafka-brokers``, ``--kafka-racks``, ``--kafka-security``, ``--kafka-bootstrap-server`` with
``--kafka-client-config``, ``--kafka-unavailable=skip|fail`` (what a test gets when no cluster can be
had: skipped — the default — or failed with the reason) and ``--kafka-sigterm-cleanup`` (remove the
containers when pytest is sent SIGTERM, e.g. by ``timeout``). Markers ``kafka`` and ``integration``
are registered. Nothing in the process environment is changed.

Env ``KAFKA_PLACEMENT_REUSE=1`` attaches to the shared dev cluster of ``kafka-placement cluster up``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import threading
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

# first of ours: kafka-python is imported here with its schema loader's DeprecationWarnings silenced (two per
# message schema); the user's own warnings stay theirs
import kafka_placement.clients.kafka_python  # noqa: F401
from kafka_placement.errors import ClusterError, KafkaPlacementError
from kafka_placement.testing.cluster import KafkaCluster, describe_brokers
from kafka_placement.testing.engine import EngineUnavailable, docker_client, remove_leftovers
from kafka_placement.testing.external import ExternalCluster
from kafka_placement.testing.image import ImageUnavailable
from kafka_placement.testing.plugin_options import ClusterOptions, cluster_options, pytest_addoption
from kafka_placement.testing.state import StateError, read_state, write_state
from kafka_placement.testing.topics import create_topic
from kafka_placement.versions import KAFKA_VERSION, supported_kafka_version


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "kafka: needs a live Kafka cluster (kafka-placement's kafka_cluster)")
    config.addinivalue_line("markers", "integration: runs against live services (e.g. a Kafka cluster)")
    config.stash[_OPTIONS_KEY] = cluster_options(config)


_OPTIONS_KEY = pytest.StashKey[ClusterOptions]()


def reuse_requested() -> bool:
    return os.environ.get("KAFKA_PLACEMENT_REUSE", "").strip().lower() in {"1", "true", "yes"}


def _unavailable(options: ClusterOptions, reason: str) -> None:
    if options.on_unavailable == "fail":
        pytest.fail(f"Kafka cluster unavailable (--kafka-unavailable=fail): {reason}", pytrace=False)
    pytest.skip(f"Kafka cluster unavailable (skipped; --kafka-unavailable=fail makes it a failure): {reason}")


def _attach(options: ClusterOptions) -> KafkaCluster:
    try:
        state = read_state()
        cluster = KafkaCluster.attach(state)
    except (StateError, ClusterError) as exc:
        _unavailable(options, f"KAFKA_PLACEMENT_REUSE=1 but {exc}")
        raise  # unreachable: _unavailable raises
    try:
        cluster.wait_ready(60.0)
    except ClusterError as exc:
        pytest.fail(f"shared cluster {state.name} is not healthy: {exc}", pytrace=False)
    return cluster


def _stop_on_sigterm(cluster: KafkaCluster | _ClusterFactory) -> None:
    """`timeout pytest …` sends SIGTERM, which would skip fixture teardown: remove the containers first
    (chained: every fixture that installs this stops its own clusters)."""
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous not in (signal.SIG_DFL, None) and not getattr(previous, "_kafka_placement", False):
        return  # someone else's handler: leave it alone

    def handler(signum: int, frame: object) -> None:
        cluster.stop()
        if callable(previous):
            previous(signum, frame)  # type: ignore[arg-type]
            return
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    handler._kafka_placement = True  # type: ignore[attr-defined]
    signal.signal(signal.SIGTERM, handler)


def _options(request: pytest.FixtureRequest) -> ClusterOptions:
    return request.config.stash[_OPTIONS_KEY]


@pytest.fixture(scope="session")
def kafka_cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KafkaCluster | ExternalCluster]:
    """A live cluster: by default brokers 0–5 on racks {0:rack1,1:rack3,2:rack3,3:rack2,4:rack2,5:rack1}
    (see the options); with ``--kafka-bootstrap-server`` the running cluster there. Under pytest-xdist
    the workers share one cluster (the first starts it, the last one out removes it)."""
    options = _options(request)
    if options.bootstrap_server is not None:
        try:
            yield ExternalCluster.connect(options.bootstrap_server, options.client_config)
        except KafkaPlacementError as exc:
            _unavailable(options, str(exc))
        return
    if reuse_requested():
        yield _attach(options)
        return
    if hasattr(request.config, "workerinput"):  # a pytest-xdist worker
        yield from _shared_cluster(options, tmp_path_factory.getbasetemp().parent / "kafka-placement-cluster")
        return
    cluster = _start(options)
    try:
        yield cluster
    finally:
        cluster.stop()


def _start(options: ClusterOptions, owner_pid: int | None = None) -> KafkaCluster:
    cluster = KafkaCluster(options.image, racks=options.racks, security=options.security, owner_pid=owner_pid)
    if options.sigterm_cleanup:
        _stop_on_sigterm(cluster)
    return _started(cluster, options)


def _started(cluster: KafkaCluster, options: ClusterOptions, what: str = "") -> KafkaCluster:
    """``cluster`` started; if it cannot be, removed, and the test skipped or failed with the reason."""
    try:
        cluster.start()
    except BaseException as exc:
        cluster.stop()
        if isinstance(exc, EngineUnavailable | ImageUnavailable):
            _unavailable(options, str(exc))
        if isinstance(exc, Exception):
            pytest.fail(f"Kafka cluster{what} failed to start: {exc}", pytrace=False)
        raise
    return cluster


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _shared_cluster(options: ClusterOptions, shared: Path) -> Iterator[KafkaCluster]:
    """One cluster for all xdist workers of a run: state and a user count in ``shared``, under a lock.
    The containers' owner is the xdist controller, so the orphan sweep leaves them while any worker runs."""
    shared.mkdir(parents=True, exist_ok=True)
    lock, state_file, users_file = shared / "lock", shared / "state.json", shared / "users"
    with _locked(lock):
        if state_file.exists():
            cluster = KafkaCluster.attach(read_state(state_file))
        else:
            cluster = _start(options, owner_pid=os.getppid())
            write_state(cluster.state(), state_file)
        users_file.write_text(str(int(users_file.read_text() or 0) + 1 if users_file.exists() else 1))
    try:
        yield cluster
    finally:
        with _locked(lock):
            users = int(users_file.read_text()) - 1
            users_file.write_text(str(users))
            if users == 0:
                if cluster.owns_containers:
                    cluster.stop()
                else:
                    remove_leftovers(docker_client(), cluster.name)
                state_file.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def kafka_admin(kafka_cluster: KafkaCluster | ExternalCluster) -> Iterator[Any]:
    """kafka-python's ``KafkaAdminClient`` on ``kafka_cluster`` (closed at the end of the session)."""
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(**kafka_cluster.kafka_python_settings(), client_id="kafka-placement-tests")
    try:
        yield admin
    finally:
        admin.close()


@pytest.fixture()
def kafka_topic_factory(
    kafka_cluster: KafkaCluster | ExternalCluster, kafka_admin: Any, request: pytest.FixtureRequest
) -> Iterator[Callable[..., str]]:
    """``create(partitions=3, replication_factor=1, *, name=None, config=None)`` → the name of a new
    topic (unique per call unless ``name`` is given) whose partitions all have a leader when it returns
    (also right after a test restarted a broker); every topic created is deleted after the test."""
    from kafka.admin import KafkaAdminClient

    created: list[str] = []
    stem = "".join(c if c.isalnum() or c in "-_." else "-" for c in request.node.name)[:80]

    def fresh_admin() -> Any:
        return KafkaAdminClient(**kafka_cluster.kafka_python_settings(), client_id="kafka-placement-tests")

    def create(
        partitions: int = 3,
        replication_factor: int = 1,
        *,
        name: str | None = None,
        config: Mapping[str, str] | None = None,
    ) -> str:
        topic = name or f"{stem}-{uuid.uuid4().hex[:8]}"
        create_topic(
            kafka_admin, topic, partitions, replication_factor, config=config, fresh_admin=fresh_admin
        )
        created.append(topic)
        return topic

    yield create
    if created:
        try:
            kafka_admin.delete_topics(created)
        except Exception as exc:  # the test's outcome stands; say what was left behind
            warnings.warn(f"could not delete test topics {created}: {exc}", stacklevel=1)


#: The secured fixture's shape: small (CPU) but with a rack per broker for placement tests.
SECURE_CLUSTER_RACKS: Mapping[int, str] = {0: "rack1", 1: "rack2", 2: "rack3"}


#: (security, acls, racks, fault_proxy, failover_assignor, kafka_version)
_Shape = tuple[str, bool, tuple[tuple[int, str], ...], bool, bool, str]


class _ClusterFactory:
    """Starts clusters on demand, one per distinct (security, acls, racks, fault_proxy, failover_assignor,
    kafka_version); stops them all at the end, or one early (:meth:`release`)."""

    def __init__(self, options: ClusterOptions) -> None:
        self._options = options
        self._clusters: dict[_Shape, KafkaCluster] = {}

    def __call__(
        self,
        security: str = "plaintext",
        *,
        acls: bool = False,
        racks: Mapping[int, str] = SECURE_CLUSTER_RACKS,
        fault_proxy: bool = False,
        failover_assignor: bool = True,
        kafka_version: str = KAFKA_VERSION,
    ) -> KafkaCluster:
        supported_kafka_version(kafka_version)  # a bad value is the caller's error, not a failed start
        key = (security, acls, tuple(sorted(racks.items())), fault_proxy, failover_assignor, kafka_version)
        if key in self._clusters:
            return self._clusters[key]
        # --kafka-image names the pinned version's image; another version resolves its own
        image = self._options.image if kafka_version == KAFKA_VERSION else None
        cluster = KafkaCluster(
            image,
            racks=racks,
            security=security,
            acls=acls,
            fault_proxy=fault_proxy,
            failover_assignor=failover_assignor,
            kafka_version=kafka_version,
        )
        self._clusters[key] = cluster  # registered first: a SIGTERM during start still removes it
        try:
            return _started(cluster, self._options, f" ({security})")
        except BaseException:
            del self._clusters[key]  # the next caller tries again instead of getting a dead cluster
            raise

    def release(self, cluster: KafkaCluster) -> None:
        """Stop ``cluster`` now (a version matrix must not keep one cluster per version running) and forget
        it: the next call with its arguments starts a fresh one."""
        for key, known in list(self._clusters.items()):
            if known is cluster:
                del self._clusters[key]
        cluster.stop()

    def stop(self) -> None:
        for cluster in self._clusters.values():
            cluster.stop()
        self._clusters.clear()


@pytest.fixture(scope="session")
def kafka_cluster_factory(request: pytest.FixtureRequest) -> Iterator[Callable[..., KafkaCluster]]:
    """``factory(security="sasl_ssl", acls=True, racks={0: "rack1", ...}, fault_proxy=False,
    failover_assignor=True, kafka_version="4.4.0")`` (``False``: brokers without our plugin, as on a managed
    service; any Kafka from 4.0.0 to the pin, its image built offline when missing and the plugin built for
    it) → a started :class:`KafkaCluster` (the same object for the same arguments within the session;
    ``factory.release(cluster)`` stops one early). Its
    ``client_settings(user)`` / ``kafka_python_settings(user)`` / ``librdkafka_settings(user)`` and
    ``write_client_config(path, user)`` give clients what they need; users ``admin`` and ``alice``."""
    options = _options(request)
    factory = _ClusterFactory(options)
    if options.sigterm_cleanup:
        _stop_on_sigterm(factory)
    try:
        yield factory
    finally:
        factory.stop()


@pytest.fixture(scope="session")
def kafka_secure_cluster(kafka_cluster_factory: Callable[..., KafkaCluster]) -> KafkaCluster:
    """A live SASL_SSL cluster (SCRAM-SHA-512, throwaway CA) with the StandardAuthorizer on:
    brokers 0–2 on racks rack1–rack3; ``admin`` is a super user, ``alice`` may do only what ACLs
    grant her. ``cluster.client_settings("alice")`` → Java client properties as a dict."""
    return kafka_cluster_factory("sasl_ssl", acls=True)


@pytest.fixture()
def kafka_proxied_cluster(kafka_cluster_factory: Callable[..., KafkaCluster]) -> Iterator[KafkaCluster]:
    """A live TLS cluster, brokers 0–2 on racks rack1–rack3, whose clients reach each broker only through its
    own Toxiproxy proxy (inter-broker traffic is direct): ``cluster.faults.add(toxic, brokers=[0])`` or
    ``with cluster.faults.toxic(latency(200), brokers=[1]): …``. Started once per session (by
    ``kafka_cluster_factory``); every proxy is enabled and without toxics again after each test."""
    cluster = kafka_cluster_factory("ssl", fault_proxy=True)
    cluster.faults.clear()
    yield cluster
    cluster.faults.clear()


@pytest.fixture()
def kafka_cluster_healthy(kafka_cluster: KafkaCluster | ExternalCluster) -> KafkaCluster | ExternalCluster:
    """``kafka_cluster`` after checking every broker is listed with its rack (waits up to 60 s)."""
    kafka_cluster.wait_ready(60.0)
    return kafka_cluster


__all__ = [
    "SECURE_CLUSTER_RACKS",
    "ClusterOptions",
    "cluster_options",
    "describe_brokers",
    "kafka_admin",
    "kafka_cluster",
    "kafka_cluster_factory",
    "kafka_cluster_healthy",
    "kafka_proxied_cluster",
    "kafka_secure_cluster",
    "kafka_topic_factory",
    "pytest_addoption",  # a hook: pytest finds it among this module's names
    "pytest_configure",
    "reuse_requested",
]
