"""``reassign apply|verify|cancel`` on a real cluster with real data moving.

Its own cluster (brokers 0–2 on racks r1–r3, two log dirs per broker), 200 MB topics of incompressible
records. Expected values are Kafka's rules worked by hand for each plan (which brokers get the rates,
which ``partition:broker`` entries the topic lists hold) and the records we produced (every key read
back); the copy rate is measured from the broker's own partition sizes (DescribeLogDirs).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_placement.cli import main
from kafka_placement.clients.kafka_python import admin as kp_admin
from kafka_placement.clients.kafka_python import reassignment as kp
from kafka_placement.testing.cluster import KafkaCluster
from kafka_placement.vocabulary import TopicPartition
from member_process import produce_queued  # this directory is on sys.path

pytestmark = pytest.mark.integration

LOG_DIRS = ("/tmp/kraft-logs/a", "/tmp/kraft-logs/b")
RECORDS = 2000
VALUE_BYTES = 100_000  # 2000 × 100 kB = 200 MB over two partitions
RATE_1MB = 1_000_000


@pytest.fixture(scope="module")
def cluster(kafka_cluster: KafkaCluster) -> Iterator[KafkaCluster]:
    # kafka_cluster first: it decides skip (outside CI) or fail (CI) when no engine/image is available
    own = KafkaCluster(
        kafka_cluster.image,
        racks={0: "r1", 1: "r2", 2: "r3"},
        heap_opts="-Xmx384m -Xms128m",
        broker_properties={"log.dirs": ",".join(LOG_DIRS)},
    )
    try:
        own.start()
        yield own
    finally:
        own.stop()


@pytest.fixture()
def admin(cluster: KafkaCluster) -> Iterator[Any]:
    # One per test: after a test restarted a broker, kafka-python's client may keep sending controller
    # requests to it while its metadata no longer lists it (UnknownBrokerIdError until the next refresh).
    from kafka import KafkaAdminClient

    client = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, client_id="safety-test")
    yield client
    client.close()


@pytest.fixture(autouse=True)
def _nothing_left_moving(cluster: KafkaCluster, admin: Any) -> Iterator[None]:
    """A failed test must not leave a move (or a throttle) that makes the next one refuse to apply."""
    yield
    for broker in cluster.not_running_brokers():
        cluster.start_broker(broker)
    in_flight = kp.ongoing(admin)
    if in_flight:
        kp.cancel(admin, in_flight)
        _wait_for(lambda: not kp.ongoing(admin), 120, "the leftover moves to be cancelled")
    kp.clear_throttles(admin, [0, 1, 2], {tp.topic for tp in in_flight})


def _topic_with_data(admin: Any, cluster: KafkaCluster, name: str, records: int = RECORDS) -> str:
    from confluent_kafka import Producer

    topic = f"{name}-{int(time.time() * 1000) % 10**7}"
    kp_admin.create_topic(admin, topic, {0: [0, 1], 1: [1, 0]}, require_rack_diversity=False)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all", "linger.ms": 20})
    for i in range(records):
        produce_queued(producer, topic, key=str(i).encode(), value=os.urandom(VALUE_BYTES), partition=i % 2)
        producer.poll(0)
    assert producer.flush(120) == 0
    return topic


def _keys_read_back(cluster: KafkaCluster, topic: str, expected: int) -> set[int]:
    from confluent_kafka import OFFSET_BEGINNING, Consumer
    from confluent_kafka import TopicPartition as CTP

    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": f"check-{topic}",
            "enable.auto.commit": False,
            "fetch.max.bytes": 50_000_000,
        }
    )
    consumer.assign([CTP(topic, p, OFFSET_BEGINNING) for p in (0, 1)])
    keys: set[int] = set()
    count = 0
    deadline = time.monotonic() + 120
    try:
        while count < expected and time.monotonic() < deadline:
            for msg in consumer.consume(500, 1.0):
                if msg.error() is None:
                    keys.add(int(msg.key()))
                    count += 1
    finally:
        consumer.close()
    assert count == expected, f"read {count} records of {expected}"
    return keys


def _plan(
    tmp_path: Path, topic: str, lists: dict[int, list[int]], dirs: dict[int, list[str]] | None = None
) -> str:
    entries = []
    for p, replicas in lists.items():
        entry: dict[str, Any] = {"topic": topic, "partition": p, "replicas": replicas}
        if dirs and p in dirs:
            entry["log_dirs"] = dirs[p]
        entries.append(entry)
    path = tmp_path / f"plan-{topic}.json"
    path.write_text(json.dumps({"version": 1, "partitions": entries}))
    return str(path)


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _background_cli(*argv: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "plugin")}
    return subprocess.Popen(
        [sys.executable, "-m", "kafka_placement.cli", *argv],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _wait_for(predicate: Any, timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")


def _bytes_on(admin: Any, topic: str, broker: int) -> int:
    return sum(d.size for (tp, b), d in kp.replica_dirs(admin, [topic]).items() if b == broker)


def _no_throttles(admin: Any, topic: str) -> bool:
    return not kp.throttles(admin, [0, 1, 2], [topic])


def test_throttled_move_survives_a_tool_crash_refuses_a_second_apply_and_verify_clears(
    cluster: KafkaCluster, admin: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = _topic_with_data(admin, cluster, "throttled")
    servers = ["--bootstrap-server", cluster.bootstrap_servers]
    plan = _plan(tmp_path, topic, {0: [2, 1], 1: [1, 2]})
    apply = _background_cli(
        "reassign", "apply", *servers, "--plan", plan, "--throttle", "1MB/s", "--timeout", "600"
    )
    try:
        _wait_for(lambda: kp.ongoing(admin), 30, "the reassignment to start")
        # Kafka's rule worked by hand: sources {0,1} of both partitions are leader-throttled, the new
        # replica on broker 2 follower-throttled; every broker taking part gets both rates.
        expected_rates = {
            "leader.replication.throttled.rate": "1000000",
            "follower.replication.throttled.rate": "1000000",
        }
        throttles = _wait_for(lambda: kp.throttles(admin, [0, 1, 2], [topic]), 10, "throttles")
        assert throttles.brokers == {0: expected_rates, 1: expected_rates, 2: expected_rates}
        assert throttles.topics == {
            topic: {
                "leader.replication.throttled.replicas": "0:0,0:1,1:0,1:1",
                "follower.replication.throttled.replicas": "0:2,1:2",
            }
        }
        time.sleep(3)  # past the quota's first windows
        before, t0 = _bytes_on(admin, topic, 2), time.monotonic()
        time.sleep(8)
        after, t1 = _bytes_on(admin, topic, 2), time.monotonic()
        rate = (after - before) / (t1 - t0)
        with capsys.disabled():
            print(
                f"\ncopy rate under a 1 MB/s throttle: {rate / 1e6:.2f} MB/s "
                f"({after - before} B in {t1 - t0:.1f}s)"
            )
        assert 0.4 * RATE_1MB <= rate <= 2.0 * RATE_1MB
        assert after < 100_000_000  # far from done: the throttle holds the 200 MB back
    finally:
        apply.send_signal(signal.SIGKILL)  # the tool crashes mid-move
        apply.wait(10)
    # the throttles live on the cluster: still there after the crash
    assert kp.throttles(admin, [0, 1, 2], [topic]).topics
    code, _, err = _cli(capsys, "reassign", "apply", *servers, "--plan", plan, "--throttle", "1MB/s")
    assert code == 2
    assert "Cannot execute because there is an existing partition assignment.  Use --additional" in err
    assert f"In flight: {topic}-0, {topic}-1" in err
    code, out, _ = _cli(capsys, "reassign", "verify", *servers, "--plan", plan)
    assert code == 1 and f"Reassignment of partition {topic}-0 is still in progress." in out
    assert "Clearing" not in out and kp.throttles(admin, [0, 1, 2], [topic])
    # raise the throttle on the running move (Kafka's --additional), wait for it to finish, and leave
    # the throttles for verify to clear (as after a crash)
    code, out, err = _cli(
        capsys,
        "reassign",
        "apply",
        *servers,
        "--plan",
        plan,
        "--additional",
        "--throttle",
        "200MB/s",
        "--timeout",
        "180",
        "--preserve-throttles",
    )
    assert code == 0, out + err
    assert "The inter-broker throttle limit was set to 200000000 B/s" in out
    assert "completed=True, mismatches=0" in out and "throttles preserved" in out
    assert (
        kp.throttles(admin, [0, 1, 2], [topic]).brokers[2]["follower.replication.throttled.rate"]
        == "200000000"
    )
    code, out, _ = _cli(capsys, "reassign", "verify", *servers, "--plan", plan)
    assert code == 0 and f"Reassignment of partition {topic}-1 is completed." in out
    assert "Clearing broker-level throttles on brokers 0,1,2" in out
    _wait_for(lambda: _no_throttles(admin, topic), 15, "the throttles to be removed")
    snap = kp_admin.snapshot(admin, [topic])
    assert [list(snap.partitions[TopicPartition(topic, p)].replicas) for p in (0, 1)] == [[2, 1], [1, 2]]
    assert _keys_read_back(cluster, topic, RECORDS) == set(range(RECORDS))


def test_cancel_mid_move_restores_the_original_replicas_and_loses_nothing(
    cluster: KafkaCluster, admin: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = _topic_with_data(admin, cluster, "cancelled")
    servers = ["--bootstrap-server", cluster.bootstrap_servers]
    plan = _plan(tmp_path, topic, {0: [2, 1], 1: [1, 2]})
    code, out, err = _cli(
        capsys, "reassign", "apply", *servers, "--plan", plan, "--throttle", "1MB/s", "--timeout", "3"
    )
    assert code == 1 and f"Successfully started partition reassignments for {topic}-0,{topic}-1" in out
    assert f"Timed out after 3s: 2 partition(s) still being reassigned: {topic}-0, {topic}-1." in err
    _wait_for(lambda: _bytes_on(admin, topic, 2) > 1_000_000, 30, "data to reach broker 2")
    code, out, _ = _cli(capsys, "reassign", "cancel", *servers, "--plan", plan)
    assert code == 0
    assert f"Successfully cancelled partition reassignments for: {topic}-0,{topic}-1" in out
    assert not kp.ongoing(admin)
    snap = kp_admin.snapshot(admin, [topic])
    assert [set(snap.partitions[TopicPartition(topic, p)].replicas) for p in (0, 1)] == [{0, 1}, {0, 1}]
    _wait_for(lambda: _no_throttles(admin, topic), 15, "the throttles to be removed")
    # the copies on broker 2 are deleted once the cancel is done
    _wait_for(lambda: _bytes_on(admin, topic, 2) == 0, 30, "broker 2's partial copies to go")
    code, out, _ = _cli(capsys, "reassign", "cancel", *servers, "--all")
    assert code == 0 and "None of the specified partition reassignments are active." in out
    assert _keys_read_back(cluster, topic, RECORDS) == set(range(RECORDS))


def test_a_broker_killed_mid_move_then_restarted_the_move_completes_and_nothing_is_lost(
    cluster: KafkaCluster, admin: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = _topic_with_data(admin, cluster, "killed", records=1000)  # 100 MB
    servers = ["--bootstrap-server", cluster.bootstrap_servers]
    plan = _plan(tmp_path, topic, {0: [2, 0], 1: [2, 0]})
    code, _, _ = _cli(
        capsys, "reassign", "apply", *servers, "--plan", plan, "--throttle", "5MB/s", "--no-wait"
    )
    assert code == 0
    _wait_for(lambda: _bytes_on(admin, topic, 2) > 5_000_000, 60, "data to reach broker 2")
    try:
        cluster.kill_broker(1)  # a source, and the leader of partition 1
        time.sleep(3)
        started = time.monotonic()
        code, out, err = _cli(capsys, "reassign", "verify", *servers, "--plan", plan)
        assert code == 1 and "still in progress" in out, out + err
        assert time.monotonic() - started < 20  # a dead broker in the metadata does not stall the tool
    finally:
        cluster.start_broker(1)
    code, out, err = _cli(
        capsys,
        "reassign",
        "apply",
        *servers,
        "--plan",
        plan,
        "--additional",
        "--throttle",
        "200MB/s",
        "--timeout",
        "180",
    )
    assert code == 0, out + err
    code, out, _ = _cli(capsys, "reassign", "verify", *servers, "--plan", plan)
    assert code == 0 and f"Reassignment of partition {topic}-0 is completed." in out
    snap = kp_admin.snapshot(admin, [topic])
    assert [list(snap.partitions[TopicPartition(topic, p)].replicas) for p in (0, 1)] == [[2, 0], [2, 0]]
    _wait_for(lambda: _no_throttles(admin, topic), 15, "the throttles to be removed")
    assert _keys_read_back(cluster, topic, 1000) == set(range(1000))


def test_log_dirs_of_a_plan_are_honoured_and_plan_writes_the_live_dirs_to_the_rollback(
    cluster: KafkaCluster, admin: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = _topic_with_data(admin, cluster, "dirs", records=100)  # 10 MB
    servers = ["--bootstrap-server", cluster.bootstrap_servers]
    where = {r: d.current for r, d in kp.replica_dirs(admin, [topic]).items()}
    here = where[(TopicPartition(topic, 0), 0)]
    other = LOG_DIRS[1] if here == LOG_DIRS[0] else LOG_DIRS[0]
    # partition 0 stays on [0, 1] but its replica on broker 0 moves to the other dir; partition 1
    # gains broker 2 and places it in /tmp/kraft-logs/b
    dirs = {0: [other, "any"], 1: ["any", LOG_DIRS[1]]}
    plan = _plan(tmp_path, topic, {0: [0, 1], 1: [1, 2]}, dirs=dirs)
    code, out, err = _cli(
        capsys,
        "reassign",
        "apply",
        *servers,
        "--plan",
        plan,
        "--replica-alter-log-dirs-throttle",
        "100MB/s",
        "--timeout",
        "120",
    )
    assert code == 0, out + err
    assert f"Successfully started moving log directory to {other} for replica {topic}-0 with broker 0" in out
    assert "The replica-alter-dir throttle limit was set to 100000000 B/s" in out
    now = kp.replica_dirs(admin, [topic])
    moved = now[(TopicPartition(topic, 0), 0)]
    assert moved.current == other and moved.future is None
    assert now[(TopicPartition(topic, 1), 2)].current == LOG_DIRS[1]
    code, out, _ = _cli(capsys, "reassign", "verify", *servers, "--plan", plan)
    assert code == 0
    assert f"Reassignment of replica 0-{topic}-0 completed successfully." in out
    assert f"Reassignment of replica 2-{topic}-1 completed successfully." in out
    _wait_for(lambda: _no_throttles(admin, topic), 15, "the log-dir throttle to be removed")
    # a live plan's rollback names the dirs the replicas are in now
    rollback = tmp_path / "rollback.json"
    code, _, err = _cli(
        capsys,
        "reassign",
        "plan",
        *servers,
        "--topic",
        topic,
        "--brokers",
        "0,1,2",
        "--remove-brokers",
        "2",
        "--rollback",
        str(rollback),
    )
    assert code == 0, err
    live = {r: d.current for r, d in kp.replica_dirs(admin, [topic]).items()}
    saved = json.loads(rollback.read_text())["partitions"]
    assert saved and all(
        entry["log_dirs"] == [live[(TopicPartition(topic, entry["partition"]), b)] for b in entry["replicas"]]
        for entry in saved
    )
    with contextlib.suppress(FileNotFoundError):
        rollback.unlink()
