"""One key per call: our scalar functions vs confluent-kafka's own one-key functions, in one run (issue 47).

Each row times a plain Python loop over the same list of random 16-byte keys (1M by default), one call per
key, on both sides: ``partition_key(key, 12, scheme)`` for every scheme and the per-scheme functions
(``murmur2``, ``murmur2_unsigned``, ``crc32``, ``fnv1a``, ``jump_hash``) against confluent-kafka's C
function for the same hash (``confluent_kafka.murmur2``, ``consistent``, ``fnv1a``: key and partition count
in, partition out). Where confluent-kafka has no such function (``jump``, ``random``, ``jump_hash``) the
other side is our own pure-Python definition (:func:`kafka_placement.partitioning.onekey.reference`, the
function the name was before the C path; timed on the first ``--sample`` keys, reported per key), and
``jump`` is also shown against ``confluent_kafka.murmur2`` for scale. Keyless rows (``random`` on any
key) draw from Python's ``random``, as the definition does.

``--rounds`` interleaved rounds: in each round every row times both sides back to back, alternating which
goes first. Printed per row: each side's median ns/key and range over the rounds, and the median and
range of the per-round ratio ours / theirs (below 1: ours is faster). Before timing, every row checks on
up to 20,000 keys that both sides give the same partitions (``same partitions``), except the keyless rows.

Usage: python benchmarks/bench_scalar_partition.py [--keys 1000000] [--rounds 7] [--sample 200000]
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import confluent_kafka
import numpy as np

from kafka_placement.partitioning import (
    SCHEMES,
    crc32,
    fnv1a,
    jump_hash,
    murmur2,
    murmur2_unsigned,
    partition_key,
)
from kafka_placement.partitioning.onekey import one_key_available, reference

N = 12
CHECK_KEYS = 20_000

Loop = Callable[[list[Any]], None]


def loop1(f: Callable[[Any], int]) -> Loop:
    def run(keys: list[Any]) -> None:
        for k in keys:
            f(k)

    return run


def loop2(f: Callable[[Any, int], int]) -> Loop:
    def run(keys: list[Any]) -> None:
        for k in keys:
            f(k, N)

    return run


def loop3(f: Callable[[Any, int, str], int], scheme: str) -> Loop:
    def run(keys: list[Any]) -> None:
        for k in keys:
            f(k, N, scheme)

    return run


@dataclass
class Row:
    name: str
    ours: Loop
    theirs_name: str
    theirs: Loop
    ours_answers: Callable[[Any], int] | None  # one key's partition, for the check (None: keyless)
    theirs_answers: Callable[[Any], int] | None
    ints: bool = False  # keyed by 64-bit ints (jump_hash), not bytes
    theirs_sampled: bool = False  # the pure-Python side runs on the first --sample keys


# librdkafka's partitioner of each hash (its schemes differ only in which keys are keyless)
BY_HASH = {
    "murmur2": confluent_kafka.murmur2,
    "crc32": confluent_kafka.consistent,
    "fnv1a": confluent_kafka.fnv1a,
}
CONFLUENT = {name: BY_HASH[s.hash_kind] for name, s in SCHEMES.items() if not s.jump and not s.always_random}


def rows() -> list[Row]:
    py_pk = reference(partition_key)
    out = [
        Row(
            "partition_key(k, 12)",
            loop2(partition_key),
            "confluent_kafka.murmur2",
            loop2(confluent_kafka.murmur2),
            lambda k: partition_key(k, N),
            lambda k: confluent_kafka.murmur2(k, N),
        ),
    ]
    for name in SCHEMES:
        ours = loop3(partition_key, name)
        mine = (lambda s: lambda k: partition_key(k, N, s))(name)
        if name in CONFLUENT:
            theirs = CONFLUENT[name]
            out.append(
                Row(
                    f"partition_key {name}",
                    ours,
                    f"confluent_kafka.{theirs.__name__}",
                    loop2(theirs),
                    mine,
                    (lambda f: lambda k: f(k, N))(theirs),
                )
            )
        else:
            keyed = not SCHEMES[name].always_random
            out.append(
                Row(
                    f"partition_key {name}",
                    ours,
                    "our pure-Python definition",
                    loop3(py_pk, name),
                    mine if keyed else None,
                    (lambda s: lambda k: py_pk(k, N, s))(name) if keyed else None,
                    theirs_sampled=True,
                )
            )
    out.append(
        Row(
            "partition_key jump (scale)",
            loop3(partition_key, "jump"),
            "confluent_kafka.murmur2 (scale)",
            loop2(confluent_kafka.murmur2),
            None,
            None,
        )
    )
    cm = confluent_kafka.murmur2
    out += [
        Row(
            "murmur2(k)",
            loop1(murmur2),
            "confluent_kafka.murmur2",
            loop2(cm),
            lambda k: (murmur2(k) & 0x7FFFFFFF) % N,
            lambda k: cm(k, N),
        ),
        Row(
            "murmur2_unsigned(k)",
            loop1(murmur2_unsigned),
            "confluent_kafka.murmur2",
            loop2(cm),
            lambda k: (murmur2_unsigned(k) & 0x7FFFFFFF) % N,
            lambda k: cm(k, N),
        ),
        Row(
            "crc32(k)",
            loop1(crc32),
            "confluent_kafka.consistent",
            loop2(confluent_kafka.consistent),
            lambda k: crc32(k) % N,
            lambda k: confluent_kafka.consistent(k, N),
        ),
        Row(
            "fnv1a(k)",
            loop1(fnv1a),
            "confluent_kafka.fnv1a",
            loop2(confluent_kafka.fnv1a),
            lambda k: fnv1a(k) % N,
            lambda k: confluent_kafka.fnv1a(k, N),
        ),
        Row(
            "jump_hash(int, 12)",
            loop2(jump_hash),
            "our pure-Python definition",
            loop2(reference(jump_hash)),
            lambda k: jump_hash(k, N),
            lambda k: reference(jump_hash)(k, N),
            ints=True,
            theirs_sampled=True,
        ),
    ]
    return out


def timed(run: Loop, keys: list[Any]) -> float:
    """ns per key of one pass of ``run`` over ``keys`` (garbage collector off while timing)."""
    gc.disable()
    try:
        t0 = time.perf_counter_ns()
        run(keys)
        return (time.perf_counter_ns() - t0) / len(keys)
    finally:
        gc.enable()


def spread(values: list[float], fmt: str) -> str:
    return f"{statistics.median(values):{fmt}} ({min(values):{fmt}}–{max(values):{fmt}})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--sample", type=int, default=200_000, help="keys for the pure-Python sides")
    ap.add_argument("--seed", type=int, default=47)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    blob = rng.bytes(16 * args.keys)
    keys = [blob[i : i + 16] for i in range(0, 16 * args.keys, 16)]
    ints = [int(x) for x in rng.integers(0, 2**64, size=args.keys, dtype=np.uint64)]
    sample = min(args.sample, args.keys)
    table = rows()
    print(
        f"# {args.keys:,} random 16-byte keys, {N} partitions, {args.rounds} interleaved rounds; "
        f"confluent-kafka {confluent_kafka.__version__}, librdkafka {confluent_kafka.libversion()[0]}; "
        f"C one-key path: {'on' if one_key_available() else 'OFF (pure Python)'}; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print("# row  ours ns/key median (range)  vs  theirs ns/key median (range)  ours/theirs median (range)")
    checks: dict[str, str] = {}
    for row in table:
        if row.ours_answers is None or row.theirs_answers is None:
            checks[row.name] = "keyless: random" if "random" in row.name else "scale only"
            continue
        pool = ints if row.ints else keys
        probe = pool[: min(CHECK_KEYS, len(pool))]
        same = [row.ours_answers(k) for k in probe] == [row.theirs_answers(k) for k in probe]
        checks[row.name] = "same partitions" if same else "DIFFERENT PARTITIONS"
    ours_ns: dict[int, list[float]] = {i: [] for i in range(len(table))}
    theirs_ns: dict[int, list[float]] = {i: [] for i in range(len(table))}
    ratios: dict[int, list[float]] = {i: [] for i in range(len(table))}
    random.seed(args.seed)
    for r in range(args.rounds):
        for i, row in enumerate(table):
            pool = ints if row.ints else keys
            their_pool = pool[:sample] if row.theirs_sampled else pool
            if r % 2 == 0:
                o, t = timed(row.ours, pool), timed(row.theirs, their_pool)
            else:
                t, o = timed(row.theirs, their_pool), timed(row.ours, pool)
            ours_ns[i].append(o)
            theirs_ns[i].append(t)
            ratios[i].append(o / t)
    for i, row in enumerate(table):
        print(
            f"{row.name:<30}  {spread(ours_ns[i], '.1f')} ns  vs  {row.theirs_name:<32} "
            f"{spread(theirs_ns[i], '.1f')} ns  {spread(ratios[i], '.2f')}x  {checks[row.name]}"
        )


if __name__ == "__main__":
    main()
