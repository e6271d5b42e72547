"""Live: the consumer-group part of ``rebalance loads``' bytes out.

Topic ``t`` (3 partitions, RF 2) and topic ``u`` (1 partition, RF 3) get a backlog of 1,200
incompressible 1,000-byte records per partition, and a producer adds 5 records/s per partition while
the test runs. Consumer threads (kafka-python) read the backlog at a paced 20 records/s each and commit
every 0.1 s:

* ``t-0``: groups g1 and g2 (manual assignment, commits only: the groups are Empty);
* ``t-1``: group g1 only;
* ``t-2``: nobody;
* ``u-0``: group g3 (subscribed: a Stable group with a member);
* a share group exists (subscribed to an idle topic): it commits no offsets and is left out.

``rebalance loads --window 900 --sample 6`` (every record inside the window) then gives each
partition ``bytes_out = consumer part + (RF − 1) × bytes_in``, checked against an independent
computation:

* bytes per record = the partition's DescribeLogDirs size / the records this test produced to it
  (counted from the producer's own delivery reports);
* consumer part = Σ over the partition's consumer threads of (their committed offsets' growth /
  elapsed time, from their own commit logs) × bytes per record, over the sample the command reports
  ("growth over X s", the time it measured between its two OffsetFetch reads, ending with the call);
  a partition nobody consumes gets 0: its bytes out is exactly the followers' part;
* bytes in: (records produced before the call .. after it) × bytes per record / 900, a bracket.

Tolerance of the consumer part: 15%. Each of the two OffsetFetch reads may fall just before or after
a commit (one commit = 0.1 s of records: ±1.7% a read on 6 s, ±3.3% both), the reference span is
placed from the call's end (the model is built after the second read) and the reported sample is
rounded to 0.1 s (±1%); a consumer stalled by a loaded machine catches up in a burst, which moves
records between the sample and the span around it. Measured on the shared 2-core machine (load average
30–55): −3.7%…+2.4% (docs/rebalance.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest

from kafka_placement.clients.kafka_python.loads import list_groups

# Was behind --full after one whole-suite CI failure (the subscribed member's commit refused: its group
# rebalanced). Under three CPU hogs it failed 1 run in 4 that way; it now waits for its metadata, drops
# the 1-s metadata refresh (a lagging broker's answer can flip the member's metadata snapshot and force
# a rejoin) and commits again after poll() as an application does: 8 of 8 runs passed, 4 under load.
pytestmark = pytest.mark.integration

VALUE = 1000
BACKLOG = 1200  # records per partition: consumers stay inside it (RATE × 60 s; checked)
RATE = 20.0  # records/s each consumer thread reads and commits
COMMIT_EVERY_S = 0.1
PRODUCE_RATE = 5.0  # records/s per partition, while the test runs
WINDOW_S = 900.0
SAMPLE_S = 6.0
WARM_UP_S = 3.0  # consumers run this long before the call, so their pace is steady
TOLERANCE = 0.15


@dataclass
class PacedConsumer:
    """One consumer thread: reads one partition at RATE records/s, commits every COMMIT_EVERY_S, and
    logs (monotonic time after the commit returned, committed offset)."""

    bootstrap: str
    group: str
    topic: str
    partition: int
    subscribe: bool = False
    log: list[tuple[float, int]] = field(default_factory=list)
    refused: int = 0  # commits refused while the group rebalanced
    error: BaseException | None = None

    def run(self, stop: threading.Event) -> None:
        from kafka import TopicPartition
        from kafka.errors import CommitFailedError, RebalanceInProgressError
        from kafka.structs import OffsetAndMetadata

        # ours, not kafka-python's: its join watchdog rejoins a subscribed member that kafka-python
        # 3.0.12 left outside its group (docs/assignment.md) — the likely cause of run 15b's
        # "not committing" for the subscribed member, a state plain kafka-python never leaves
        from kafka_placement.clients.kafka_python import KafkaConsumer

        tp = TopicPartition(self.topic, self.partition)
        consumer = KafkaConsumer(
            bootstrap_servers=self.bootstrap,
            group_id=self.group,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            max_partition_fetch_bytes=256 * 1024,
        )
        try:
            if self.subscribe:
                # join only once this member's metadata has the topic: a leader assigns only what its
                # metadata knows ("No partition metadata for topic" in the failed CI run)
                deadline = time.monotonic() + 60
                while not consumer.partitions_for_topic(self.topic) and time.monotonic() < deadline:
                    time.sleep(0.2)
                consumer.subscribe([self.topic])
            else:
                consumer.assign([tp])
            consumed = 0
            started: float | None = None
            last_commit = 0.0
            must_poll = False  # a rebalance is completed by poll()
            while not stop.is_set():
                now = time.monotonic()
                want = 1 if started is None else int(RATE * (now - started)) + 1 - consumed
                if want > 0 or must_poll:
                    must_poll = False
                    batch = consumer.poll(timeout_ms=50, max_records=max(want, 1))
                    got = sum(len(records) for records in batch.values())
                    if got and started is None:
                        started = time.monotonic()
                    consumed += got
                else:
                    time.sleep(0.01)
                if consumed and time.monotonic() - last_commit >= COMMIT_EVERY_S:
                    if tp not in consumer.assignment():
                        must_poll = True
                        continue
                    position = consumer.position(tp)
                    try:
                        consumer.commit({tp: OffsetAndMetadata(position, "", -1)})
                    except (RebalanceInProgressError, CommitFailedError):
                        # a subscribed member's group rebalancing (seen under load): as an application
                        # does, poll and commit again; the log holds only commits the broker took
                        if not self.subscribe:
                            raise
                        self.refused += 1
                        must_poll = True
                        continue
                    last_commit = time.monotonic()
                    self.log.append((last_commit, position))
        except BaseException as e:  # reported by the test, not lost in the thread
            self.error = e
        finally:
            consumer.close()

    def offset_at(self, moment: float) -> int:
        return max((o for t, o in self.log if t <= moment), default=0)

    def rate_between(self, start: float, end: float) -> float:
        """Committed records/s from the last commit before ``start`` to the last before ``end``."""
        before = [entry for entry in self.log if entry[0] <= start]
        upto = [entry for entry in self.log if entry[0] <= end]
        assert before and upto[-1][0] > before[-1][0], (self.group, self.partition, len(self.log))
        (t0, o0), (t1, o1) = before[-1], upto[-1]
        return (o1 - o0) / (t1 - t0)


def _log_dir_sizes(admin: Any, topics: list[str]) -> dict[tuple[str, int], int]:
    sizes: dict[tuple[str, int], int] = {}
    for answer in admin.describe_log_dirs(topics):
        for log_dir in answer.get("log_dirs", []):
            for t in log_dir.get("topics", []):
                for part in t.get("partitions", []):
                    if not part.get("is_future_key"):
                        key = (t["name"], int(part["partition_index"]))
                        sizes[key] = max(sizes.get(key, 0), int(part["partition_size"]))
    return sizes


def test_bytes_out_counts_the_consumer_groups_progress(
    kafka_cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from confluent_kafka import Producer, ShareConsumer
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic
    from kafka.errors import KafkaError

    tag = uuid.uuid4().hex[:8]
    t, u, idle = f"loads-t-{tag}", f"loads-u-{tag}", f"loads-s-{tag}"
    layout = {t: {0: [0, 3], 1: [1, 4], 2: [2, 5]}, u: {0: [4, 5, 0]}}
    groups = {name: f"loads-{name}-{tag}" for name in ("g1", "g2", "g3", "share")}
    bootstrap = kafka_cluster.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="rebalance-loads-live")
    stop = threading.Event()
    threads: list[threading.Thread] = []
    produced: dict[tuple[str, int], int] = {(topic, p): 0 for topic in layout for p in layout[topic]}
    lock = threading.Lock()
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})

    def acked(error: Any, message: Any) -> None:
        assert error is None, error
        with lock:
            produced[(message.topic(), message.partition())] += 1

    def produce_steadily(producer: Any) -> None:
        sent, began = 0, time.monotonic()
        while not stop.is_set():
            due = int(PRODUCE_RATE * (time.monotonic() - began)) - sent
            for _ in range(due):
                for topic, p in produced:
                    producer.produce(topic, os.urandom(VALUE), partition=p, on_delivery=acked)
            sent += max(due, 0)
            producer.poll(0.05)

    try:
        admin.create_topics(
            [NewTopic(topic, replica_assignments=layout[topic]) for topic in layout]
            + [NewTopic(idle, replica_assignments={0: [1]})]
        )
        # a share group in the cluster: it commits no offsets (OffsetFetch answers none for it); the
        # command leaves it out and says so
        share = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": groups["share"]})
        try:
            share.subscribe([idle])
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and groups["share"] not in {
                g["group_id"] for g in list_groups(admin)
            }:
                share.poll(0.5)
        finally:
            share.close()
        for _ in range(BACKLOG):
            for topic, p in produced:
                producer.produce(topic, os.urandom(VALUE), partition=p, on_delivery=acked)
        assert producer.flush(60) == 0
        assert all(n == BACKLOG for n in produced.values()), produced

        consumers = [
            PacedConsumer(bootstrap, groups["g1"], t, 0),
            PacedConsumer(bootstrap, groups["g2"], t, 0),
            PacedConsumer(bootstrap, groups["g1"], t, 1),
            PacedConsumer(bootstrap, groups["g3"], u, 0, subscribe=True),
        ]
        threads = [threading.Thread(target=produce_steadily, args=(producer,), daemon=True)]
        threads += [threading.Thread(target=c.run, args=(stop,), daemon=True) for c in consumers]
        for thread in threads:
            thread.start()
        # every consumer committing (the subscribed one has joined its group), then a steady pace
        deadline = time.monotonic() + 60
        while not all(c.log for c in consumers) and time.monotonic() < deadline:
            assert not [c.error for c in consumers if c.error], [c.error for c in consumers]
            time.sleep(0.1)
        assert all(c.log for c in consumers), (
            f"not committing: {[(c.group, c.topic, c.partition) for c in consumers if not c.log]}"
        )
        time.sleep(WARM_UP_S)

        with lock:
            produced_before = dict(produced)
        # the command runs in its own process: in this one it would hold the GIL from the consumer
        # threads while it builds the model, and they would read in bursts around the sample
        command = [sys.executable, "-m", "kafka_placement.cli", "rebalance", "loads"]
        command += ["--bootstrap-server", bootstrap, "--window", f"{WINDOW_S:g}", "--sample", f"{SAMPLE_S:g}"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
        call_end = time.monotonic()
        time.sleep(2 * COMMIT_EVERY_S)  # the commit log covers the call's end
        stop.set()
        for thread in threads:
            thread.join(30)
        assert producer.flush(30) == 0
        with lock:
            produced_after = dict(produced)
        assert not [c.error for c in consumers if c.error], [c.error for c in consumers]
        assert done.returncode == 0, done.stderr
        out, err = done.stdout, done.stderr
        doc = json.loads(out)
        model = {(e["topic"], e["partition"]): e for e in doc["partitions"] if e["topic"] in layout}
        assert sorted(model) == sorted(produced)
        # the second OffsetFetch is the command's last read: the sample is the span ending about then
        assert re.search(r"note: [0-9]+ share groups not counted in bytes out", err), err
        # a group left out of a read (17d: g2's coordinator moved between the reads) halves t-0
        assert "could not be read" not in err, err
        sampled = re.search(r"consumer groups' committed-offset growth over ([0-9.]+) s", err)
        assert sampled, err
        sampled_s = float(sampled.group(1))
        assert sampled_s >= SAMPLE_S - 0.05, err
        sample_start = call_end - sampled_s

        sizes = _log_dir_sizes(admin, [t, u])
        per_record = {key: sizes[key] / produced_after[key] for key in produced}
        for key, bpr in per_record.items():
            # record format v2: a value of VALUE bytes takes VALUE + a few bytes of record header, plus
            # its share of a 61-byte batch header (batches of 1 record at worst)
            assert VALUE < bpr < VALUE + 80, (key, bpr)
        assert all(c.offset_at(call_end) < BACKLOG for c in consumers), "a consumer reached the tail"
        report = []
        for key, entry in model.items():
            bpr, rf = per_record[key], len(layout[key[0]][key[1]])
            assert entry["replicas"] == layout[key[0]][key[1]]
            low = produced_before[key] * bpr / WINDOW_S
            high = produced_after[key] * bpr / WINDOW_S
            assert low * 0.98 <= entry["bytes_in"] <= high * 1.02, (key, low, entry["bytes_in"], high)
            consumer_part = entry["bytes_out"] - (rf - 1) * entry["bytes_in"]
            readers = [c for c in consumers if (c.topic, c.partition) == key]
            expected = sum(c.rate_between(sample_start, call_end) for c in readers) * bpr
            report.append(
                (f"{key[0].split('-')[1]}-{key[1]}", len(readers), round(consumer_part), round(expected))
            )
            if not readers:
                assert consumer_part == pytest.approx(0, abs=0.01), (key, entry)
            else:
                assert consumer_part == pytest.approx(expected, rel=TOLERANCE), (key, entry, expected)
        with capsys.disabled():  # the measured numbers, for docs/rebalance.md
            print(
                f"\n[loads-live] sample {sampled_s} s; (partition, readers, consumer part, expected) B/s: "
                f"{sorted(report)}; commits refused while the group rebalanced: "
                f"{sum(c.refused for c in consumers)}"
            )
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)
        producer.flush(10)
        del producer  # librdkafka's threads end now, not when a failure's traceback is collected
        # best-effort cleanup (unique names; the share group is left, as its deletion also clears the
        # share coordinator's state and was seen to time out on a loaded machine)
        try:
            with contextlib.suppress(KafkaError):
                admin.delete_topics([t, u, idle])
            with contextlib.suppress(KafkaError):
                admin.delete_groups([groups[g] for g in ("g1", "g2", "g3")])
        finally:
            admin.close()
