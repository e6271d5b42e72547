"""``kafka-placement rebalance plan --loads``: plan JSON on stdout (Kafka's format), table on stderr,
``--json`` summary, HTML report, one-line errors with exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kafka_placement.cli import main
from kafka_placement.replicas.reassignment_json import parse_reassignment

DOC: dict[str, Any] = {
    "brokers": [{"id": i, "rack": f"r{i % 3}"} for i in range(6)],
    "partitions": [
        {
            "topic": "big" if p < 6 else "small",
            "partition": p,
            "replicas": [p % 3, (p % 3 + 1) % 3],
            "size": 10**9 if p < 6 else 10**6,
            "bytes_in": 1000 * (p + 1),
            "bytes_out": 2000 * (p + 1),
        }
        for p in range(30)
    ],
}


@pytest.fixture
def loads(tmp_path: Path) -> Path:
    path = tmp_path / "loads.json"
    path.write_text(json.dumps(DOC))
    return path


def test_plan_prints_kafka_json_and_table(loads: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rebalance", "plan", "--loads", str(loads)]) == 0
    out, err = capsys.readouterr()
    moves = parse_reassignment(out)
    # brokers 3, 4 and 5 held nothing: the plan gives them replicas
    assert {b for m in moves for b in m.replicas} & {3, 4, 5}
    assert "moved in" in err and "disk within" in err and "lower bound" in err


def test_json_summary_and_report(loads: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report"
    assert (
        main(
            [
                "rebalance",
                "plan",
                "--loads",
                str(loads),
                "--json",
                "--report",
                str(report),
                "--max-bytes-moved",
                "3GB",
            ]
        )
        == 0
    )
    out, _ = capsys.readouterr()
    summary = json.loads(out)
    assert {"brokers", "bytes_moved", "goals", "plan"} <= set(summary)
    assert summary["bytes_moved"] <= 3e9
    assert len(summary["brokers"]) == 6 and summary["plan"]["version"] == 1
    assert (report / "report.html").read_text().count("<img") == 1 and (report / "brokers.png").stat().st_size


def test_remove_brokers(loads: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rebalance", "plan", "--loads", str(loads), "--remove-brokers", "0", "--goals", "disk"]) == 0
    out, _ = capsys.readouterr()
    moves = parse_reassignment(out)
    assert moves and all(0 not in m.replicas for m in moves)


def test_topic_replica_goal(loads: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--goals topic_replicas``: Cruise Control's limits for "small" (24 partitions × RF 2 over 6
    brokers: average 8, upper ceil(8 × 2.8) = 23, lower 0) hold before; brokers 0..2 hold 16 of its
    replicas each and 3..5 none, a spread of 16 (replicas on p % 3 and p % 3 + 1)."""
    assert main(["rebalance", "plan", "--loads", str(loads), "--goals", "disk,topic_replicas", "--json"]) == 0
    out, _ = capsys.readouterr()
    status = json.loads(out)["goals"]["topic_replicas"]
    assert status["met_before"] and status["met"] and status["limits"] == [0, 23]
    assert status["widest_spread_before"] == 16
    assert main(["rebalance", "plan", "--loads", str(loads), "--goals", "topic_replicas"]) == 0
    assert "topic_replicas (each topic's replicas per broker" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["--band", "0"], "band must be a number in (0, 1], got 0"),
        (["--goals", "cpu"], "unknown goal 'cpu'"),
        (["--max-bytes-moved", "lots"], "--max-bytes-moved must be a rate"),
        (["--remove-brokers", "42"], "cannot remove broker 42"),
    ],
)
def test_bad_options_one_line_exit_2(
    loads: Path, args: list[str], text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rebalance", "plan", "--loads", str(loads), *args]) == 2
    _, err = capsys.readouterr()
    assert text in err and len(err.strip().splitlines()) == 1


def test_needs_a_source(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rebalance", "plan"]) == 2
    assert "--loads FILE or --bootstrap-server" in capsys.readouterr().err
