"""cli/client_logs.py: librdkafka's own lines reach the terminal only from the level the user sets.

A real confluent-kafka producer built from our connection settings, pointed at a closed loopback port:
librdkafka reports the refused connection (``FAIL``, its syslog level 3) on every poll.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

import pytest

from kafka_placement.cli.client_logs import configure_librdkafka_log
from kafka_placement.clients.connection import LIBRDKAFKA_LOGGER, connection_settings
from kafka_placement.errors import InvalidArgumentError


@pytest.fixture(autouse=True)
def _restore_logger() -> Iterator[None]:
    logger = logging.getLogger(LIBRDKAFKA_LOGGER)
    saved = (list(logger.handlers), logger.propagate, logger.level)
    yield
    logger.handlers, logger.propagate, logger.level = saved[0], saved[1], saved[2]


def _refused_connection_logs(seconds: float = 20) -> None:
    """Poll a producer to a closed port until librdkafka has logged its FAIL (or ``seconds`` pass)."""
    from confluent_kafka import Producer

    seen: list[logging.LogRecord] = []

    class Seen(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    probe = Seen(level=logging.DEBUG)
    logger = logging.getLogger(LIBRDKAFKA_LOGGER)
    logger.addHandler(probe)
    try:
        producer = Producer(connection_settings("127.0.0.1:1").confluent())
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not any("FAIL" in r.getMessage() for r in seen):
            producer.poll(0.2)
        producer.flush(0)
    finally:
        logger.removeHandler(probe)


def test_by_default_librdkafka_errors_are_not_shown(capfd: pytest.CaptureFixture[str]) -> None:
    configure_librdkafka_log(None, debug=False)
    _refused_connection_logs(seconds=5)
    captured = capfd.readouterr()
    assert "FAIL" not in captured.err and "FAIL" not in captured.out


def test_at_error_they_are_our_own_lines(capfd: pytest.CaptureFixture[str]) -> None:
    configure_librdkafka_log("error", debug=False)
    _refused_connection_logs()
    lines = capfd.readouterr().err.splitlines()
    fails = [line for line in lines if "FAIL" in line]
    assert fails and all(line.startswith("librdkafka: FAIL [rdkafka#producer-") for line in fails)
    assert not any(line.startswith("%3|") for line in lines)  # not librdkafka's own stderr format


def test_the_environment_sets_the_level_and_a_bad_one_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKA_PLACEMENT_LIBRDKAFKA_LOG_LEVEL", "warning")
    configure_librdkafka_log(None, debug=False)
    assert logging.getLogger(LIBRDKAFKA_LOGGER).level == logging.WARNING
    monkeypatch.setenv("KAFKA_PLACEMENT_LIBRDKAFKA_LOG_LEVEL", "loud")
    with pytest.raises(InvalidArgumentError, match="librdkafka log level 'LOUD' is not one of DEBUG"):
        configure_librdkafka_log(None, debug=False)
