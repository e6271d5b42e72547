"""Key → partition speed: kafka_placement vs kafka-python (and librdkafka's helper), measured in one run.

Batch: 1M 16-byte keys and 1M mixed-length keys (uniform 0–200 B), ``partition_keys(keys, 12)``
(murmur2, ``toPositive(h) % n``) on a pyarrow binary array (Arrow/Spark input, zero copy) and on a
Python list of bytes, each through both kernels: ``native`` (the optional C accelerator
``kafka_placement.partitioning._native``; a list is hashed straight from its bytes objects) and
``numpy`` (pure numpy; a list is first joined into one buffer + offsets). kafka-python's pure-Python
murmur2 (plus the same ``& 0x7fffffff % n``) is timed on a random subsample of the SAME keys and
extrapolated per key — the output says so; so is librdkafka's helper ``confluent_kafka.murmur2(key, n)``
(C, one Python call per key), for reference. ``--repeat`` interleaved rounds (kafka-python, then every
path of ours, per round): best times and the median per-round ratio are printed, so a ratio is always
taken under the same machine load.

Scalar: one ``partition()`` call per record through the kafka-python adapter
(``JavaDefaultPartitioner``; murmur2 in C with ``native``, the pure-Python reference with ``numpy``) vs
kafka-python's ``DefaultPartitioner``, keyed 16-byte keys, same metadata stand-in object for both (a
12-partition topic).

Usage: python benchmarks/bench_partitioning.py [--keys 1000000] [--sample 20000] [--repeat 5]
       [--paths native,numpy]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

import confluent_kafka
import numpy as np
import pyarrow as pa
from kafka.partitioner.default import DefaultPartitioner
from kafka.partitioner.default import murmur2 as kafka_python_murmur2

from kafka_placement.clients.kafka_python.partitioners import JavaDefaultPartitioner
from kafka_placement.partitioning import native, partition_keys

N_PARTITIONS = 12


def make_keys(rng: np.random.Generator, count: int, lo: int, hi: int) -> list[bytes]:
    lengths = rng.integers(lo, hi + 1, size=count)
    blob = rng.bytes(int(lengths.sum()))
    out, pos = [], 0
    for ln in lengths.tolist():
        out.append(blob[pos : pos + ln])
        pos += ln
    return out


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def kafka_python_batch(keys: list[bytes], n: int) -> list[int]:
    return [(kafka_python_murmur2(k) & 0x7FFFFFFF) % n for k in keys]


class _Cluster:
    """The ClusterMetadata calls both partitioners make, for one 12-partition topic, all available."""

    def __init__(self, n: int) -> None:
        self._parts = set(range(n))

    def topics(self, exclude_internal_topics: bool = True) -> set[str]:
        return {"t"}

    def partitions_for_topic(self, topic: str) -> set[int]:
        return set(self._parts)

    def available_partitions_for_topic(self, topic: str) -> set[int]:
        return set(self._parts)


PATHS = ("native", "numpy")


def _path(name: str) -> AbstractContextManager[None]:
    """``native``: the C accelerator (must be importable); ``numpy``: the pure-numpy kernels."""
    if name == "native":
        if not native.native_enabled():
            raise SystemExit(
                "the C accelerator is not available/enabled (pip install -e . with a C compiler; "
                "KAFKA_PLACEMENT_NO_NATIVE unset) — run with --paths numpy to measure numpy only"
            )
        return nullcontext()
    return native.numpy_only()


def bench_batch(
    label: str, keys: list[bytes], sample: int, repeat: int, rng: np.random.Generator, paths: list[str]
) -> None:
    count = len(keys)
    arrow = pa.array(keys, type=pa.binary())
    idx = rng.choice(count, size=min(sample, count), replace=False)
    sub = [keys[i] for i in idx.tolist()]
    expected = kafka_python_batch(sub, N_PARTITIONS)
    # correctness on the subsample, same run, every path and input form
    for name in paths:
        with _path(name):
            assert partition_keys(arrow.take(pa.array(idx)), N_PARTITIONS).tolist() == expected, name
            assert partition_keys(sub, N_PARTITIONS).tolist() == expected, name
    # interleaved rounds: each round times kafka-python (subsample) and every path back to back, so a
    # ratio is taken under the same machine load; we report best times and the median per-round ratio
    kp_ns: list[float] = []
    rdk_ns: list[float] = []
    ours: dict[tuple[str, str], list[float]] = {(p, f): [] for p in paths for f in ("arrow", "list")}
    for _ in range(repeat):
        kp_ns.append(best_of(1, lambda: kafka_python_batch(sub, N_PARTITIONS)) / len(sub) * 1e9)
        rdk_ns.append(
            best_of(1, lambda: [confluent_kafka.murmur2(k, N_PARTITIONS) for k in sub]) / len(sub) * 1e9
        )
        for name in paths:
            with _path(name):
                ours[name, "arrow"].append(
                    best_of(1, lambda: partition_keys(arrow, N_PARTITIONS)) / count * 1e9
                )
                ours[name, "list"].append(
                    best_of(1, lambda: partition_keys(keys, N_PARTITIONS)) / count * 1e9
                )
    mean_len = sum(map(len, keys)) / count
    print(
        f"\n[{label}] {count:,} keys, mean length {mean_len:.1f} B, "
        f"{N_PARTITIONS} partitions, {repeat} rounds"
    )
    print(
        f"  kafka-python murmur2 (pure Python): best {min(kp_ns):9.1f} ns/key"
        f"  (timed on {len(sub):,} sampled keys per round, extrapolated per key to {count:,})"
    )
    print(
        f"  librdkafka helper confluent_kafka.murmur2(key, n), per key: best {min(rdk_ns):7.1f} ns/key"
        f"  (same sample; → kafka-python/librdkafka {min(kp_ns) / min(rdk_ns):.0f}x)"
    )
    forms = {"arrow": "pyarrow binary array", "list": "Python list of bytes"}
    for (name, form), ns in ours.items():
        ratios = sorted(k / o for k, o in zip(kp_ns, ns, strict=True))
        print(
            f"  ours {name:6s} partition_keys, {forms[form]:21s}: best {min(ns):8.1f} ns/key"
            f"  → {min(kp_ns) / min(ns):5.0f}x (best/best), median round {ratios[len(ratios) // 2]:5.0f}x"
        )


def bench_scalar(records: int, rng: np.random.Generator, paths: list[str]) -> None:
    keys = make_keys(rng, records, 16, 16)
    cluster = _Cluster(N_PARTITIONS)
    ours = JavaDefaultPartitioner()
    theirs = DefaultPartitioner()

    def run(part: object) -> None:
        p = part.partition  # type: ignore[attr-defined]
        for k in keys:
            p("t", k, k, b"value", b"value", cluster)

    t_theirs = best_of(3, lambda: run(theirs))
    t_ours: dict[str, float] = {}
    for name in paths:
        with _path(name):
            t_ours[name] = best_of(3, lambda: run(ours))
            same = all(
                ours.partition("t", k, k, None, None, cluster)
                == theirs.partition("t", k, k, None, None, cluster)
                for k in keys[:2000]
            )
            assert same, f"adapter ({name}) disagrees with kafka-python DefaultPartitioner"
    print(f"\n[scalar per-record, kafka-python adapter] {records:,} keyed records, 16-byte keys")
    print(f"  {'kafka-python DefaultPartitioner.partition':59s} : {t_theirs / records * 1e9:8.0f} ns/record")
    for name, t in t_ours.items():
        hashing = "(C murmur2)" if name == "native" else "(pure-Python murmur2)"
        print(
            f"  ours JavaDefaultPartitioner.partition {hashing:21s}: {t / records * 1e9:8.0f} ns/record"
            f"  → {t_theirs / t:.1f}x"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--sample", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--scalar-records", type=int, default=50_000)
    ap.add_argument("--paths", default=",".join(PATHS), help="kernels to time: native,numpy (default both)")
    args = ap.parse_args()
    paths = [p for p in args.paths.split(",") if p]
    if not set(paths) <= set(PATHS):
        ap.error(f"--paths takes a comma-separated subset of {PATHS}, got {args.paths!r}")
    rng = np.random.default_rng(20261121)
    print("kafka-placement partitioning benchmark (ratios measured side by side in this run)")
    print(f"  C accelerator: {'compiled' if native.native_available() else 'NOT compiled'}; paths: {paths}")
    bench_batch("16-byte keys", make_keys(rng, args.keys, 16, 16), args.sample, args.repeat, rng, paths)
    bench_batch("mixed 0-200 B keys", make_keys(rng, args.keys, 0, 200), args.sample, args.repeat, rng, paths)
    bench_scalar(args.scalar_records, rng, paths)


if __name__ == "__main__":
    main()
