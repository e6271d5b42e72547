"""``kafka-placement audit``: report formatting and findings from a snapshot (client stubbed)."""

from __future__ import annotations

import argparse
import json

import pytest

from kafka_placement.cli import audit as audit_cli
from kafka_placement.replicas.placement_audit import ClusterSnapshot, PartitionState
from kafka_placement.vocabulary import Broker, TopicPartition

BROKERS = tuple(Broker(b, r) for b, r in {0: "a", 1: "a", 2: "b", 3: "b"}.items())


def _snapshot() -> ClusterSnapshot:
    parts = {
        TopicPartition("good", 0): PartitionState((0, 2), 0, (0, 2)),
        TopicPartition("good", 1): PartitionState((3, 1), 3, (3, 1)),
        TopicPartition("bad", 0): PartitionState(
            (0, 1), 1, (0,)
        ),  # one rack, leader not preferred, ISR shrunk
        TopicPartition("bad", 1): PartitionState((0, 2), None, (2,)),
    }
    return ClusterSnapshot(BROKERS, parts)


def _run(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> int:
    monkeypatch.setattr(audit_cli, "take_snapshot", lambda settings, topics, client: _snapshot())
    monkeypatch.setattr(audit_cli, "check_connection", lambda settings: {})
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    audit_cli.register(sub)
    args = parser.parse_args(argv)
    return int(args.handler(args))


def test_json_report_findings(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(monkeypatch, ["audit", "--bootstrap-servers", "x:1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    by_topic = {t["topic"]: t for t in report["topics"]}
    assert by_topic["good"]["findings"] == []
    bad = " | ".join(by_topic["bad"]["findings"])
    assert "1 partition(s) without full rack diversity: [0]" in bad
    assert "1 partition(s) without a leader: [1]" in bad
    assert "1 partition(s) not led by their preferred replica" in bad
    assert "2 under-replicated partition(s)" in bad
    assert report["cluster"]["replicas_per_broker"] == {"0": 3, "1": 2, "2": 2, "3": 1}


def test_text_report_and_exit_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        _run(
            monkeypatch, ["audit", "--bootstrap-servers", "x:1", "--topic", "good,bad", "--fail-on-findings"]
        )
        == 1
    )
    out = capsys.readouterr().out
    assert "brokers: 0(a), 1(a), 2(b), 3(b)" in out and "findings: 6" in out
    assert "bad: preferred leaders per broker spread 2 > 1 achievable by reordering replicas" in out
    assert "bad: replicas per broker spread 2 > 0 achievable with these racks" in out
