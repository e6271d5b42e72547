"""Repository-wide pytest options shared by unit_tests/ and integration_tests/."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

# CI draws the same 200 examples every run (derandomized: a red CI must mean the change, not the
# draw — stop 39 went red on a planner case a random draw rarely hits: none in 3,000 seeds tried); a
# developer's run draws 60 fresh ones each time and --full 2,000, so new cases are still looked for.
for _name, _examples in (("ci", 200), ("dev", 60), ("full", 2000)):
    settings.register_profile(
        _name,
        max_examples=_examples,
        derandomize=_name == "ci",
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
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
    if config.getoption("--full"):
        settings.load_profile("full")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``full`` (long soaks, the Kafka version matrix, 10,000-scenario runs) are deselected
    without ``--full``: not collected as skipped, so a CI summary's skips are only ever real ones."""
    if config.getoption("--full"):
        return
    deselected = [item for item in items if "full" in item.keywords]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if "full" not in item.keywords]
