"""The one-pass reduction: any split of the keys over reducers and batches merges to the same loads,
and those loads equal a direct count with kafka-python's murmur2 and zlib's CRC-32 (independent)."""

from __future__ import annotations

import itertools
import zlib
from collections import Counter

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.partitioner.default import murmur2 as kafka_python_murmur2

from kafka_placement.planning.key_loads import KeyLoadReducer, merge_partials
from kafka_placement.planning.scenarios import Partitioning

PARTS = [Partitioning(5), Partitioning(8), Partitioning(8, "consistent_random"), Partitioning(3, "random")]

keys_st = st.lists(st.binary(max_size=6), unique=True, max_size=40)


def batch(keys: list[bytes | None], records: list[int], nbytes: list[int]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array(keys, pa.binary()), pa.array(records, pa.int64()), pa.array(nbytes, pa.int64())],
        names=["key", "records", "bytes"],
    )


def java_partition(key: bytes, n: int) -> int:
    return (kafka_python_murmur2(key) & 0x7FFFFFFF) % n


@settings(max_examples=60, deadline=None)
@given(
    keys=keys_st,
    with_null=st.booleans(),
    cuts=st.lists(st.integers(0, 41), max_size=4),
    seed=st.integers(0, 2**32 - 1),
)
def test_any_split_merges_to_the_direct_count(
    keys: list[bytes], with_null: bool, cuts: list[int], seed: int
) -> None:
    rng = np.random.default_rng(seed)
    rows: list[bytes | None] = [*keys, None] if with_null else list(keys)
    records = [int(r) for r in rng.integers(1, 1000, len(rows))]
    nbytes = [int(b) for b in rng.integers(0, 10**12, len(rows))]
    bounds = sorted({0, len(rows), *(c for c in cuts if c <= len(rows))})
    partials = []
    for lo, hi in itertools.pairwise(bounds):  # one reducer per slice, two batches each
        reducer = KeyLoadReducer(PARTS, top_keys=3)
        mid = (lo + hi) // 2
        for a, b in ((lo, mid), (mid, hi)):
            reducer.add(batch(rows[a:b], records[a:b], nbytes[a:b]))
        partials.append(reducer.partial())
    got = merge_partials(partials, PARTS, top_keys=3)

    keyed = [(k, r, b) for k, r, b in zip(rows, records, nbytes, strict=True) if k is not None]
    assert (got.keys, got.keyed_records, got.keyed_bytes) == (
        len(keyed),
        sum(r for _, r, _ in keyed),
        sum(b for *_, b in keyed),
    )
    null = [(r, b) for k, r, b in zip(rows, records, nbytes, strict=True) if k is None]
    assert (got.null_records, got.null_bytes) == (sum(r for r, _ in null), sum(b for _, b in null))
    for i, n in ((0, 5), (1, 8)):
        records_at, bytes_at, keys_at = Counter[int](), Counter[int](), Counter[int]()
        for k, r, b in keyed:
            q = java_partition(k, n)
            records_at[q] += r
            bytes_at[q] += b
            keys_at[q] += 1
        assert got.loads[i][0].tolist() == [keys_at[q] for q in range(n)]
        assert got.loads[i][1].tolist() == [records_at[q] for q in range(n)]
        assert got.loads[i][2].tolist() == [bytes_at[q] for q in range(n)]
    # librdkafka consistent_random: CRC-32 of the key; an empty key is keyless (set aside)
    crc = Counter[int]()
    for k, r, _ in keyed:
        if k:
            crc[zlib.crc32(k) % 8] += r
    assert got.loads[2][1].tolist() == [crc[q] for q in range(8)]
    empty = [(r, b) for k, r, b in keyed if k == b""]
    assert got.keyless[2] == (sum(r for r, _ in empty), sum(b for _, b in empty))
    # random: every record somewhere, bytes exact in total, keys not countable
    assert got.loads[3][1].sum() == got.keyed_records and got.loads[3][2].sum() == got.keyed_bytes
    assert (got.loads[3][0] == -1).all()
    moved = [(k, r, b) for k, r, b in keyed if java_partition(k, 5) != java_partition(k, 8)]
    assert got.moved[(0, 1)] == (len(moved), sum(r for _, r, _ in moved), sum(b for *_, b in moved))
    assert (3, 0) not in got.moved and (0, 3) not in got.moved
    expected_hot = sorted(keyed, key=lambda t: (-t[1], -t[2], t[0]))[:3]
    assert got.hot == expected_hot


def test_hot_keys_break_ties_by_bytes_then_unsigned_key_order() -> None:
    reducer = KeyLoadReducer([Partitioning(4)], top_keys=3)
    reducer.add(batch([b"b", b"\xff", b"a", b"c"], [5, 5, 5, 5], [1, 1, 1, 2]))
    got = merge_partials([reducer.partial()], [Partitioning(4)], 3).hot
    assert got == [
        (b"c", 5, 2),
        (b"a", 5, 1),
        (b"b", 5, 1),
    ]  # 0xff sorts after ASCII, as Spark's binary order


def test_an_idle_reducer_contributes_nothing() -> None:
    empty = KeyLoadReducer(PARTS, top_keys=2).partial()
    reducer = KeyLoadReducer(PARTS, top_keys=2)
    reducer.add(batch([b"k", None], [3, 2], [30, 20]))
    alone = merge_partials([reducer.partial()], PARTS, 2)
    both = merge_partials([empty, reducer.partial()], PARTS, 2)
    assert [x.tolist() for row in both.loads[:3] for x in row] == [
        x.tolist() for row in alone.loads[:3] for x in row
    ]
    assert (both.keys, both.keyed_records, both.null_records, both.hot) == (1, 3, 2, [(b"k", 3, 30)])
