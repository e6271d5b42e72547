"""Spark → Kafka: our writer vs Spark's own Kafka sink, side by side in one run on a live cluster.

The same DataFrame (``--records`` keyed records, 100-byte values, 10% NULL keys) is written to a
12-partition topic by:
  plain             Spark's Kafka sink as is (its Java producer's default partitioner)
  ours murmur2      ``write_to_kafka(scheme="murmur2")``: the producer's default partitioner places keyed
                    records, a partition column computed in Spark the NULL-key ones
  ours jump         ``write_to_kafka(scheme="jump")``: jump consistent hashing by our Java partitioner in
                    the sink's producer (compiled on the driver with javac)
  ours jump column  ``write_to_kafka(scheme="jump", native=False)``: a partition column from the keys in
                    Arrow batches through a Python worker (what runs where the driver has no JDK)
  ours native       ``write_to_kafka(scheme="murmur2_random")``: the Java producer places the records
                    (its default partitioner is that scheme): no partition column
Each round writes with every path once, starting at a different path each round, the input cached first;
``--warmup`` rounds run first and are not counted (the JVM keeps warming up over the first writes). A
path's figure is the median of its per-round ratios to the plain sink of the same round; best rates beside.

Usage: python benchmarks/bench_spark_writer.py --bootstrap-server HOST:PORT [--records 2000000]
       [--rounds 6] [--warmup 2]
"""

from __future__ import annotations

import argparse
import os
import time

PATHS = ("plain", "ours murmur2", "ours jump", "ours jump column", "ours native")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bootstrap-server", required=True)
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--warmup", type=int, default=2, help="uncounted rounds first (JIT, caches)")
    args = parser.parse_args()

    from kafka.admin import KafkaAdminClient, NewTopic

    from kafka_placement.spark.kafka_io import write_to_kafka
    from kafka_placement.spark.partitioner_jar import add_java_partitioner
    from kafka_placement.spark.session import ensure_kafka_connector, spark_session

    spark = spark_session("local[2]", conf={"spark.ui.showConsoleProgress": "false"})
    spark.sparkContext.setLogLevel("ERROR")
    ensure_kafka_connector(spark)
    jar = add_java_partitioner(spark)
    print(
        f"our Java partitioner: {jar}"
        if not isinstance(jar, str)
        else f"our Java partitioner unavailable ({jar}): 'ours jump' computes the partition column too"
    )
    df = (
        spark.range(args.records)
        .selectExpr(
            "CASE WHEN id % 10 = 0 THEN NULL "
            "ELSE CAST(CONCAT('user-', CAST(id % 100000 AS STRING)) AS BINARY) END AS key",
            "CAST(REPEAT('v', 100) AS BINARY) AS value",
        )
        .cache()
    )
    df.count()
    admin = KafkaAdminClient(bootstrap_servers=args.bootstrap_server)
    rates: dict[str, list[float]] = {path: [] for path in PATHS}
    topics = []
    for round_no in range(args.warmup + args.rounds):
        counted = round_no >= args.warmup
        order = PATHS[round_no % len(PATHS) :] + PATHS[: round_no % len(PATHS)]  # no path always runs last
        for path in order:
            topic = f"bench-writer-{os.getpid()}-{round_no}-{path.replace(' ', '-')}"
            admin.create_topics([NewTopic(topic, 12, 1)])
            topics.append(topic)
            time.sleep(1)
            t0 = time.perf_counter()
            if path == "plain":
                df.write.format("kafka").option("kafka.bootstrap.servers", args.bootstrap_server).option(
                    "topic", topic
                ).save()
            else:
                scheme = {
                    "ours murmur2": "murmur2",
                    "ours jump": "jump",
                    "ours jump column": "jump",
                    "ours native": "murmur2_random",
                }[path]
                write_to_kafka(
                    df,
                    args.bootstrap_server,
                    topic,
                    12,
                    scheme=scheme,
                    check_topic=False,
                    native=False if path == "ours jump column" else None,
                )
            rate = args.records / (time.perf_counter() - t0)
            if counted:
                rates[path].append(rate)
            label = f"round {round_no + 1 - args.warmup}" if counted else f"warm-up {round_no + 1}"
            print(f"  {label} {path:<16} {rate / 1000:8.0f}k records/s", flush=True)
    admin.delete_topics(topics)
    admin.close()
    print(
        f"\n# Spark local[2] -> Kafka, {args.records:,} records of 100 B, {args.rounds} rounds after "
        f"{args.warmup} warm-up rounds: best records/s, and the median of the per-round ratios to the "
        "plain sink of the same round"
    )
    for path in PATHS:
        ratios = sorted(a / b for a, b in zip(rates[path], rates["plain"], strict=True))
        median = ratios[len(ratios) // 2]
        print(
            f"{path:<16} {max(rates[path]) / 1000:8.0f}k records/s   {median:5.2f}x plain "
            f"Spark sink (best rates {max(rates[path]) / max(rates['plain']):.2f}x; rounds "
            f"{ratios[0]:.2f}-{ratios[-1]:.2f}x)"
        )
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
