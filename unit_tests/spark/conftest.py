"""One session-scoped local Spark for every test marked ``spark`` (Spark start-up costs seconds)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    pytest.importorskip("pyspark")
    from kafka_placement.spark.session import spark_session

    session = spark_session("local[2]", app_name="kafka-placement-unit-tests")
    yield session
    session.stop()
