"""librdkafka's statistics compacted for a soak member: read from documents librdkafka itself writes
(a consumer with nowhere to connect, one partition assigned), and written a line each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_placement.clients.confluent.consumer_config import split_config
from kafka_placement.soak.rdkafka_stats import STATS_INTERVAL_MS, compact_stats, stats_settings


@pytest.fixture()
def document(librdkafka_statistics: str) -> str:
    return librdkafka_statistics


def test_the_assigned_partition_and_every_connection_are_kept(document: str) -> None:
    raw = json.loads(document)
    compact = compact_stats(document)
    assert compact["t"] == raw["time"]
    p = raw["topics"]["t"]["partitions"]["3"]
    fields = (
        "fetch_state",
        "leader",
        "next_offset",
        "app_offset",
        "hi_offset",
        "fetchq_cnt",
        "broker",
        "leader_epoch",
    )
    # librdkafka's internal partition -1 is not one of ours
    assert compact["partitions"] == {"t/3": [p[f] for f in fields]}
    assert set(compact["brokers"]) == {b["name"] for b in raw["brokers"].values()}
    coordinator = next(b for b in raw["brokers"].values() if b["name"] == "GroupCoordinator")
    state, age_ms, rxidle_ms, *_ = compact["brokers"]["GroupCoordinator"]
    assert (state, age_ms) == (coordinator["state"], coordinator["stateage"] // 1000)  # µs → ms
    assert rxidle_ms == -1 == coordinator["rxidle"]  # never received: librdkafka's -1 kept
    assert compact["cgrp"] == [raw["cgrp"]["state"], raw["cgrp"]["join_state"], raw["cgrp"]["stateage"]]


def test_each_document_is_a_line_and_a_bad_one_its_error(tmp_path: Path, document: str) -> None:
    path = tmp_path / "member-a.rdkstats"
    settings = stats_settings(path)
    assert settings["statistics.interval.ms"] == STATS_INTERVAL_MS
    settings["stats_cb"](document)
    settings["stats_cb"]("{not json")
    first, second = (json.loads(line) for line in path.read_text().splitlines())
    assert first == compact_stats(document)
    assert "error" in second


def test_our_consumer_hands_the_settings_to_librdkafka(tmp_path: Path) -> None:
    settings = stats_settings(tmp_path / "s")
    split = split_config({"bootstrap.servers": "127.0.0.1:1", "group.id": "g", **settings}, None)
    assert split.librdkafka["stats_cb"] is settings["stats_cb"]
    assert split.librdkafka["statistics.interval.ms"] == STATS_INTERVAL_MS
