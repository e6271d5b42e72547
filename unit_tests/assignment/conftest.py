"""Fixtures of the assignment tests: Kafka's own Java assignors as an oracle (via the conformance
bridge). Outside CI a missing Java reference skips; in CI it fails."""

from __future__ import annotations

import os
from typing import Any

import pytest


@pytest.fixture(scope="session")
def java_assignors() -> Any:
    from kafka_placement.conformance.bridge import reference
    from kafka_placement.conformance.jars import JavaReferenceUnavailable

    try:
        return reference()
    except JavaReferenceUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Java reference unavailable in CI: {exc}")
        pytest.skip(f"Java reference unavailable ({exc}); run scripts/fetch-java-reference.sh")
