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
    # Topic on brokers 0-3 (AdminUtils, fixed start 0), planned onto 0-5 with the racks of
    # the example in the Javadoc of Kafka's AdminUtils.assignReplicasToBrokers (org.apache.kafka.admin,
    # server-common): 0 rack1, 1 rack3, 2 rack3, 3 rack2, 4 rack2, 5 rack1.
    old = [Broker(b, RACKS[b]) for b in range(4)]
    current = {TopicPartition("t", p): r for p, r in assign_replicas_to_brokers(old, 12, 3, 0).items()}
    (tmp_path / "current.json").write_text(format_reassignment(current))
    brokers = ",".join(f"{b}:{r}" for b, r in RACKS.items())
    args = _parse(
        [
            "reassign",
            "plan",
            "--current",
            str(tmp_path / "current.json"),
            "--brokers",
            brokers,
            "--output",
            str(tmp_path / "plan.json"),
            "--rollback",
            str(tmp_path / "rollback.json"),
            "--json",
        ]
    )
    assert args.handler(args) == 0
    summary = json.loads(capsys.readouterr().out)
    # Racks 1 and 2 have one old broker each, so brokers 0 and 3 hold all 12 partitions; rack3's
    # brokers 1/2 hold 9/3. Targets are 6 each: 0 and 3 shed 6, broker 1 sheds 3 = 15 moves minimum.
    assert summary["moves"]["replicas_added"] == summary["lower_bound"]["replica_moves"] == 15
    plan = {
        m.topic_partition: list(m.replicas) for m in parse_reassignment((tmp_path / "plan.json").read_text())
    }
    rollback = {
        m.topic_partition: list(m.replicas)
        for m in parse_reassignment((tmp_path / "rollback.json").read_text())
    }
    assert set(plan) == set(rollback) and all(current[tp] == rollback[tp] for tp in plan)
    loads = {b: sum(b in r for r in {**current, **plan}.values()) for b in RACKS}
    assert set(loads.values()) == {6}  # 36 replicas on 6 brokers


def test_remove_broker_offline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    current = {TopicPartition("t", p): r for p, r in assign_replicas_to_brokers(range(4), 8, 2, 0).items()}
    (tmp_path / "c.json").write_text(format_reassignment(current))
    args = _parse(
        [
            "reassign",
            "plan",
            "--current",
            str(tmp_path / "c.json"),
            "--brokers",
            "0,1,2,3",
            "--remove-brokers",
            "3",
        ]
    )
    assert args.handler(args) == 0
    out = capsys.readouterr()
    assert "replicas moved 4 (lower bound 4" in out.err
    moves = parse_reassignment(out.out.strip().splitlines()[-1])
    assert all(3 not in m.replicas for m in moves)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1,1", "Broker list contains duplicate entries: 1"),
        ("a", "expects id or id:rack items"),
        ("", "names no broker"),
        ("-1", "broker id must be >= 0"),
    ],
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
        reassign.build_plan(
            _parse(
                [
                    "reassign",
                    "plan",
                    "--current",
                    str(tmp_path / "c.json"),
                    "--brokers",
                    "0,1",
                    "--remove-brokers",
                    "7",
                ]
            )
        )


def _run(argv: list[str]) -> int:
    from kafka_placement.cli import main

    return main(argv)


def test_plan_json_goes_to_stdout_and_summary_to_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    current = {TopicPartition("t", p): r for p, r in assign_replicas_to_brokers(range(3), 6, 2, 0).items()}
    (tmp_path / "c.json").write_text(format_reassignment(current))
    assert (
        _run(["reassign", "plan", "--current", str(tmp_path / "c.json"), "--brokers", "0,1,2,3", "--json"])
        == 0
    )
    out = capsys.readouterr()
    plan = parse_reassignment(out.out)  # stdout is exactly the plan: `> plan.json` works
    assert plan and all(set(m.replicas) <= {0, 1, 2, 3} for m in plan)
    summary, _ = json.JSONDecoder().raw_decode(out.err)
    assert summary["partitions_changed"] == len(plan)
    rollbacks = list(Path.cwd().glob("reassign-rollback-*.json"))  # written although not asked for
    assert len(rollbacks) == 1 and summary["rollback"] == rollbacks[0].name
    saved = {m.topic_partition: list(m.replicas) for m in parse_reassignment(rollbacks[0].read_text())}
    assert saved == {m.topic_partition: current[m.topic_partition] for m in plan}


def test_a_balanced_cluster_gives_an_empty_plan_every_action_accepts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    current = {TopicPartition("t", p): r for p, r in assign_replicas_to_brokers(range(3), 6, 2, 0).items()}
    (tmp_path / "c.json").write_text(format_reassignment(current))
    plan_file = tmp_path / "plan.json"
    assert (
        _run(
            [
                "reassign",
                "plan",
                "--current",
                str(tmp_path / "c.json"),
                "--brokers",
                "0,1,2",
                "--output",
                str(plan_file),
            ]
        )
        == 0
    )
    assert json.loads(plan_file.read_text()) == {"version": 1, "partitions": []}
    assert "nothing moves" in capsys.readouterr().out
    assert not list(tmp_path.glob("*rollback*"))  # nothing moves, nothing to roll back
    unreachable = ["--bootstrap-server", "127.0.0.1:1"]
    for action in (["apply", "--throttle", "1MB/s"], ["verify"], ["cancel"]):
        assert _run(["reassign", *action, *unreachable, "--plan", str(plan_file)]) == 0
        assert "the plan moves nothing" in capsys.readouterr().out


def test_plan_keeps_the_log_dirs_of_staying_replicas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "c.json").write_text(
        json.dumps(
            {
                "version": 1,
                "partitions": [
                    {"topic": "t", "partition": 0, "replicas": [0, 1], "log_dirs": ["/d/a", "/d/b"]},
                    {"topic": "t", "partition": 1, "replicas": [0, 1], "log_dirs": ["/d/b", "any"]},
                ],
            }
        )
    )
    assert (
        _run(
            [
                "reassign",
                "plan",
                "--current",
                str(tmp_path / "c.json"),
                "--brokers",
                "0,1,2",
                "--output",
                str(tmp_path / "p.json"),
                "--rollback",
                str(tmp_path / "r.json"),
            ]
        )
        == 0
    )
    plan = parse_reassignment((tmp_path / "p.json").read_text())
    assert len(plan) == 1  # one replica moves to broker 2
    (moved,) = plan
    known = {(0, 0): "/d/a", (0, 1): "/d/b", (1, 0): "/d/b"}
    assert moved.log_dirs == tuple(known.get((moved.partition, b), "any") for b in moved.replicas)
    rollback = parse_reassignment((tmp_path / "r.json").read_text())
    assert [m.log_dirs for m in rollback] == [tuple(known.get((moved.partition, b), "any") for b in (0, 1))]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["apply", "--throttle", "fast"], "--throttle must be a rate in bytes/s like 50MB/s"),
        (["apply", "--throttle", "0"], "allowed 1 .. 9223372036854775807 bytes/s"),
        (
            ["apply", "--replica-alter-log-dirs-throttle", "-1"],
            "--replica-alter-log-dirs-throttle must be a rate",
        ),
        (["apply", "--timeout", "0"], "--timeout must be in (0, 604800] seconds"),
        (["apply", "--timeout", "nan"], "--timeout must be in (0, 604800] seconds"),
        (["cancel", "--timeout", "-3"], "--timeout must be in (0, 604800] seconds"),
    ],
)
def test_bad_execution_options_exit_2_before_connecting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    (tmp_path / "p.json").write_text(format_reassignment({TopicPartition("t", 0): [1, 2]}))
    started = __import__("time").monotonic()
    code = _run(["reassign", *argv, "--bootstrap-server", "127.0.0.1:1", "--plan", str(tmp_path / "p.json")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1
    assert __import__("time").monotonic() - started < 2  # refused before any connection attempt


def test_cancel_needs_a_plan_or_all(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        _run(["reassign", "cancel", "--bootstrap-server", "127.0.0.1:1"])
    assert exit_.value.code == 2
    assert "one of the arguments --plan --all is required" in capsys.readouterr().err
