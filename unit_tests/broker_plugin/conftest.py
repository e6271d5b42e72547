"""The Java harness (our compiled broker plugin in a JVM), started once for the package's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from unit_tests.broker_plugin.harness import Harness, start_harness


@pytest.fixture(scope="session")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    started = start_harness(tmp_path_factory.mktemp("broker-plugin"))
    yield started
    started.close()
