"""pytest plugin (entry point ``pytest11``): session fixtures ``kafka_cluster`` (plaintext, 6 brokers),
``kafka_secure_cluster`` (SASL_SSL + SCRAM-SHA-512 + ACLs, 3 brokers on 3 racks) and
``kafka_cluster_factory`` (any security/brokers/racks, one cluster per distinct shape per session).

- Starts a fresh :class:`KafkaCluster` for the session and removes it at the end, or, with env
  ``KAFKA_PLACEMENT_REUSE=1``, attaches to the shared dev cluster started by
  ``kafka-placement cluster up`` (never stops it).
- In CI (env ``CI=true``) any failure to get a cluster FAILS the tests with the reason. Outside CI a
  missing Docker engine (or, with reuse, a missing shared cluster) SKIPS them with a clear message;
  other start-up failures fail.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator, Mapping

import pytest

from kafka_placement.testing.cluster import ClusterError, EngineUnavailable, KafkaCluster, describe_brokers
from kafka_placement.testing.state import StateError, read_state


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def reuse_requested() -> bool:
    return os.environ.get("KAFKA_PLACEMENT_REUSE", "").strip().lower() in {"1", "true", "yes"}


def _unavailable(reason: str) -> None:
    if in_ci():
        pytest.fail(f"Kafka cluster unavailable in CI: {reason}", pytrace=False)
    pytest.skip(f"Kafka cluster unavailable (outside CI, so skipped): {reason}")


def _attach() -> KafkaCluster:
    try:
        state = read_state()
        cluster = KafkaCluster.attach(state)
    except (StateError, ClusterError) as exc:
        _unavailable(f"KAFKA_PLACEMENT_REUSE=1 but {exc}")
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


@pytest.fixture(scope="session")
def kafka_cluster() -> Iterator[KafkaCluster]:
    """A live rack-labelled cluster: brokers 0–5, racks {0:rack1,1:rack3,2:rack3,3:rack2,4:rack2,5:rack1}."""
    if reuse_requested():
        yield _attach()
        return
    cluster = KafkaCluster()
    _stop_on_sigterm(cluster)
    try:
        cluster.start()
    except EngineUnavailable as exc:
        _unavailable(str(exc))
    except Exception as exc:
        pytest.fail(f"Kafka cluster failed to start: {exc}", pytrace=False)
    try:
        yield cluster
    finally:
        cluster.stop()


#: The secured fixture's shape: small (CPU) but with a rack per broker for placement tests.
SECURE_CLUSTER_RACKS: Mapping[int, str] = {0: "rack1", 1: "rack2", 2: "rack3"}


class _ClusterFactory:
    """Starts clusters on demand, one per distinct (security, acls, racks); stops them all at the end."""

    def __init__(self) -> None:
        self._clusters: dict[tuple[str, bool, tuple[tuple[int, str], ...]], KafkaCluster] = {}

    def __call__(self, security: str = "plaintext", *, acls: bool = False,
                 racks: Mapping[int, str] = SECURE_CLUSTER_RACKS) -> KafkaCluster:
        key = (security, acls, tuple(sorted(racks.items())))
        if key in self._clusters:
            return self._clusters[key]
        cluster = KafkaCluster(racks=racks, security=security, acls=acls)
        self._clusters[key] = cluster  # registered first: a SIGTERM during start still removes it
        try:
            cluster.start()
        except BaseException as exc:
            del self._clusters[key]  # the next caller tries again instead of getting a dead cluster
            cluster.stop()
            if isinstance(exc, EngineUnavailable):
                _unavailable(str(exc))
            if isinstance(exc, Exception):
                pytest.fail(f"Kafka cluster ({security}) failed to start: {exc}", pytrace=False)
            raise
        return cluster

    def stop(self) -> None:
        for cluster in self._clusters.values():
            cluster.stop()
        self._clusters.clear()


@pytest.fixture(scope="session")
def kafka_cluster_factory() -> Iterator[Callable[..., KafkaCluster]]:
    """``factory(security="sasl_ssl", acls=True, racks={0: "rack1", ...})`` → a started
    :class:`KafkaCluster` (the same object for the same arguments within the session). Its
    ``client_settings(user)`` / ``kafka_python_settings(user)`` / ``librdkafka_settings(user)`` and
    ``write_client_config(path, user)`` give clients what they need; users ``admin`` and ``alice``."""
    factory = _ClusterFactory()
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
def kafka_cluster_healthy(kafka_cluster: KafkaCluster) -> KafkaCluster:
    """``kafka_cluster`` after checking every broker is listed with its rack (waits up to 60 s)."""
    kafka_cluster.wait_ready(60.0)
    return kafka_cluster


__all__ = [
    "SECURE_CLUSTER_RACKS",
    "describe_brokers",
    "in_ci",
    "kafka_cluster",
    "kafka_cluster_factory",
    "kafka_cluster_healthy",
    "kafka_secure_cluster",
    "reuse_requested",
]
