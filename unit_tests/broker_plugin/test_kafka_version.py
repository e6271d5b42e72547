"""The Kafka version a broker plugin is built for."""

from __future__ import annotations

import pytest

from kafka_placement.broker_plugin.kafka_version import check_kafka_version
from kafka_placement.errors import InvalidArgumentError


@pytest.mark.parametrize("good", ["4.0.0", "4.4.0", "5.0.1", "10.12.3"])
def test_releases_from_4_0(good: str) -> None:
    assert check_kafka_version(good) == good


@pytest.mark.parametrize(
    "bad",
    [
        "3.9.1",
        "4.4",
        "4.4.0-SNAPSHOT",
        "v4.4.0",
        "",
        " 4.4.0",
        "4.4.0\n",
        "99999.0.0",
        None,
        4.4,
        "4.4.0/../../x",
    ],
)
def test_everything_else_is_one_typed_error(bad: object) -> None:
    with pytest.raises(InvalidArgumentError, match="Kafka version"):
        check_kafka_version(bad)
