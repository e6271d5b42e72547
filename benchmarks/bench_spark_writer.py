"""Spark → Kafka: our writer vs Spark's own Kafka sink, side by side in one run on a live cluster.

The same DataFrame (``--records`` keyed records, 100-byte values, 10% NULL keys) is written to a
12-partition topic by:
  plain             Spark's Kafka sink as is (its Java producer's default partitioner)
  ours murmur2      ``write_to_kafka(scheme="murmur2")``: a partition column from the keys in Arrow
                    batches (a scalar Arrow UDF on PySpark 4.1+)
  ours jump         ``write_to_kafka(scheme="jump")``: the same with jump consistent hashing
  ours native       ``write_to_kafka(scheme="murmur2_random")``: the Java producer places the records
                    (its default partitioner is that scheme): no partition column
Each round writes with every path once, starting at a different path each round (the JVM keeps warming
up), the input cached first; best records/s of ``--rounds`` rounds; the ratio is ours / plain of the
same run.

Usage: python benchmarks/bench_spark_writer.py --bootstrap-server HOST:PORT [--records 2000000] [--rounds 4]
"""

from __future__ import annotations

import argparse
import os
import time

PATHS = ("plain", "ours murmur2", "ours jump", "ours native")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bootstrap-server", required=True)
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()

    from kafka.admin import KafkaAdminClient, NewTopic

    from kafka_placement.spark.kafka_io import write_to_kafka
    from kafka_placement.spark.session import ensure_kafka_connector, spark_session

    spark = spark_session("local[2]", conf={"spark.ui.showConsoleProgress": "false"})
    spark.sparkContext.setLogLevel("ERROR")
    ensure_kafka_connector(spark)
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
    best: dict[str, float] = {}
    topics = []
    for round_no in range(args.rounds):
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
                scheme = {"ours murmur2": "murmur2", "ours jump": "jump", "ours native": "murmur2_random"}[
                    path
                ]
                write_to_kafka(df, args.bootstrap_server, topic, 12, scheme=scheme, check_topic=False)
            rate = args.records / (time.perf_counter() - t0)
            best[path] = max(best.get(path, 0.0), rate)
            print(f"  round {round_no + 1} {path:<14} {rate / 1000:8.0f}k records/s", flush=True)
    admin.delete_topics(topics)
    admin.close()
    print(f"\n# Spark local[2] -> Kafka, {args.records:,} records of 100 B, best of {args.rounds} rounds")
    for path in PATHS:
        ratio = best[path] / best["plain"]
        print(f"{path:<14} {best[path] / 1000:8.0f}k records/s   {ratio:5.2f}x plain Spark sink")
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
