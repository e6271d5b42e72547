"""The single-process plan against a direct count (kafka-python's murmur2, Python's int.to_bytes)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from kafka.partitioner.default import murmur2 as kafka_python_murmur2

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.planning.local import plan_table
from kafka_placement.planning.records import record_table
from kafka_placement.planning.scenarios import Group, Placement, scenario_grid


def java_partition(key: bytes, n: int) -> int:
    return (kafka_python_murmur2(key) & 0x7FFFFFFF) % n


KEYS: list[bytes | None] = [
    b"alice",
    b"bob",
    None,
    b"",
    b"\x00\xff",
    b"alice",
    None,
    b"\xff",
    b"bob",
    b"alice",
]
SIZES = [100, 7, 50, 3, 0, 100, 25, 9, None, 1]


def test_loads_moved_and_skew_equal_a_direct_count() -> None:
    table = pa.table({"k": pa.array(KEYS, pa.binary()), "size": pa.array(SIZES, pa.int64())})
    grid = scenario_grid([4, 6], ["murmur2", "murmur2_random"], [Placement(seed=2)], [Group(2)])
    got = plan_table(table, grid, key_column="k", value_column="size", top_keys=2)
    rec_bytes = [len(k or b"") + (s or 0) for k, s in zip(KEYS, SIZES, strict=True)]
    null_records, null_bytes = 2, 75
    assert got.totals == {
        "records": 10,
        "keyless_records": null_records,
        "bytes": sum(rec_bytes),
        "keyless_bytes": null_bytes,
        "keys": 5,
    }
    for n in (4, 6):
        keyed: Counter[int] = Counter()
        keyed_bytes: Counter[int] = Counter()
        for k, b in zip(KEYS, rec_bytes, strict=True):
            if k is not None:
                keyed[java_partition(k, n)] += 1
                keyed_bytes[java_partition(k, n)] += b
        parts = got.partitions.set_index(["partitioning", "partition"])
        # librdkafka murmur2 hashes NULL like the empty key; Java's producer spreads NULL keys evenly
        empty_q = java_partition(b"", n)
        murmur2 = [keyed[q] + (null_records if q == empty_q else 0) for q in range(n)]
        spread = [keyed[q] + null_records // n + (q < null_records % n) for q in range(n)]
        assert [parts.loc[(f"murmur2/{n}", q), "records"] for q in range(n)] == murmur2
        assert [parts.loc[(f"murmur2_random/{n}", q), "records"] for q in range(n)] == spread
        assert sum(parts.loc[(f"murmur2_random/{n}", q), "bytes"] for q in range(n)) == sum(rec_bytes)
        sk = got.skew[
            (got.skew["name"].str.startswith(f"murmur2/{n} "))
            & (got.skew["level"] == "partition")
            & (got.skew["measure"] == "records")
        ]
        assert sk["max_over_mean"].iloc[0] == pytest.approx(max(murmur2) / (sum(murmur2) / n))
    moved = got.moved.set_index(["from", "to"]).loc[("murmur2/4", "murmur2/6")]
    distinct = {
        k: (KEYS.count(k), sum(b for kk, b in zip(KEYS, rec_bytes, strict=True) if kk == k))
        for k in KEYS
        if k is not None
    }
    changed = [k for k in distinct if java_partition(k, 4) != java_partition(k, 6)]
    assert moved["keys"] == len(changed)
    assert moved["records"] == sum(distinct[k][0] for k in changed)
    assert moved["bytes"] == sum(distinct[k][1] for k in changed)
    assert moved["records_fraction"] == pytest.approx(moved["records"] / 8)  # keyed records only
    assert got.hot_keys["key"].tolist() == ["alice", "bob"]
    assert got.keyless["null_records"].tolist() == [2, 2, 2, 2]
    assert set(got.keyless["placed"]) == {"one partition", "spread evenly"}


def test_string_and_int_keys_are_serialized_as_kafka_does() -> None:
    table = pa.table(
        {"s": ["é", None], "i32": pa.array([-1, 300], pa.int32()), "i64": pa.array([1, None], pa.int64())}
    )
    assert record_table(table, "s")["key"].to_pylist() == ["é".encode(), None]
    assert record_table(table, "i32")["key"].to_pylist() == [b"\xff\xff\xff\xff", (300).to_bytes(4, "big")]
    assert record_table(table, "i64")["key"].to_pylist() == [(1).to_bytes(8, "big"), None]
    sized = record_table(pa.table({"k": ["ab"], "v": pa.array([-5.7], pa.float64())}), "k", "v")
    assert sized["bytes"].to_pylist() == [2]  # a negative size counts as 0


def test_bad_columns_are_named() -> None:
    table = pa.table({"k": [1.5]})
    with pytest.raises(
        InvalidArgumentError, match="key column 'key' is not in the input; available columns: k"
    ):
        plan_table(table, scenario_grid([3]))
    with pytest.raises(InvalidArgumentError, match="key column 'k' has type double"):
        plan_table(table, scenario_grid([3]), key_column="k")
    with pytest.raises(InvalidArgumentError, match=r"top keys must be in \[0, 10000\], got -1"):
        plan_table(table, scenario_grid([3]), key_column="k", top_keys=-1)


def test_parquet_read_by_threads_gives_the_one_thread_figures(tmp_path: Path) -> None:
    import pandas as pd
    import pyarrow.parquet as pq

    from kafka_placement.planning.local import plan_parquet

    grid = scenario_grid([5, 8], ["murmur2", "consistent_random"], [Placement(seed=2)], [Group(2)])
    keys = [None if i % 19 == 0 else f"k{(i * 13) % 101}" for i in range(3000)]
    table = pa.table({"key": keys, "size": pa.array([i % 97 for i in range(3000)], pa.int64())})
    pq.write_table(table, tmp_path / "in.parquet", row_group_size=128)  # 24 row groups
    one = plan_parquet(tmp_path / "in.parquet", grid, value_column="size")
    three = plan_parquet(tmp_path / "in.parquet", grid, value_column="size", threads=3)
    whole = plan_table(table, grid, value_column="size")
    for name in ("partitions", "moved", "hot_keys", "keyless"):
        pd.testing.assert_frame_equal(getattr(one, name), getattr(three, name), obj=name)
        pd.testing.assert_frame_equal(getattr(one, name), getattr(whole, name), obj=name)
    with pytest.raises(InvalidArgumentError, match=r"threads must be in \[1, 1024\], got 0"):
        plan_parquet(tmp_path / "in.parquet", grid, threads=0)


def test_parquet_is_opened_once_per_thread_not_once_per_row_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from unit_tests.planning.test_parquet_row_groups import counting_opens

    from kafka_placement.planning.local import plan_parquet

    table = pa.table({"key": [f"k{i % 31}" for i in range(2000)]})
    pq.write_table(table, tmp_path / "in.parquet", row_group_size=20)  # 100 row groups
    opened = counting_opens(monkeypatch)
    plan_parquet(tmp_path / "in.parquet", scenario_grid([4]))
    assert opened == ["in.parquet", "in.parquet"]  # the footer check, then the one reader
    opened.clear()
    plan_parquet(tmp_path / "in.parquet", scenario_grid([4]), threads=3)
    assert 2 <= len(opened) <= 4  # the check, then one per thread that got work


def test_a_categorical_key_column_is_planned_as_its_strings(tmp_path: Path) -> None:
    import pandas as pd

    from kafka_placement.planning.local import plan_parquet

    users = [f"u{i % 9}" for i in range(500)]
    pd.DataFrame({"user": pd.Categorical(users)}).to_parquet(tmp_path / "cat.parquet")
    grid = scenario_grid([7], ["murmur2"], [Placement(seed=2)], [Group(2)])
    got = plan_parquet(tmp_path / "cat.parquet", grid, key_column="user")
    expected = Counter((kafka_python_murmur2(u.encode()) & 0x7FFFFFFF) % 7 for u in users)
    assert got.partitions["records"].tolist() == [expected.get(q, 0) for q in range(7)]
    assert got.partitions["bytes"].sum() == sum(len(u) for u in users)
