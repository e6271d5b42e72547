"""clients/confluent/statistics_tap.py: the guard gets every document, the application's callback one per
its own interval, and nothing a guard raises reaches librdkafka's callback."""

from __future__ import annotations

import logging

import pytest

from kafka_placement.clients.confluent.statistics_tap import StatisticsTap
from kafka_placement.errors import ConsumerConfigError


def test_the_guard_reads_every_document_and_the_application_one_per_its_interval() -> None:
    now = [0.0]
    read: list[str] = []
    got: list[str] = []
    tap = StatisticsTap(read.append, 1000, guard="g", clock=lambda: now[0])
    settings = tap.settings({"statistics.interval.ms": 3000, "stats_cb": got.append, "group.id": "x"})
    assert settings == {"statistics.interval.ms": 1000, "stats_cb": tap, "group.id": "x"}
    for second in range(7):
        now[0] = float(second)
        settings["stats_cb"](str(second))
    assert read == [str(s) for s in range(7)]
    assert got == ["0", "3", "6"]


def test_an_application_callback_without_an_interval_is_never_called() -> None:
    got: list[str] = []
    tap = StatisticsTap(lambda text: None, 1000, guard="g")
    tap.settings({"stats_cb": got.append})["stats_cb"]("{}")
    assert got == []


def test_a_failing_guard_is_logged_and_skipped_and_the_application_still_gets_the_document(
    caplog: pytest.LogCaptureFixture,
) -> None:
    got: list[str] = []

    def read(text: str) -> None:
        raise KeyError("brokers")

    tap = StatisticsTap(read, 1000, guard="the watch")
    cb = tap.settings({"stats_cb": got.append, "statistics.interval.ms": 1})["stats_cb"]
    with caplog.at_level(logging.WARNING):
        cb("{}")
    assert got == ["{}"]
    assert "the watch: a statistics document not read (KeyError('brokers')); skipped" in caplog.text


@pytest.mark.parametrize(
    ("config", "named"),
    [({"stats_cb": 3}, "stats_cb must be callable, got 3"), ({"statistics.interval.ms": "x"}, "got 'x'")],
)
def test_bad_settings_are_refused_naming_the_value(config: dict[str, object], named: str) -> None:
    with pytest.raises(ConsumerConfigError, match=named):
        StatisticsTap(lambda text: None, 1000, guard="g").settings(config)
