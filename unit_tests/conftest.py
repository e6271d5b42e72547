"""Shared fixtures of the unit tests.

``java``: Kafka's own Java classes (the conformance bridge), the oracle of every Java-exactness
test, started once per session.

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
