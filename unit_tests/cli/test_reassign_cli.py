# ruff: noqa: E501  (literal fixtures and CLI argument lists read better on one line)
"""``kafka-placement reassign``: offline planning end to end, broker parsing, errors."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from kafka_placement.cli import reassign
from kafka_placement.errors import InvalidArgumentError, InvalidBrokerError
from kafka_placement.replicas import Broker, assign_replicas_to_brokers
from kafka_placement.replicas.reassignment_json import format_reassignment, parse_reassignment
from kafka_placement.vocabulary import TopicPartition

RACKS = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="kafka-placement")
    sub = parser.add_subparsers(dest="command", required=True)
    reassign.register(sub)
    return parser.parse_args(argv)


def test_offline_plan_onto_six_brokers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Topic on brokers 0-3 (AdminUtils, fixed start 0), planned onto 0-5 with the seed-000 racks.
    old = [Broker(b, RACKS[b]) for b in range(4)]
    current = {TopicPartition("t", p): r for p, r in assign_replicas_to_brokers(old, 12, 3, 0).items()}
    (tmp_path / "current.json").write_text(format_reassignment(current))
    brokers = ",".join(f"{b}:{r}" for b, r in RACKS.items())
    args = _parse(["reassign", "plan", "--current", str(tmp_path / "current.json"), "--brokers", brokers,
                   "--output", str(tmp_path / "plan.json"), "--rollback", str(tmp_path / "rollback.json"), "--json"])
    assert args.handler(args) == 0
    summary = json.loads(capsys.readouterr().out)
    # Racks 1 and 2 have one old broker each, so brokers 0 and 3 hold all 12 partitions; rack3's
    # brokers 1/2 hold 9/3. Targets are 6 each: 0 and 3 shed 6, broker 1 sheds 3 = 15 moves minimum.
    assert summary["moves"]["replicas_added"] == summary["lower_bound"]["replica_moves"] == 15
    plan = {m.topic_partition: list(m.replicas) for m in parse_reassignment((tmp_path / "plan.json").read_text())}
    rollback = {m.topic_partition: list(m.replicas) for m in parse_reassignment((tmp_path / "rollback.json").read_text())}
    assert set(plan) == set(rollback) and all(current[tp] == rollback[tp] for tp in plan)
    loads = {b: sum(b in r for r in {**current, **plan}.values()) for b in RACKS}
    assert set(loads.values()) == {6}  # 36 replicas on 6 brokers


def test_remove_broker_offline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    current = {TopicPartition("t", p): r for p, r in assign_replicas_to_brokers(range(4), 8, 2, 0).items()}
    (tmp_path / "c.json").write_text(format_reassignment(current))
    args = _parse(["reassign", "plan", "--current", str(tmp_path / "c.json"), "--brokers", "0,1,2,3",
                   "--remove-brokers", "3"])
    assert args.handler(args) == 0
    out = capsys.readouterr()
    assert "replicas moved 4 (lower bound 4" in out.err
    moves = parse_reassignment(out.out.strip().splitlines()[-1])
    assert all(3 not in m.replicas for m in moves)


@pytest.mark.parametrize(
    ("text", "message"),
    [("1,1", "Broker list contains duplicate entries: 1"), ("a", "expects id or id:rack items"),
     ("", "names no broker"), ("-1", "broker id must be >= 0")],
)
def test_parse_brokers_errors(text: str, message: str) -> None:
    with pytest.raises(InvalidBrokerError, match=message):
        reassign.parse_brokers(text)


def test_plan_needs_a_source_and_racks(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError, match="needs --bootstrap-servers or --current"):
        reassign.build_plan(_parse(["reassign", "plan", "--brokers", "0"]))
    (tmp_path / "c.json").write_text(format_reassignment({TopicPartition("t", 0): [0]}))
    with pytest.raises(InvalidArgumentError, match="needs --brokers"):
        reassign.build_plan(_parse(["reassign", "plan", "--current", str(tmp_path / "c.json")]))
    with pytest.raises(InvalidBrokerError, match=r"unknown broker\(s\) \[7\]"):
        reassign.build_plan(_parse(["reassign", "plan", "--current", str(tmp_path / "c.json"),
                                    "--brokers", "0,1", "--remove-brokers", "7"]))
