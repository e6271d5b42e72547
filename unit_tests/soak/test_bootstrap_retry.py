"""soak/bootstrap_retry.py: a member's client built again after each bootstrap failure, until built or
told to close; what kafka-python really raises for an unreachable cluster is among the errors retried."""

from __future__ import annotations

import threading

import pytest
from kafka.errors import KafkaTimeoutError

from kafka_placement.soak import bootstrap_retry
from kafka_placement.soak.bootstrap_retry import BOOTSTRAP_ERRORS, built_when_reachable


def test_kafka_pythons_own_failure_to_bootstrap_is_one_of_the_errors_retried() -> None:
    from kafka import KafkaConsumer

    with pytest.raises(BOOTSTRAP_ERRORS):  # loopback, nothing listens: no broker is reached
        KafkaConsumer(bootstrap_servers="127.0.0.1:1", bootstrap_timeout_ms=500)


def test_built_after_failures_each_logged(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(bootstrap_retry, "RETRY_PAUSE_S", 0.01)
    attempts: list[int] = []

    def build() -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise KafkaTimeoutError("Unable to bootstrap from 127.0.0.1:1")
        return "consumer"

    assert built_when_reachable(build, threading.Event(), "kp-high") == "consumer"
    assert len(attempts) == 3
    assert caplog.text.count("kp-high: could not bootstrap (attempt") == 2


def test_none_once_closing_and_other_errors_raised() -> None:
    closing = threading.Event()

    def unreachable() -> str:
        closing.set()  # told to close meanwhile
        raise KafkaTimeoutError("Unable to bootstrap")

    assert built_when_reachable(unreachable, closing, "m") is None

    def broken() -> str:
        raise ValueError("bad setting")

    with pytest.raises(ValueError, match="bad setting"):
        built_when_reachable(broken, threading.Event(), "m")
