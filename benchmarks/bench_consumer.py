"""Consuming 1M records: our confluent ``Consumer`` (librdkafka fetching, group by kafka-python's
coordinator with our ``range``) vs plain ``confluent_kafka.Consumer`` (librdkafka's built-in
range) vs kafka-python's ``KafkaConsumer``, side by side in one run on one live cluster.

Each measurement is a fresh subprocess with a fresh group reading the same topic from the start
(6 partitions, 1M records of 100 bytes, written once before the runs). Reported: the time from
subscribe() to the first record (group join), and the consuming rate from the first record to the
1,000,000th (records/s, the ratio to plain confluent). The confluent pair is measured twice:
``consume(1000)`` batches and ``poll()`` per message (where any per-call overhead of ours shows
most). Rounds alternate the
implementations (shared machine); the best of the rounds is reported.

Usage: .venv/bin/python benchmarks/bench_consumer.py [--records N] [--rounds R] [--bootstrap H:P]
(without --bootstrap a throw-away cluster is started and removed; needs the Docker image).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import uuid
from typing import Any

PARTITIONS = 6
VALUE = b"x" * 100


def _child(impl: str, bootstrap: str, topic: str, records: int) -> dict[str, Any]:
    group = f"bench-{impl}-{uuid.uuid4().hex[:8]}"
    common = {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
              "enable.auto.commit": False}
    seen = 0
    if impl.startswith("kafka-python"):
        from kafka import KafkaConsumer

        kc = KafkaConsumer(bootstrap_servers=bootstrap.split(","), group_id=group,
                           auto_offset_reset="earliest", enable_auto_commit=False, max_poll_records=1000)
        start = time.perf_counter()
        kc.subscribe([topic])
        while seen < records:
            for batch in kc.poll(timeout_ms=1000).values():
                if not seen:
                    first = time.perf_counter()
                seen += len(batch)
        end = time.perf_counter()
        kc.close()
    else:
        if impl.startswith("ours"):
            from kafka_placement.clients.confluent import Consumer

            consumer: Any = Consumer(common, assignor="range")
        else:
            import confluent_kafka

            consumer = confluent_kafka.Consumer({**common, "partition.assignment.strategy": "range"})
        per_message = impl.endswith("poll")
        start = time.perf_counter()
        consumer.subscribe([topic])
        while not seen:  # the join: until the first record
            msg = consumer.poll(1.0)
            if msg is not None and msg.error() is None:
                seen = 1
        first = time.perf_counter()
        if per_message:
            poll = consumer.poll
            while seen < records:
                msg = poll(1.0)
                if msg is not None and msg.error() is None:
                    seen += 1
        else:
            consume = consumer.consume
            while seen < records:
                for msg in consume(1000, 1.0):
                    if msg.error() is None:
                        seen += 1
        end = time.perf_counter()
        consumer.close()
    return {"impl": impl, "records": seen, "join_s": first - start, "seconds": end - first,
            "per_s": (seen - 1) / (end - first)}


def _produce(bootstrap: str, records: int) -> str:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"bench-consume-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result()
    time.sleep(2)  # leaders elected
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 10000,
                         "queue.buffering.max.messages": 1_000_000})
    for i in range(records):
        while True:
            try:
                producer.produce(topic, key=str(i).encode(), value=VALUE)
                break
            except BufferError:
                producer.poll(0.1)
    assert producer.flush(120) == 0
    return topic


def _run(impl: str, bootstrap: str, topic: str, records: int) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, "--child", impl, bootstrap, topic, str(records)],
                         check=True, capture_output=True, text=True, timeout=600)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        impl, bootstrap, topic, records = sys.argv[2:6]
        print(json.dumps(_child(impl, bootstrap, topic, int(records))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--bootstrap")
    args = parser.parse_args()
    cluster = None
    bootstrap = args.bootstrap
    if bootstrap is None:
        from kafka_placement.testing.cluster import KafkaCluster

        cluster = KafkaCluster()
        cluster.start()
        bootstrap = cluster.bootstrap_servers
    try:
        topic = _produce(bootstrap, args.records)
        impls = ["plain-consume", "ours-consume", "plain-poll", "ours-poll", "kafka-python"]
        best: dict[str, dict[str, Any]] = {}
        for _ in range(args.rounds):
            for impl in impls:
                r = _run(impl, bootstrap, topic, args.records)
                if impl not in best or r["per_s"] > best[impl]["per_s"]:
                    best[impl] = r
        print(f"consume {args.records:,} records, {PARTITIONS} partitions, best of {args.rounds} rounds "
              "(rate from the first record; join = subscribe to first record)")
        for impl in impls:
            r = best[impl]
            base = best["plain-poll" if impl.endswith("poll") else "plain-consume"]["per_s"]
            print(f"  {impl:<14} join {r['join_s']:5.2f} s  consume {r['seconds']:6.2f} s "
                  f"{r['per_s']:>11,.0f} rec/s   x{r['per_s'] / base:.2f} of plain")
        consume_ratio = best["ours-consume"]["per_s"] / best["plain-consume"]["per_s"]
        print(f"ratio ours/plain: consume() {consume_ratio:.2f}, "
              f"poll() {best['ours-poll']['per_s'] / best['plain-poll']['per_s']:.2f}; "
              f"ours/kafka-python {best['ours-consume']['per_s'] / best['kafka-python']['per_s']:.1f}x")
    finally:
        if cluster is not None:
            cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
