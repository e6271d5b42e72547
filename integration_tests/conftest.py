"""Shared fixtures/hooks for the live tests (the cluster itself comes from the ``kafka_cluster``
fixture of the ``kafka_placement.testing.pytest_plugin`` pytest plugin).

Rule enforced here: a test that stops or kills a broker must start it again before it finishes.
On a cluster this session owns, a broker left down is restarted and the offending test fails.
(On the shared dev cluster, ``KAFKA_PLACEMENT_REUSE=1``, other people's tests may be restarting a
broker at the same moment, so the check is skipped there.)
"""

from __future__ import annotations

from collections.abc import Iterator

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
