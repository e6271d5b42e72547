"""``kafka-placement demo``: the main job, end to end on a live rack-labelled cluster.

1. start the embedded 6-broker cluster (``kafka_placement.testing``) or attach (``--bootstrap-servers``);
2. create rack-aware topics with explicit replica assignments from our placers (balanced and
   Kafka's AdminUtils), so the broker stores exactly our placement;
3. produce keyed records with kafka-python (our ``JavaDefaultPartitioner``) and confluent-kafka (our
   ``Producer`` wrapper computing ``partition=``), then consume everything back and check each
   record sits in the partition our core predicts;
4. run a failover group (3 kafka-python consumer processes with our ``FailoverAssignor``), SIGKILL the
   active member and time the standby's takeover;
5. audit the placement through the admin API;
6. run ``plan`` on what was produced, reading the topic with Spark's Kafka source.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kafka_placement.cli.connection_options import (
    add_connection_arguments,
    has_connection,
    settings_from_args,
)
from kafka_placement.cli.failover_member import run_failover
from kafka_placement.cli.progress import Progress
from kafka_placement.cli.spark_options import add_spark_arguments, spark_conf_from_args
from kafka_placement.clients.connection import ConnectionSettings, check_connection
from kafka_placement.errors import ClusterError, InvalidArgumentError


def step(n: int, title: str) -> None:
    print(f"\n=== {n}. {title}", flush=True)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "demo",
        help="the end-to-end demo on a live rack-labelled cluster (embedded or --bootstrap-servers)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_connection_arguments(p, help_suffix=": attach to this cluster instead of starting the embedded one")
    p.add_argument("--records", type=int, default=20_000, help="records to produce (default 20000)")
    p.add_argument("--partitions", type=int, default=12, help="partitions of the demo topics (default 12)")
    p.add_argument("--output", default="kafka-placement-demo", help="plan report directory")
    add_spark_arguments(p, what=" — for the plan step")
    p.add_argument("--skip-plan", action="store_true", help="stop after the audit (no Spark)")
    p.add_argument("--session-timeout-ms", type=int, default=6000, help="failover group session timeout")
    p.set_defaults(handler=run)


# --------------------------------------------------------------------------------------- cluster
@contextlib.contextmanager
def cluster(attach: ConnectionSettings | None) -> Iterator[tuple[ConnectionSettings, dict[int, str | None]]]:
    """Connection settings and broker racks: attached, or a started embedded cluster (stopped after)."""
    if attach is not None:
        check_connection(attach)
        yield attach, _describe(attach)
        return
    try:
        from kafka_placement.testing import KafkaCluster
    except ImportError as exc:
        raise ClusterError(f"the embedded cluster needs the 'testing' extra: {exc}") from exc
    embedded = KafkaCluster(log=lambda msg: print(f"  {msg}", flush=True))
    try:
        embedded.start()
    except ClusterError as exc:
        with contextlib.suppress(Exception):
            embedded.stop()
        raise ClusterError(
            f"could not start the embedded Kafka cluster: {exc} (or attach with --bootstrap-servers)"
        ) from exc
    try:
        settings = ConnectionSettings(embedded.bootstrap_servers)
        yield settings, _describe(settings)
    finally:
        print("\nstopping the embedded cluster …", flush=True)
        embedded.stop()


def _describe(bootstrap: ConnectionSettings) -> dict[int, str | None]:
    from kafka_placement.clients.kafka_python.admin import brokers, open_admin

    admin = open_admin(bootstrap.kafka_python(), client_id="kp-demo")
    try:
        return {b.id: b.rack for b in brokers(admin)}
    finally:
        admin.close()


# ----------------------------------------------------------------------------------------- steps
def create_topics(
    bootstrap: ConnectionSettings, racks: dict[int, str | None], partitions: int, suffix: str
) -> dict[str, str]:
    from kafka_placement.cli.tables import format_table
    from kafka_placement.clients.kafka_python.admin import create_topic, open_admin
    from kafka_placement.planning.scenarios import Placement
    from kafka_placement.replicas.placement_quality import placement_metrics
    from kafka_placement.vocabulary import Broker

    brokers = tuple(Broker(b, r) for b, r in sorted(racks.items()))
    rf = min(3, len(brokers))
    topics = {f"orders-{suffix}": "balanced", f"payments-{suffix}": "adminutils"}
    admin = open_admin(bootstrap.kafka_python(), client_id="kp-demo")
    try:
        rows = []
        for topic, placer in topics.items():
            replicas = Placement(brokers, rf, placer, seed=7).replicas(partitions)
            create_topic(admin, topic, replicas, require_rack_diversity=all(r for r in racks.values()))
            metrics = placement_metrics(dict(enumerate(replicas)), brokers)
            m = metrics.summary()
            rows.append(
                [
                    topic,
                    placer,
                    partitions,
                    rf,
                    m["replica_spread"],
                    m["leader_spread"],
                    min(metrics.rack_diversity, default=0),
                ]
            )
            first = ", ".join(f"p{p}→{reps}" for p, reps in enumerate(replicas[:4]))
            print(f"  {topic}: {first}, …")
        print(
            format_table(
                [
                    "topic",
                    "placer",
                    "partitions",
                    "rf",
                    "replica spread",
                    "leader spread",
                    "min racks/partition",
                ],
                rows,
            )
        )
    finally:
        admin.close()
    return topics


def produce(bootstrap: ConnectionSettings, topic: str, partitions: int, records: int) -> dict[str, int]:
    """Half the sample through kafka-python, half through confluent-kafka, both via our partitioners."""
    import numpy as np

    from kafka_placement.clients.confluent.producer import Producer
    from kafka_placement.clients.kafka_python.partitioners import JavaDefaultPartitioner
    from kafka_placement.clients.kafka_python.producer import KafkaProducer  # not stalled by an id reset
    from kafka_placement.spark.sample import SampleSpec, key_bytes, sample_arrays

    spec = SampleSpec(records, distinct_keys=max(100, records // 20), seed=42)
    ranks, sizes = sample_arrays(spec, np.arange(records))
    keys = key_bytes(ranks)
    half = records // 2
    progress = Progress("kafka-python  ", half, sys.stdout)
    kp = KafkaProducer(partitioner=JavaDefaultPartitioner(), linger_ms=5, **bootstrap.kafka_python())
    for i in range(half):
        kp.send(topic, key=keys[i], value=b"kp:" + b"x" * int(sizes[i]))
        if i % 500 == 0:
            progress.update(i)
    kp.flush()
    kp.close()
    progress.finish()
    progress = Progress("confluent-kafka", records - half, sys.stdout)
    ck = Producer({**bootstrap.confluent(), "linger.ms": 5}, partitioner="murmur2_random")
    for i in range(half, records):
        ck.produce(topic, key=keys[i], value=b"ck:" + b"x" * int(sizes[i]))
        if i % 500 == 0:
            ck.poll(0)
            progress.update(i - half)
    remaining = ck.flush(30)
    progress.finish()
    if remaining:
        raise ClusterError(f"confluent-kafka could not deliver {remaining} record(s) within 30 s")
    return {"kafka-python": half, "confluent-kafka": records - half}


def verify(
    bootstrap: ConnectionSettings, topic: str, partitions: int, expected: int
) -> tuple[int, int, dict[str, int]]:
    """Consume everything back; count records outside the partition our core predicts."""
    from kafka import KafkaConsumer, TopicPartition

    from kafka_placement.partitioning import partition_keys

    consumer = KafkaConsumer(enable_auto_commit=False, **bootstrap.kafka_python())
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    keys: list[bytes] = []
    got: list[int] = []
    by_client = {"kafka-python": 0, "confluent-kafka": 0}
    progress = Progress("consuming     ", expected, sys.stdout)
    deadline = time.monotonic() + 120
    while len(got) < expected and time.monotonic() < deadline:
        for batch in consumer.poll(timeout_ms=1000, max_records=10_000).values():
            for r in batch:
                keys.append(r.key)
                got.append(r.partition)
                by_client["kafka-python" if r.value.startswith(b"kp:") else "confluent-kafka"] += 1
        progress.update(len(got))
    consumer.close()
    progress.finish()
    predicted = partition_keys(keys, partitions, "murmur2")
    wrong = int(sum(1 for a, b in zip(got, predicted.tolist(), strict=True) if a != b))
    return len(got), wrong, by_client


def audit_topics(bootstrap: ConnectionSettings, topics: list[str]) -> list[str]:
    from kafka_placement.cli.tables import format_table
    from kafka_placement.clients.kafka_python.admin import open_admin, snapshot
    from kafka_placement.replicas.placement_audit import audit

    admin = open_admin(bootstrap.kafka_python(), client_id="kp-demo")
    try:
        report = audit(snapshot(admin, topics), topics)
    finally:
        admin.close()
    rows = []
    for t in report.topics:
        s = t.summary()
        rows.append(
            [
                t.topic,
                t.partitions,
                t.replication_factor,
                s["replica_spread"],
                s["leader_spread"],
                min(t.metrics.rack_diversity, default=0),
                len(t.findings),
            ]
        )
    print(
        format_table(
            [
                "topic",
                "partitions",
                "rf",
                "replica spread",
                "leader spread",
                "min racks/partition",
                "findings",
            ],
            rows,
        )
    )
    for finding in report.findings:
        print(f"  finding: {finding}")
    return report.findings


def run(args: argparse.Namespace) -> int:
    if not 2 <= args.records <= 10_000_000:
        raise InvalidArgumentError(f"--records must be in [2, 10,000,000], got {args.records}")
    if not 1 <= args.partitions <= 1000:
        raise InvalidArgumentError(f"--partitions must be in [1, 1000], got {args.partitions}")
    spark_conf = spark_conf_from_args(args)  # checked before the cluster starts
    started = time.monotonic()
    suffix = uuid.uuid4().hex[:6]
    step(
        1,
        "cluster" + (f" at {args.bootstrap_servers}" if args.bootstrap_servers else " (embedded, 6 brokers)"),
    )
    attach = settings_from_args(args) if has_connection(args) else None
    with cluster(attach) as (bootstrap, racks):
        from kafka_placement.cli.tables import format_table

        print(f"  bootstrap servers: {bootstrap.describe()}")
        print(format_table(["broker", "rack"], [[b, r or "(none)"] for b, r in sorted(racks.items())]))

        step(2, "create rack-aware topics with our placement (explicit replica assignments)")
        topics = list(create_topics(bootstrap, racks, args.partitions, suffix))
        orders = topics[0]

        step(3, f"produce {args.records:,} keyed records with both clients through our partitioners")
        produce(bootstrap, orders, args.partitions, args.records)
        total, wrong, by_client = verify(bootstrap, orders, args.partitions, args.records)
        print(
            f"  consumed {total:,} records ({by_client['kafka-python']:,} from kafka-python, "
            f"{by_client['confluent-kafka']:,} from confluent-kafka); in the partition our murmur2 predicts: "
            f"{total - wrong:,}/{total:,}"
        )
        if total != args.records or wrong:
            raise ClusterError(f"produce check failed: {total} of {args.records} consumed, {wrong} misplaced")

        step(4, "failover group: 3 members by priority, SIGKILL the active one")
        run_failover(bootstrap, orders, args.partitions, args.session_timeout_ms)

        step(5, "audit the placement through the admin API")
        audit_topics(bootstrap, topics)

        if not args.skip_plan:
            step(6, "plan on what was produced (Spark's Kafka source)")
            from kafka_placement.cli.plan import run_plan
            from kafka_placement.cli.spark_start import load_connector, start_spark
            from kafka_placement.planning.scenarios import Group, Placement, scenario_grid
            from kafka_placement.spark.kafka_io import read_topic
            from kafka_placement.vocabulary import Broker

            spark = start_spark(args, spark_conf, sys.stdout)
            load_connector(spark, sys.stdout)
            brokers = tuple(Broker(b, r) for b, r in sorted(racks.items()))
            rf = min(3, len(brokers))
            scenarios = scenario_grid(
                sorted({args.partitions, args.partitions + args.partitions // 2}),
                ["murmur2", "jump"],
                [Placement(brokers, rf, "balanced", 7), Placement(brokers, rf, "adminutils", 7)],
                [Group(3, "failover"), Group(3, "range")],
            )
            run_plan(
                spark,
                read_topic(spark, bootstrap, orders),
                scenarios,
                key_column="key",
                value_column="value",
                output=Path(args.output),
                source=f"topic {orders} @ {bootstrap.bootstrap_servers}",
                top_keys=10,
                status=sys.stdout,
            )
    print(f"\ndemo finished in {time.monotonic() - started:.0f}s")
    return 0
