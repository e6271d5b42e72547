"""Parquet fast path: counts equal a direct computation, over row groups, string/binary keys and NULLs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.partitioning import partition_keys
from kafka_placement.spark.parquet_counts import partition_counts_parquet
from kafka_placement.spark.sample import SampleSpec, key_bytes, sample_arrays

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def keys() -> list[bytes]:
    ranks, _ = sample_arrays(SampleSpec(40_000, distinct_keys=2000, seed=8), np.arange(40_000))
    return key_bytes(ranks)


@pytest.mark.parametrize("scheme", ["murmur2", "jump", "fnv1a_random"])
def test_binary_keys_across_files_and_row_groups(
    spark: Any, tmp_path: Path, keys: list[bytes], scheme: str
) -> None:
    for i, part in enumerate((keys[:25_000], keys[25_000:])):
        pq.write_table(
            pa.table({"k": pa.array(part, pa.binary())}), tmp_path / f"p{i}.parquet", row_group_size=7000
        )
    (tmp_path / "_SUCCESS").write_text("")
    got = partition_counts_parquet(spark, tmp_path, 11, scheme, key_column="k")
    assert got == np.bincount(partition_keys(keys, 11, scheme), minlength=11).tolist()


def test_string_keys_with_nulls_and_no_dictionary(spark: Any, tmp_path: Path, keys: list[bytes]) -> None:
    values = [None if i % 97 == 0 else k.decode() for i, k in enumerate(keys)]
    path = tmp_path / "s.parquet"
    pq.write_table(pa.table({"user": pa.array(values, pa.string())}), path, use_dictionary=False)
    got = partition_counts_parquet(spark, path, 16, key_column="user")
    present = [v.encode() for v in values if v is not None]
    assert got == np.bincount(partition_keys(present, 16), minlength=16).tolist()


def test_errors_name_the_problem(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({"a": [b"1"]}), path)
    with pytest.raises(InvalidArgumentError, match=r"key column 'key' is not in .*; available columns: a"):
        partition_counts_parquet(spark, path, 4)
    with pytest.raises(InvalidArgumentError, match="scheme 'random' places every record at random"):
        partition_counts_parquet(spark, path, 4, "random", key_column="a")
    with pytest.raises(InvalidArgumentError, match="no Parquet files at"):
        partition_counts_parquet(spark, tmp_path / "empty-dir-does-not-exist", 4)


def test_integer_keys_count_as_the_bytes_kafkas_serializers_send(spark: Any, tmp_path: Path) -> None:
    values = [None if i % 31 == 0 else (i * 7919) % 5000 - 2500 for i in range(3000)]
    path = tmp_path / "ints.parquet"
    pq.write_table(pa.table({"id": pa.array(values, pa.int32())}), path, row_group_size=700)
    got = partition_counts_parquet(spark, path, 12, key_column="id")
    present = [v.to_bytes(4, "big", signed=True) for v in values if v is not None]  # IntegerSerializer
    assert got == np.bincount(partition_keys(present, 12), minlength=12).tolist()
