"""pytest plugin (entry point ``pytest11``): the session fixture ``kafka_cluster``.

- Starts a fresh :class:`KafkaCluster` for the session and removes it at the end, or, with env
  ``KAFKA_PLACEMENT_REUSE=1``, attaches to the shared dev cluster started by
  ``python -m kafka_placement.testing up`` (never stops it).
- In CI (env ``CI=true``) any failure to get a cluster FAILS the tests with the reason. Outside CI a
  missing Docker engine (or, with reuse, a missing shared cluster) SKIPS them with a clear message;
  other start-up failures fail.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator

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


def _stop_on_sigterm(cluster: KafkaCluster) -> None:
    """`timeout pytest …` sends SIGTERM, which would skip fixture teardown: remove the containers first."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def handler(signum: int, frame: object) -> None:
        cluster.stop()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

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


@pytest.fixture()
def kafka_cluster_healthy(kafka_cluster: KafkaCluster) -> KafkaCluster:
    """``kafka_cluster`` after checking every broker is listed with its rack (waits up to 60 s)."""
    kafka_cluster.wait_ready(60.0)
    return kafka_cluster


__all__ = ["describe_brokers", "in_ci", "kafka_cluster", "kafka_cluster_healthy", "reuse_requested"]
