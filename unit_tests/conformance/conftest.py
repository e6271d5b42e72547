"""The Java reference for conformance tests: started once per session.

Outside CI a missing reference (no jars yet, no JDK) skips with the command that fixes it; in CI
(``CI=true``) it fails, so a broken fetch can never turn the conformance suite green.
"""

from __future__ import annotations

import os

import pytest

from kafka_placement.conformance.bridge import JavaReference, reference
from kafka_placement.conformance.jars import JavaReferenceUnavailable


@pytest.fixture(scope="session")
def java() -> JavaReference:
    try:
        return reference()
    except JavaReferenceUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Java reference unavailable in CI: {exc}")
        pytest.skip(f"Java reference unavailable ({exc}); run scripts/fetch-java-reference.sh")
