"""The soak's reassignment in flight: the commands it runs, the outcome it records (a failed plan is
planned again, a failed apply is reported with the command's last line) and the copy check."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kafka_placement.soak import operation
from kafka_placement.soak.operation import ThrottledReassignment, _copy_problems


class ReplicaDir:
    def __init__(self, size: int) -> None:
        self.size = size


class TP:
    def __init__(self, partition: int) -> None:
        self.partition = partition


class Admin:
    """kafka-python 3's KafkaAdminClient answers for partitions given as (partition, replicas, leader)."""

    def __init__(self, partitions: list[tuple[int, list[int], int]]) -> None:
        self.partitions = partitions

    def describe_cluster(self) -> dict[str, Any]:
        return {"brokers": [{"broker_id": b, "rack": None} for b in range(6)]}

    def describe_topics(self, topics: list[str]) -> list[dict[str, Any]]:
        return [
            {
                "name": topics[0],
                "error_code": 0,
                "partitions": [
                    {
                        "error_code": 0,
                        "partition_index": p,
                        "leader_id": leader,
                        "replica_nodes": replicas,
                        "isr_nodes": replicas,
                    }
                    for p, replicas, leader in self.partitions
                ],
            }
        ]


def dirs(sizes: dict[tuple[int, int], int]) -> Any:
    return lambda _admin, _topics: {(TP(p), b): ReplicaDir(size) for (p, b), size in sizes.items()}


def test_whole_copies_as_planned_have_no_problem_and_each_kind_of_fault_is_named() -> None:
    admin = Admin([(0, [1, 3, 4], 3), (1, [0, 2, 4], 0)])
    target = {"0": [4, 3, 1]}  # the plan moved partition 0 only; order is not compared
    sizes = {(0, 1): 900, (0, 3): 900, (0, 4): 900, (1, 0): 50, (1, 2): 50, (1, 4): 50}
    assert _copy_problems(admin, "t", target, dirs(sizes)) == []
    assert _copy_problems(admin, "t", {"0": [1, 3, 5]}, dirs(sizes)) == [
        "partition 0: replicas [1, 3, 4], the plan said [1, 3, 5]"
    ]
    assert _copy_problems(admin, "t", target, dirs({**sizes, (0, 4): 512})) == [
        "partition 0: replicas [4] differ from leader 3's 900 bytes"
    ]
    admin.partitions[1] = (1, [0, 2, 4], -1)
    assert _copy_problems(admin, "t", target, dirs(sizes)) == ["partition 1: no leader answering"]


def run_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answers: list[tuple[int, str]]
) -> ThrottledReassignment:
    """Run the operation with ``kafka-placement reassign`` replaced by canned (exit code, stderr) answers."""
    calls: list[tuple[str, ...]] = []

    def cli(self: ThrottledReassignment, *argv: str, timeout_s: float) -> subprocess.CompletedProcess[str]:
        calls.append(argv)
        code, err = answers.pop(0)
        if argv[0] == "plan" and code == 0:
            plan = {"version": 1, "partitions": [{"topic": "t", "partition": 5, "replicas": [0, 1, 4]}]}
            Path(argv[argv.index("--output") + 1]).write_text(json.dumps(plan))
        return subprocess.CompletedProcess(list(argv), code, "", err)

    monkeypatch.setattr(ThrottledReassignment, "_cli", cli)
    monkeypatch.setattr(operation, "PLAN_RETRY_S", 0.0)
    monkeypatch.setattr(operation, "APPLY_RETRY_S", 0.0)
    op = ThrottledReassignment(tmp_path, "127.0.0.1:9092", tmp_path / "client.properties", "t", 2)
    op.start(0.0)
    op.join(10.0)
    op.calls = calls  # type: ignore[attr-defined]
    return op


def test_the_drain_is_planned_by_our_planner_then_applied_throttled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    op = run_with(tmp_path, monkeypatch, [(0, ""), (0, "")])
    plan_argv, apply_argv = op.calls  # type: ignore[attr-defined]
    assert plan_argv[:5] == ("plan", "--topic", "t", "--remove-brokers", "2")
    assert apply_argv[:5] == (
        "apply",
        "--plan",
        str(tmp_path / "reassignment-plan.json"),
        "--throttle",
        operation.THROTTLE,
    )
    assert op.outcome["completed"] is True and "error" not in op.outcome
    assert (op.outcome["partitions_moved"], op.outcome["target"]) == (1, {"5": [0, 1, 4]})


def test_a_plan_refused_while_a_broker_is_down_is_planned_again_and_a_failed_apply_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    refused = "kafka-placement reassign: error: broker 2 is not in the cluster"
    timed_out = "waiting\nreassignment timed out: 3 partitions in flight"
    op = run_with(tmp_path, monkeypatch, [(1, refused), (0, ""), (1, timed_out)])
    assert [argv[0] for argv in op.calls] == ["plan", "plan", "apply"]  # type: ignore[attr-defined]
    assert op.outcome["completed"] is False
    assert op.outcome["error"] == "reassign apply exited 1: reassignment timed out: 3 partitions in flight"


def test_a_plan_refused_every_time_ends_the_operation_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    op = run_with(tmp_path, monkeypatch, [(2, "error: no such topic")] * operation.PLAN_ATTEMPTS)
    assert op.outcome["completed"] is False
    assert op.outcome["error"] == "reassign plan exited 2: error: no such topic"


def test_an_apply_refused_before_submitting_because_a_broker_is_down_is_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    down = (
        "kafka-placement reassign: error: could not set the reassignment throttles: broker(s) [3] "
        "unreachable; nothing was submitted (an unthrottled move is what --throttle is meant to prevent)"
    )
    # no broker answering the connection (a 30-minute secured soak met it at load average 290)
    unreachable = (
        "kafka-placement reassign: error: cannot connect to 127.0.0.1:35707,127.0.0.1:33977 "
        "(SASL_SSL/SCRAM-SHA-512): connection refused; check the host and port of "
        "--bootstrap-server and that the broker runs"
    )
    # a broker of the plan killed after planning: out of the metadata, so apply's check refuses it before
    # submitting (session 16's 30-minute soak ended its reassignment on this)
    unknown = (
        "kafka-placement reassign: error: Unknown broker id 3 (in kp-soak-427bbd-records-0; "
        "cluster brokers: [0, 1, 2, 4, 5])"
    )
    # the cluster not answering mid-way (session 16's second 30-minute run): the same plan is resubmitted
    silent = (
        "kafka-placement reassign: error: cannot apply the reassignment on 127.0.0.1:40821 "
        "(SASL_SSL/SCRAM-SHA-512): no broker answered within 15 s; check the address, "
        "security.protocol and credentials (a longer --timeout if the cluster is slow)"
    )
    op = run_with(
        tmp_path, monkeypatch, [(0, ""), (1, down), (2, unreachable), (2, unknown), (2, silent), (0, "")]
    )
    assert [argv[0] for argv in op.calls] == ["plan"] + ["apply"] * 5  # type: ignore[attr-defined]
    assert op.outcome["completed"] is True and "error" not in op.outcome
    assert op.outcome["apply_retries"] == 4
    # refused every time: the last refusal is the outcome
    op = run_with(tmp_path, monkeypatch, [(0, "")] + [(1, down)] * operation.APPLY_ATTEMPTS)
    assert op.outcome["completed"] is False and op.outcome["error"].endswith("meant to prevent)")


def test_throttles_apply_could_not_clear_are_cleared_by_verify_and_any_left_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kafka_placement.clients.kafka_python import admin as kp_admin
    from kafka_placement.clients.kafka_python import reassignment as kp

    class Broker:
        def __init__(self, broker_id: int) -> None:
            self.id = broker_id

    set_on = {3: {"leader.replication.throttled.rate": "524288"}}
    verified: list[tuple[str, ...]] = []

    def cli(self: ThrottledReassignment, *argv: str, timeout_s: float) -> subprocess.CompletedProcess[str]:
        verified.append(argv)
        if clears:
            set_on.clear()
        return subprocess.CompletedProcess(list(argv), 0, "", "")

    monkeypatch.setattr(ThrottledReassignment, "_cli", cli)
    monkeypatch.setattr(kp_admin, "brokers", lambda _admin: [Broker(b) for b in range(6)])
    monkeypatch.setattr(kp, "throttles", lambda _admin, brokers, topics: kp.Throttles(dict(set_on), {}))
    op = ThrottledReassignment(tmp_path, "127.0.0.1:9092", tmp_path / "client.properties", "t", 2)
    clears = True
    assert op._throttles_left(object()) == []
    assert verified[0][:3] == ("verify", "--plan", str(tmp_path / "reassignment-plan.json"))
    set_on[3] = {"leader.replication.throttled.rate": "524288"}
    clears = False
    assert op._throttles_left(object()) == ["broker 3: ['leader.replication.throttled.rate']"]
