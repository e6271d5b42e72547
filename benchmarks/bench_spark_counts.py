"""Key → partition counts on Spark, end to end: ours (mapInArrow + vectorized core) vs a plain Python UDF.

Same run, same machine, same Parquet input (Zipf-skewed ``user-<rank>`` keys from the sample
generator, written once before timing):

* ours: ``kafka_placement.spark.partition_counts`` — read Parquet → ``mapInArrow`` hashing each Arrow
  batch with ``partition_keys`` and reducing it to per-partition counts in the worker → sum;
* ours, Parquet fast path: ``partition_counts_parquet`` — each task reads its row groups with pyarrow
  dictionary-encoded, hashes the distinct keys once, counts the indices (no per-record JVM → Python);
* ours, distinct first: the JVM counts records per distinct key, each distinct key is hashed once;
* ours, per-key rows: ``with_partitions`` (one partition column per key back to the JVM) → groupBy;
* baseline: ``F.udf`` calling kafka-python's ``murmur2`` per key → groupBy. The UDF runs on the first
  ``--udf-keys`` rows (it is slow; rates are per key so the comparison is fair); counts are checked
  equal to ours on those rows.

Usage: ``python benchmarks/bench_spark_counts.py [--keys 10000000] [--udf-keys 1000000] [--master local[2]]``
Targets: ≥ 5M keys/s end to end for ours, ≥ 20× the UDF's keys/s.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def timed(fn: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keys", type=int, default=10_000_000)
    parser.add_argument("--udf-keys", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=12)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=2, help="timed runs of ours (best is reported)")
    parser.add_argument("--batch", type=int, default=1 << 20, help="Arrow records per batch (default 1Mi)")
    args = parser.parse_args()

    from kafka.partitioner.default import murmur2 as kafka_python_murmur2
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from kafka_placement.planning.scenarios import Partitioning
    from kafka_placement.spark.parquet_counts import partition_counts_parquet
    from kafka_placement.spark.pipeline import partition_counts, with_partitions
    from kafka_placement.spark.sample import SampleSpec, sample_dataframe
    from kafka_placement.spark.session import spark_session

    spark = spark_session(
        args.master,
        app_name="bench-spark",
        conf={"spark.driver.memory": "2g", "spark.sql.execution.arrow.maxRecordsPerBatch": str(args.batch)},
    )
    n = args.partitions
    tmp = Path(tempfile.mkdtemp(prefix="bench-spark-"))
    try:
        path = str(tmp / "keys.parquet")
        spec = SampleSpec(args.keys, seed=1)
        # A few sizeable files (as a compacted table would be), not one tiny file per generator slice.
        _, gen = timed(lambda: sample_dataframe(spark, spec).select("key").coalesce(4).write.parquet(path))
        size_mb = sum(f.stat().st_size for f in Path(path).rglob("*.parquet")) / 1e6
        print(
            f"input: {args.keys:,} keys ({spec.key_count:,} distinct, Zipf {spec.exponent}), "
            f"Parquet {size_mb:.0f} MB, written in {gen:.1f}s; master {args.master}, {n} partitions"
        )
        df = spark.read.parquet(path)
        partition_counts(df.limit(10_000), n)  # warm the Python workers

        best = float("inf")
        ours: list[int] = []
        for _ in range(args.repeat):
            ours, seconds = timed(lambda: partition_counts(df, n))
            best = min(best, seconds)
        assert sum(ours) == args.keys
        ours_rate = args.keys / best

        best_parquet = float("inf")
        for _ in range(args.repeat):
            parquet_counts, seconds = timed(lambda: partition_counts_parquet(spark, path, n))
            best_parquet = min(best_parquet, seconds)
        assert parquet_counts == ours
        parquet_rate = args.keys / best_parquet

        best_distinct = float("inf")
        for _ in range(args.repeat):
            distinct_counts, seconds = timed(lambda: partition_counts(df, n, distinct_first=True))
            best_distinct = min(best_distinct, seconds)
        assert distinct_counts == ours
        distinct_rate = args.keys / best_distinct

        def per_key_rows() -> list[Any]:
            out = with_partitions(df.select("key"), [Partitioning(n)])
            return out.groupBy("p0").count().collect()

        _, rows_seconds = timed(per_key_rows)
        rows_rate = args.keys / rows_seconds

        udf_keys = min(args.udf_keys, args.keys)
        small = spark.read.parquet(path).limit(udf_keys).cache()
        small.count()

        @F.udf(returnType=T.IntegerType())  # type: ignore[misc]
        def kafka_python_partition(key: bytes) -> int:
            return (kafka_python_murmur2(key) & 0x7FFFFFFF) % n

        udf_rows, udf_seconds = timed(
            lambda: small.select(kafka_python_partition("key").alias("p")).groupBy("p").count().collect()
        )
        udf_counts = [0] * n
        for row in udf_rows:
            udf_counts[row["p"]] = row["count"]
        check = partition_counts(small, n)
        assert check == udf_counts, "ours and kafka-python's murmur2 disagree"
        udf_rate = udf_keys / udf_seconds
    finally:
        spark.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"{'method':58} {'keys':>12} {'seconds':>8} {'keys/s':>14}")
    print(
        f"{'ours: partition_counts (mapInArrow, counts in worker)':58} {args.keys:>12,} {best:>8.2f} "
        f"{ours_rate:>14,.0f}"
    )
    print(
        f"{'ours: partition_counts_parquet (distinct keys per row group)':58} {args.keys:>12,} "
        f"{best_parquet:>8.2f} {parquet_rate:>14,.0f}"
    )
    print(
        f"{'ours: partition_counts(distinct_first=True)':58} {args.keys:>12,} {best_distinct:>8.2f} "
        f"{distinct_rate:>14,.0f}"
    )
    print(
        f"{'ours: with_partitions (per-key rows) + groupBy':58} {args.keys:>12,} {rows_seconds:>8.2f} "
        f"{rows_rate:>14,.0f}"
    )
    print(
        f"{'baseline: Python UDF, kafka-python murmur2 + groupBy':58} {udf_keys:>12,} {udf_seconds:>8.2f} "
        f"{udf_rate:>14,.0f}"
    )
    ratio = ours_rate / udf_rate
    print(
        f"\nours vs UDF: {ratio:.1f}x keys/s (target >= 20x); "
        f"per-key rows vs UDF: {rows_rate / udf_rate:.1f}x"
    )
    print(f"distinct-first vs UDF: {distinct_rate / udf_rate:.1f}x")
    print(f"Parquet fast path vs UDF: {parquet_rate / udf_rate:.1f}x")
    print(
        f"ours end to end: {parquet_rate / 1e6:.2f}M keys/s Parquet fast path, {ours_rate / 1e6:.2f}M keys/s "
        f"any DataFrame per record, {distinct_rate / 1e6:.2f}M keys/s distinct-first (target >= 5M keys/s)"
    )
    print(f"counts identical to kafka-python's murmur2 on the UDF's {udf_keys:,} keys: yes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
