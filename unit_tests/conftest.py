"""Shared fixtures of the unit tests.

``java``: Kafka's own Java classes (the conformance bridge), the oracle of every Java-exactness
test, started once per session. ``librdkafka_statistics``: a statistics document librdkafka wrote.

Outside CI a missing reference (no jars yet, no JDK) skips with the command that fixes it; in CI
(``CI=true``) it fails, so a broken fetch can never turn the conformance suite green.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from kafka_placement.conformance.bridge import JavaReference


@pytest.fixture(scope="session")
def java() -> JavaReference:
    from kafka_placement.conformance.bridge import reference
    from kafka_placement.conformance.jars import JavaReferenceUnavailable

    try:
        return reference()
    except JavaReferenceUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Java reference unavailable in CI: {exc}")
        pytest.skip(f"Java reference unavailable ({exc}); run scripts/fetch-java-reference.sh")


@pytest.fixture(scope="session")
def librdkafka_statistics() -> str:
    """One statistics document written by librdkafka itself: a group consumer (``group.id`` g) with
    nowhere to connect (port 1) and partition 3 of topic ``t`` assigned at offset 5."""
    import time

    import confluent_kafka

    docs: list[str] = []
    consumer = confluent_kafka.Consumer(
        {
            "group.id": "g",
            "bootstrap.servers": "127.0.0.1:1",
            "statistics.interval.ms": 100,
            "stats_cb": docs.append,
            "log_level": 0,
        }
    )
    try:
        consumer.assign([confluent_kafka.TopicPartition("t", 3, 5)])
        deadline = time.monotonic() + 10
        while not docs and time.monotonic() < deadline:
            consumer.poll(0.05)
    finally:
        consumer.close()
    assert docs, "librdkafka wrote no statistics within 10 s"
    return docs[0]
