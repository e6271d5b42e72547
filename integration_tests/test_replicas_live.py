"""Live proofs of replica → broker/rack placement on the rack-labelled cluster.

- a topic created with our rack-aware AdminUtils placement (fixed start 0, 7 partitions, RF 3) reads
  back from describe_topics exactly as the example in the Javadoc of Kafka's
  ``AdminUtils.assignReplicasToBrokers`` (org.apache.kafka.admin, server-common: 0 → 0,3,1 … 6 → 0,4,2);
  the same through confluent-kafka
  with our balanced placement;
- the broker accepts explicit assignments without any rack check (so our validation matters);
- a topic placed by Kafka's own controller (StripedReplicaPlacer): our audit through kafka-python and
  through confluent-kafka reads the same placement, full rack diversity, and reports its spreads;
- a topic on brokers 0–3 is planned onto 0–5 with our planner, applied with
  AlterPartitionReassignments, completes, verifies, and moved exactly the lower bound.

Against the shared dev cluster: ``KAFKA_PLACEMENT_REUSE=1 pytest integration_tests/test_replicas_live.py``.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kafka_placement.replicas import assign_replicas_to_brokers
from kafka_placement.replicas.balanced import place_balanced
from kafka_placement.replicas.placement_audit import audit
from kafka_placement.replicas.planner import plan_reassignment
from kafka_placement.replicas.quotas import replica_quotas
from kafka_placement.vocabulary import Broker, TopicPartition

pytestmark = pytest.mark.integration

JAVADOC_RACKS = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
JAVADOC_VECTOR = {
    0: [0, 3, 1],
    1: [3, 1, 5],
    2: [1, 5, 4],
    3: [5, 4, 2],
    4: [4, 2, 0],
    5: [2, 0, 3],
    6: [0, 4, 2],
}


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="module")
def admin(kafka_cluster: Any) -> Iterator[Any]:
    from kafka import KafkaAdminClient

    client = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap_servers, client_id="replicas-live")
    created: list[str] = []
    client.created_topics = created  # type: ignore[attr-defined]
    yield client
    if created:
        with contextlib.suppress(Exception):  # cleanup only
            client.delete_topics(created)
    client.close()


@pytest.fixture(scope="module")
def confluent_admin(kafka_cluster: Any) -> Any:
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": kafka_cluster.bootstrap_servers})


def test_cluster_racks_are_the_javadoc_example(admin: Any, kafka_cluster: Any) -> None:
    from kafka_placement.clients.kafka_python import admin as kp_admin

    brokers = kp_admin.brokers(admin)
    assert {b.id: b.rack for b in brokers} == JAVADOC_RACKS == dict(kafka_cluster.broker_racks)


def test_rack_aware_adminutils_placement_reads_back_exactly(admin: Any) -> None:
    from kafka_placement.clients.kafka_python import admin as kp_admin

    brokers = kp_admin.brokers(admin)
    placement = assign_replicas_to_brokers(brokers, 7, 3, 0)
    assert placement == JAVADOC_VECTOR
    topic = _name("replicas-adminutils")
    kp_admin.create_topic(admin, topic, placement)
    admin.created_topics.append(topic)
    snap = kp_admin.snapshot(admin, [topic])
    assert {tp.partition: r for tp, r in snap.assignment([topic]).items()} == JAVADOC_VECTOR


def test_balanced_placement_through_confluent(admin: Any, confluent_admin: Any) -> None:
    from kafka_placement.clients.confluent import admin as cf_admin

    brokers = cf_admin.brokers(confluent_admin)
    placement = place_balanced(brokers, 12, 3, seed=1)
    topic = _name("replicas-balanced")
    # create_topic returns once DescribeTopics shows every partition with a leader (CreateTopics
    # alone returned before the brokers' metadata caches knew the topic: UNKNOWN_TOPIC_OR_PART)
    cf_admin.create_topic(confluent_admin, topic, placement)
    admin.created_topics.append(topic)
    snap = cf_admin.snapshot(confluent_admin, [topic])
    assert len(snap.partitions) == 12 and all(s.leader is not None for s in snap.partitions.values())
    assert [snap.assignment()[TopicPartition(topic, p)] for p in range(12)] == placement
    report = audit(snap, [topic]).topics[0]
    assert report.metrics.under_diverse == []
    assert report.metrics.replica_spread == 0 and report.metrics.leader_spread == 0  # 36/6, 12/6


def test_broker_does_not_rack_check_explicit_assignments(admin: Any) -> None:
    from kafka_placement.clients.kafka_python import admin as kp_admin
    from kafka_placement.errors import InvalidArgumentError

    with pytest.raises(InvalidArgumentError, match="distinct racks are required"):
        kp_admin.create_topic(admin, _name("replicas-rejected"), {0: [1, 2]})
    topic = _name("replicas-same-rack")
    admin.create_topics({topic: {"assignments": {0: [1, 2]}}}, wait_for_metadata=True)  # both rack3
    admin.created_topics.append(topic)
    report = audit(kp_admin.snapshot(admin, [topic]), [topic]).topics[0]
    assert report.metrics.under_diverse == [0]


def test_each_broker_names_what_it_leads_in_its_own_metadata(admin: Any, kafka_cluster: Any) -> None:
    # a new topic's leaders are its preferred replicas (the first of each explicit list); every broker's
    # own metadata says so once it applied the topic, and asking one broker is bounded
    from kafka_placement.clients.kafka_python import admin as kp_admin

    topic = _name("replicas-own-view")
    placed = {0: [0, 3], 1: [3, 1], 2: [1, 5], 3: [5, 4]}  # distinct racks each
    kp_admin.create_topic(admin, topic, placed)
    admin.created_topics.append(topic)
    expected = {TopicPartition(topic, p): replicas[0] for p, replicas in placed.items()}
    for broker in kafka_cluster.broker_ids:
        seen = kp_admin.snapshot_seen_by(admin, broker, [topic])
        assert seen.brokers == ()
        assert {tp: state.leader for tp, state in seen.partitions.items()} == expected, broker
        assert {tp.partition: list(state.replicas) for tp, state in seen.partitions.items()} == placed


def test_audit_of_controller_placed_topic_with_both_clients(admin: Any, confluent_admin: Any) -> None:
    from kafka_placement.clients.confluent import admin as cf_admin
    from kafka_placement.clients.kafka_python import admin as kp_admin

    topic = _name("replicas-controller")
    admin.create_topics({topic: {"num_partitions": 12, "replication_factor": 3}}, wait_for_metadata=True)
    admin.created_topics.append(topic)
    via_kafka_python = kp_admin.snapshot(admin, [topic])
    via_confluent = cf_admin.snapshot(confluent_admin, [topic])
    assert via_kafka_python.assignment() == via_confluent.assignment()
    assert via_kafka_python.brokers == via_confluent.brokers
    report = audit(via_kafka_python, [topic])
    metrics = report.topics[0].metrics
    assert metrics.under_diverse == []  # StripedReplicaPlacer: 3 racks, RF 3 -> every rack once
    assert metrics.rack_diversity == {3: 12}
    assert sum(metrics.replicas_per_broker.values()) == 36
    print(
        f"controller placement: replicas/broker {metrics.replicas_per_broker} "
        f"(spread {metrics.replica_spread}), leaders/broker {metrics.leaders_per_broker} "
        f"(spread {metrics.leader_spread}), pair spread {metrics.pair_spread}; findings {report.findings}"
    )


def test_reassign_from_four_to_six_brokers(admin: Any, kafka_cluster: Any) -> None:
    from kafka import KafkaProducer

    from kafka_placement.clients.kafka_python import admin as kp_admin

    brokers = kp_admin.brokers(admin)
    old = [b for b in brokers if b.id <= 3]
    topic = _name("replicas-reassign")
    kp_admin.create_topic(admin, topic, assign_replicas_to_brokers(old, 12, 3, 0))
    admin.created_topics.append(topic)
    producer = KafkaProducer(bootstrap_servers=kafka_cluster.bootstrap_servers, acks="all")
    for i in range(600):
        producer.send(topic, key=str(i).encode(), value=b"x" * 200)
    producer.flush()
    producer.close()

    current = kp_admin.snapshot(admin, [topic]).assignment([topic])
    plan = plan_reassignment(current, brokers)
    assert plan.moves.replicas_added == plan.lower_bound.replica_moves == 15  # see the CLI unit test
    progress: list[tuple[int, int]] = []
    result = kp_admin.apply_reassignment(
        admin, plan.changed, progress=lambda done, total, _: progress.append((done, total)), timeout_s=120
    )
    assert result.completed and result.mismatches == {}, result
    assert progress and progress[-1][0] == progress[-1][1] == len(plan.changed)
    after = kp_admin.snapshot(admin, [topic])
    assert after.assignment([topic]) == plan.target
    metrics = audit(after, [topic]).topics[0].metrics
    _, bound = replica_quotas(brokers, 12, 3)
    assert metrics.under_diverse == [] and metrics.replica_spread == bound.spread == 0
    print(
        f"reassignment: {len(plan.changed)} partitions, {plan.moves.replicas_added} replicas moved "
        f"(lower bound {plan.lower_bound.replica_moves}), leader changes {plan.moves.leader_changes} "
        f"(bound {plan.lower_bound.leader_changes}), {result.seconds:.1f}s, "
        f"not preferred-led afterwards: {len(result.not_preferred_leaders)}"
    )


def test_reassignment_json_of_the_plan_round_trips(admin: Any) -> None:
    from kafka_placement.replicas.reassignment_json import (
        as_assignment,
        format_reassignment,
        parse_reassignment,
    )

    brokers = [Broker(b, r) for b, r in JAVADOC_RACKS.items()]
    current = {TopicPartition("t", p): r for p, r in assign_replicas_to_brokers(brokers[:4], 6, 2, 0).items()}
    plan = plan_reassignment(current, brokers)
    assert as_assignment(parse_reassignment(format_reassignment(plan.changed))) == plan.changed


def test_cli_plan_apply_verify_and_audit(
    admin: Any, kafka_cluster: Any, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse
    import json

    from kafka_placement.cli import audit as audit_cli
    from kafka_placement.cli import reassign as reassign_cli
    from kafka_placement.clients.kafka_python import admin as kp_admin

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    audit_cli.register(sub)
    reassign_cli.register(sub)

    def run(*argv: str) -> int:
        args = parser.parse_args(list(argv))
        return int(args.handler(args))

    servers = kafka_cluster.bootstrap_servers
    topic = _name("replicas-cli")
    old = [b for b in kp_admin.brokers(admin) if b.id <= 3]
    kp_admin.create_topic(admin, topic, assign_replicas_to_brokers(old, 9, 3, 0))
    admin.created_topics.append(topic)
    plan_file, rollback = str(tmp_path / "plan.json"), str(tmp_path / "rollback.json")
    assert (
        run(
            "reassign",
            "plan",
            "--bootstrap-servers",
            servers,
            "--topic",
            topic,
            "--output",
            plan_file,
            "--rollback",
            rollback,
        )
        == 0
    )
    assert "lower bound" in capsys.readouterr().out
    assert run("reassign", "verify", "--bootstrap-servers", servers, "--plan", plan_file) == 1
    assert run("reassign", "apply", "--bootstrap-servers", servers, "--plan", plan_file) == 0
    out = capsys.readouterr()
    assert "completed=True, mismatches=0" in out.out and "reassigning:" in out.err
    assert run("reassign", "verify", "--bootstrap-servers", servers, "--plan", plan_file) == 0
    assert "is still in progress" not in capsys.readouterr().out
    for client in ("kafka-python", "confluent"):
        argv = ["audit", "--bootstrap-servers", servers, "--topic", topic, "--client", client, "--json"]
        assert run(*argv) == 0
        report = json.loads(capsys.readouterr().out)
        (entry,) = report["topics"]
        assert entry["under_diverse_partitions"] == [] and entry["replica_spread"] <= 1
