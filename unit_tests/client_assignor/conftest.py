"""The Java harness (our compiled client-side assignor in a JVM), started once for the package's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from unit_tests.client_assignor.harness import ClientHarness, start_client_harness


@pytest.fixture(scope="session")
def client_harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClientHarness]:
    started = start_client_harness(tmp_path_factory.mktemp("client-assignor"))
    yield started
    started.close()
