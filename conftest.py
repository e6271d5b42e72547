"""Repository-wide pytest options shared by unit_tests/ and integration_tests/."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

# CI runs a few more examples than a developer's quick run; both are deterministic per seed database.
settings.register_profile(
    "ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "dev", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci" if os.environ.get("CI") == "true" else "dev")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--full",
        action="store_true",
        default=False,
        help="also run the long randomized runs (tests marked `full`, e.g. 10,000 conformance scenarios)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "full: the long randomized run (enable with --full)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--full"):
        return
    skip_full = pytest.mark.skip(
        reason="not in the default run (a long run or a machine-wide fault): pass --full to include it"
    )
    for item in items:
        if "full" in item.keywords:
            item.add_marker(skip_full)
