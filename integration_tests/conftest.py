"""Shared fixtures/hooks for the live tests (the cluster itself comes from the ``kafka_cluster``
fixture of the ``kafka_placement.testing.pytest_plugin`` pytest plugin).

Rule enforced here: a test that stops or kills a broker must start it again before it finishes.
On a cluster this session owns, a broker left down is restarted and the offending test fails.
(On the shared dev cluster, ``KAFKA_PLACEMENT_REUSE=1``, other people's tests may be restarting a
broker at the same moment, so the check is skipped there.)
"""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _brokers_restarted(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if "kafka_cluster" not in request.fixturenames:
        return
    cluster = request.getfixturevalue("kafka_cluster")
    if not cluster.owns_containers:
        return
    down = cluster.not_running_brokers()
    for broker_id in down:
        cluster.start_broker(broker_id)
    if down:
        pytest.fail(f"{request.node.nodeid} left broker(s) {down} down; they were restarted", pytrace=False)


@pytest.fixture(autouse=True)
def _client_handles_released() -> Iterator[None]:
    """Collect what a test left in reference cycles once it ends. A confluent-kafka client caught in one
    (an AdminClient whose call raised KafkaException is) lives until the collector's next full run, and
    librdkafka's threads go on reconnecting to a cluster the test already stopped: CI printed two such
    handles' "Connection refused" lines every second for seven minutes."""
    yield
    gc.collect()


@pytest.fixture(scope="module")
def java_member_classpath(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The Java group member (``integration_tests/java/member``: Kafka's CooperativeStickyAssignor or our
    Java FailoverAssignor), compiled with javac against the pinned kafka-clients jar."""
    from kafka_placement.conformance.jars import JavaReferenceUnavailable, class_path

    javac = shutil.which("javac")
    try:
        jars = class_path()
        if javac is None:
            raise JavaReferenceUnavailable("javac not found")
    except JavaReferenceUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Java consumer cannot be built in CI: {exc}")
        pytest.skip(f"Java consumer cannot be built ({exc}); run scripts/fetch-java-reference.sh")
    source = Path(__file__).resolve().parent / "java" / "member"
    out = tmp_path_factory.mktemp("java-member")
    cp = ":".join(map(str, jars))
    subprocess.run(
        [javac, "-nowarn", "-d", str(out), "-cp", cp, *map(str, sorted(source.rglob("*.java")))],
        check=True,
        capture_output=True,
        text=True,
    )
    return f"{cp}:{out}"
