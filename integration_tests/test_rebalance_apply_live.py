"""Live, the whole chain: an uneven 6-broker cluster → ``rebalance plan --bootstrap-server`` →
``reassign apply --throttle --one-replica-at-a-time`` (interrupted in its first round by ``--timeout``,
then run again: it continues with the steps left) → DescribeLogDirs, read here, not by our code.

The data (incompressible records, RF 2, on the rack-labelled cluster 0:rack1 1:rack3 2:rack3 3:rack2
4:rack2 5:rack1): ``big`` 2 partitions × 16 MB on brokers 0 and 3, ``mid`` 4 × 4 MB on 0 and 3,
``small`` 6 × 1 MB spread over all six. Brokers 0 and 3 hold 50 MB each, the others 2 MB: disk
max/mean 50/18 ≈ 2.8.

The tightest layout the hard goals (two racks per partition) allow is perfectly even, 18 MB a broker:
big on [0,3] and [1,4], mid on [2,5] ×4, two small replicas a broker (e.g. small as laid out). So the
disk goal is the full band, mean × (1 ± 0.10), and the leaders goal whole leaders around the mean.

Checked afterwards, from DescribeLogDirs and DescribeTopics: every broker's disk (the replicas of
non-internal topics, the topics the model holds) within mean × (1 ± 0.10); every broker's leader count
within [⌊0.9 × mean⌋, ⌈1.1 × mean⌉] and every partition led by its preferred replica; every record
read back with its content; the bytes the new replicas hold within 5% of the plan's ``bytes_moved``;
while it ran, no partition ever held more than one replica over its replication factor (sampled from
ListPartitionReassignments); the throttles gone. Then the first run's rollback file, applied plainly
with ``--throttle``, brings back every original replica list.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import threading
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from kafka_placement.cli import main
from kafka_placement.replicas.reassignment_json import parse_reassignment
from member_process import produce_queued  # this directory is on sys.path

pytestmark = pytest.mark.integration

VALUE = 100_000
BAND = 0.10
#: topic → (records per partition, replica lists)
LAYOUT: dict[str, tuple[int, dict[int, list[int]]]] = {
    "big": (160, {0: [0, 3], 1: [3, 0]}),
    "mid": (40, {0: [0, 3], 1: [3, 0], 2: [0, 3], 3: [3, 0]}),
    "small": (10, {p: [p, (p + 3) % 6] for p in range(6)}),
}


def _replica_sizes(admin: Any, brokers: Iterable[int]) -> dict[tuple[str, int, int], int]:
    """(topic, partition, broker) → bytes, every non-internal replica (future replicas left out)."""
    sizes: dict[tuple[str, int, int], int] = {}
    for b in brokers:
        for answer in admin.describe_log_dirs(None, brokers=[b]):
            for log_dir in answer.get("log_dirs", []):
                for t in log_dir.get("topics", []):
                    if t["name"].startswith("__"):
                        continue
                    for part in t.get("partitions", []):
                        if not part.get("is_future_key"):
                            key = (t["name"], int(part["partition_index"]), int(answer["broker"]))
                            sizes[key] = int(part["partition_size"])
    return sizes


def _disk(sizes: dict[tuple[str, int, int], int], brokers: Iterable[int]) -> dict[int, int]:
    disk = dict.fromkeys(brokers, 0)
    for (_t, _p, b), size in sizes.items():
        disk[b] += size
    return disk


def _partitions(admin: Any) -> dict[tuple[str, int], tuple[list[int], int]]:
    """(topic, partition) → (replica list, leader) of every non-internal topic."""
    out = {}
    for t in admin.describe_topics():
        if t.get("error_code") or t.get("is_internal") or t["name"].startswith("__"):
            continue
        for p in t["partitions"]:
            out[(t["name"], int(p["partition_index"]))] = (list(p["replica_nodes"]), int(p["leader_id"]))
    return out


class _GrowthWatch(threading.Thread):
    """Samples ListPartitionReassignments: the most replicas each moving partition held at once."""

    def __init__(self, bootstrap: str) -> None:
        super().__init__(daemon=True)
        self.bootstrap = bootstrap
        self.most: dict[tuple[str, int], int] = {}
        self.samples = 0
        self.stop = threading.Event()

    def run(self) -> None:
        from kafka import KafkaAdminClient

        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap, client_id="growth-watch")
        try:
            while not self.stop.is_set():
                for tp, state in admin.list_partition_reassignments().items():
                    key = (tp.topic, tp.partition)
                    self.most[key] = max(self.most.get(key, 0), len(state["replicas"]))
                self.samples += 1
                self.stop.wait(0.2)
        finally:
            admin.close()


def _produce(bootstrap: str, names: dict[str, str]) -> dict[tuple[str, int, bytes], bytes]:
    from confluent_kafka import Producer

    digests: dict[tuple[str, int, bytes], bytes] = {}
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 20})
    for kind, (records, lists) in LAYOUT.items():
        for p in lists:
            for i in range(records):
                key, value = f"{p}-{i}".encode(), os.urandom(VALUE)
                digests[(names[kind], p, key)] = hashlib.sha256(value).digest()
                produce_queued(producer, names[kind], key=key, value=value, partition=p)
                producer.poll(0)
    assert producer.flush(120) == 0
    return digests


def _read_back(bootstrap: str, names: dict[str, str], digests: dict[tuple[str, int, bytes], bytes]) -> int:
    from confluent_kafka import OFFSET_BEGINNING, Consumer
    from confluent_kafka import TopicPartition as CTP

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"check-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
            "fetch.max.bytes": 50_000_000,
        }
    )
    consumer.assign([CTP(names[k], p, OFFSET_BEGINNING) for k, (_, lists) in LAYOUT.items() for p in lists])
    seen: dict[tuple[str, int, bytes], bytes] = {}
    deadline = time.monotonic() + 120
    try:
        while len(seen) < len(digests) and time.monotonic() < deadline:
            for msg in consumer.consume(500, 1.0):
                if msg.error() is None:
                    seen[(msg.topic(), msg.partition(), msg.key())] = hashlib.sha256(msg.value()).digest()
    finally:
        consumer.close()
    assert seen == digests, f"read {len(seen)} of {len(digests)} records, or some differ"
    return len(seen)


def _report(capsys: pytest.CaptureFixture[str], text: str) -> None:
    with capsys.disabled():
        print("\n" + text)


def test_rebalance_plan_apply_one_replica_at_a_time_and_roll_back(
    kafka_cluster: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    bootstrap = kafka_cluster.bootstrap_servers
    run = uuid.uuid4().hex[:6]
    names = {kind: f"rebalance-{kind}-{run}" for kind in LAYOUT}
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="rebalance-apply-live")
    brokers = sorted(int(b["broker_id"]) for b in admin.describe_cluster()["brokers"])
    assert brokers == [0, 1, 2, 3, 4, 5]
    try:
        admin.create_topics([NewTopic(names[k], replica_assignments=r) for k, (_, r) in LAYOUT.items()])
        digests = _produce(bootstrap, names)

        before_sizes = _replica_sizes(admin, brokers)
        before = _disk(before_sizes, brokers)
        mean_before = sum(before.values()) / len(brokers)
        assert max(before.values()) / mean_before >= 1.5, before
        original = _partitions(admin)

        # the plan: Kafka's JSON on stdout, the table on stderr; then the same plan as the JSON summary
        live = [
            "--bootstrap-server",
            bootstrap,
            "--goals",
            "disk,leaders",
            "--band",
            str(BAND),
            "--window",
            "900",
            "--sample",
            "0",
        ]
        assert main(["rebalance", "plan", *live]) == 0
        plan_text, table = capsys.readouterr()
        assert main(["rebalance", "plan", *live, "--json"]) == 0
        summary = json.loads(capsys.readouterr().out)
        plan = {(m.topic, m.partition): list(m.replicas) for m in parse_reassignment(plan_text)}
        assert plan == {(e["topic"], e["partition"]): e["replicas"] for e in summary["plan"]["partitions"]}
        assert summary["goals"]["disk"]["met"] and summary["goals"]["leaders"]["met"], table
        plan_file = tmp_path / "plan.json"
        plan_file.write_text(plan_text)

        watch = _GrowthWatch(bootstrap)
        watch.start()
        rollback = tmp_path / "rollback.json"
        apply = [
            "reassign",
            "apply",
            "--bootstrap-server",
            bootstrap,
            "--plan",
            str(plan_file),
            "--one-replica-at-a-time",
        ]
        started = time.monotonic()
        try:
            # interrupted in round 1: every moved partition's first step copies one replica, and at
            # 1 MB/s (after the quota's first ~10 s worth) a 16 MB big replica takes well over 2 s
            first = main([*apply, "--throttle", "1MB/s", "--timeout", "2", "--rollback", str(rollback)])
            out1, err1 = capsys.readouterr()
            assert first == 1 and "in round 1/" in err1, out1 + err1
            steps1 = int(re.search(r"at a time: (\d+) step", out1).group(1))  # type: ignore[union-attr]
            round1 = re.search(r"Round 1/\d+: started partition reassignments? for (\S+)", out1)
            assert round1 is not None, out1
            deadline = time.monotonic() + 300  # the round goes on in the cluster; resume once it is done
            while admin.list_partition_reassignments() and time.monotonic() < deadline:
                time.sleep(0.5)
            # run again: it continues from the lists it finds, with the steps left only
            code = main(
                [
                    *apply,
                    "--throttle",
                    "50MB/s",
                    "--timeout",
                    "300",
                    "--rollback",
                    str(tmp_path / "rollback-resumed.json"),
                ]
            )
        finally:
            watch.stop.set()
            watch.join(30)
        applied_s = time.monotonic() - started
        out, err = capsys.readouterr()
        assert code == 0, out + err
        steps2 = int(re.search(r"at a time: (\d+) step", out).group(1))  # type: ignore[union-attr]
        assert steps2 == steps1 - len(round1.group(1).split(",")), (out1, out)
        assert "completed=True, mismatches=0" in out and "throttles cleared" in out, out
        assert "The inter-broker throttle limit was set to 50000000 B/s" in out

        # no partition held more than one replica over its replication factor at any sample
        assert watch.samples > 0
        for key, most in watch.most.items():
            assert most <= len(original[key][0]) + 1, (key, most)

        after_sizes = _replica_sizes(admin, brokers)
        after = _disk(after_sizes, brokers)
        mean_after = sum(after.values()) / len(brokers)
        for b, disk in after.items():
            assert (1 - BAND) * mean_after <= disk <= (1 + BAND) * mean_after, (b, after)

        now = _partitions(admin)
        for key, replicas in plan.items():
            assert now[key][0] == replicas, key
        leaders = dict.fromkeys(brokers, 0)
        # The session cluster holds other tests' topics too (some with leaders moved by broker kills): apply
        # elects the preferred leader of every partition it moved; the balance counts preferred leaders.
        for key, (replicas, leader) in now.items():
            if key in plan:
                assert leader == replicas[0], (key, replicas, leader)
            leaders[replicas[0]] += 1
        mean_leaders = len(now) / len(brokers)
        low, high = math.floor((1 - BAND) * mean_leaders), math.ceil((1 + BAND) * mean_leaders)
        assert all(low <= n <= high for n in leaders.values()), leaders

        copied = sum(
            after_sizes[(t, p, b)]
            for (t, p), replicas in plan.items()
            for b in set(replicas) - set(original[(t, p)][0])
        )
        planned = summary["bytes_moved"]
        assert abs(copied - planned) <= 0.05 * planned, (copied, planned)

        read = _read_back(bootstrap, names, digests)
        two_replica = sum(1 for k, r in plan.items() if len(set(r) - set(original[k][0])) > 1)
        _report(
            capsys,
            "\n".join(
                [
                    table,
                    f"disk per broker before: {before} (max/mean {max(before.values()) / mean_before:.2f})",
                    f"disk per broker after:  {after} (max/mean {max(after.values()) / mean_after:.3f}, "
                    f"min/mean {min(after.values()) / mean_after:.3f})",
                    f"leaders after: {leaders} (band [{low}, {high}])",
                    f"bytes moved: plan {planned:,.0f}, copied (DescribeLogDirs) {copied:,} "
                    f"({copied / planned - 1:+.2%}); lower bound {summary['lower_bound']['bytes']:,.0f}",
                    f"partitions moved {len(plan)} ({two_replica} with two new replicas); "
                    f"most replicas at once {max(watch.most.values(), default=0)} "
                    f"over {watch.samples} samples; "
                    f"steps {steps1}, "
                    f"{steps1 - steps2} in round 1 before the interruption, {steps2} after; "
                    f"apply (both runs and the wait between) {applied_s:.1f}s; {read} records read back",
                ]
            ),
        )

        # the rollback file restores every original list (a plain, throttled apply)
        assert (
            main(
                [
                    "reassign",
                    "apply",
                    "--bootstrap-server",
                    bootstrap,
                    "--plan",
                    str(rollback),
                    "--throttle",
                    "50MB/s",
                    "--timeout",
                    "300",
                    "--rollback",
                    str(tmp_path / "rollback-of-rollback.json"),
                ]
            )
            == 0
        ), capsys.readouterr()
        back = _partitions(admin)
        for key in plan:
            assert back[key][0] == original[key][0], key
    finally:
        admin.delete_topics(list(names.values()))
        admin.close()
