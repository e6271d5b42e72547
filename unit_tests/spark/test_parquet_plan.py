"""The Parquet plan on Spark (executors read the row groups) against a record-by-record count, and equal
to the generic DataFrame plan and the single-process plan on the same files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from unit_tests.spark.record_oracle import partition_oracle

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.planning.local import plan_parquet as plan_in_one_process
from kafka_placement.planning.scenarios import Group, Placement, scenario_grid
from kafka_placement.spark.parquet_plan import plan_parquet
from kafka_placement.spark.pipeline import plan

pytestmark = pytest.mark.spark

SCHEMES = ["murmur2", "murmur2_random", "consistent_random"]
GRID = scenario_grid([5, 7], SCHEMES, [Placement(seed=4)], [Group(2)])
FRAMES = ("partitions", "brokers", "consumers", "moved", "skew", "hot_keys", "keyless")


def write_files(root: Path, keys: pa.Array, sizes: list[int], files: int, row_group_size: int) -> None:
    """``files`` Parquet files of small row groups (each with its own key dictionary)."""
    root.mkdir()
    table = pa.table({"user": keys, "size": pa.array(sizes, pa.int64())})
    step = -(-len(table) // files)
    for i in range(files):
        pq.write_table(
            table.slice(i * step, step), root / f"part-{i:03d}.parquet", row_group_size=row_group_size
        )


@pytest.mark.parametrize("key_type", ["string", "binary", "int32"])
def test_figures_equal_a_direct_count_and_the_other_paths(spark: Any, tmp_path: Path, key_type: str) -> None:
    n = 400
    if key_type == "int32":
        raw: list[Any] = [None if i % 53 == 0 else (i * 7) % 31 - 15 for i in range(n)]
        arrow_keys = pa.array(raw, pa.int32())
        keys = [None if v is None else int(v).to_bytes(4, "big", signed=True) for v in raw]
    else:
        raw = [None if i % 53 == 0 else ("" if i % 41 == 0 else f"ü{(i * 7) % 29}") for i in range(n)]
        keys = [None if v is None else v.encode() for v in raw]
        arrow_keys = pa.array(raw, pa.string()) if key_type == "string" else pa.array(keys, pa.binary())
    sizes = [(i * 31) % 200 for i in range(n)]
    write_files(tmp_path / "in", arrow_keys, sizes, files=3, row_group_size=37)

    got = plan_parquet(spark, tmp_path / "in", GRID, key_column="user", value_column="size", top_keys=3)
    parts = got.partitions.set_index(["partitioning", "partition"])
    for count in (5, 7):
        for scheme in SCHEMES:
            records, nbytes = partition_oracle(keys, sizes, count, scheme)
            assert [parts.loc[(f"{scheme}/{count}", q), "records"] for q in range(count)] == records
            assert [parts.loc[(f"{scheme}/{count}", q), "bytes"] for q in range(count)] == nbytes
    assert got.totals["keys"] == len({k for k in keys if k is not None})
    assert got.totals["keyless_records"] == keys.count(None)

    generic = plan(
        spark,
        spark.read.parquet(str(tmp_path / "in")),
        GRID,
        key_column="user",
        value_column="size",
        top_keys=3,
    )
    local = plan_in_one_process(tmp_path / "in", GRID, key_column="user", value_column="size", top_keys=3)
    for name in FRAMES:
        for other in (generic, local):
            pd.testing.assert_frame_equal(
                getattr(got, name), getattr(other, name), check_dtype=False, obj=name
            )


def test_bad_columns_and_paths_fail_before_any_spark_job(spark: Any, tmp_path: Path) -> None:
    write_files(tmp_path / "in", pa.array([b"a"], pa.binary()), [1], files=1, row_group_size=10)
    missing = "key column 'nope' is not in the input; available columns: user, size$"
    with pytest.raises(InvalidArgumentError, match=missing):
        plan_parquet(spark, tmp_path / "in", GRID, key_column="nope")
    with pytest.raises(InvalidArgumentError, match="value column 'v' is not in the input"):
        plan_parquet(spark, tmp_path / "in", GRID, key_column="user", value_column="v")
    pq.write_table(pa.table({"user": pa.array([1.5])}), tmp_path / "float.parquet")
    with pytest.raises(InvalidArgumentError, match="key column 'user' has type double"):
        plan_parquet(spark, tmp_path / "float.parquet", GRID, key_column="user")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidArgumentError, match="no Parquet files at"):
        plan_parquet(spark, tmp_path / "empty", GRID, key_column="user")


def test_a_task_opens_its_file_once_for_all_its_row_groups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stage 1 as a task runs it (the function Spark calls, called here directly): the row groups it is
    handed are read through one reader, and the totals are those of the whole file."""
    from unit_tests.planning.test_parquet_row_groups import counting_opens

    from kafka_placement.planning.parquet_row_groups import row_groups
    from kafka_placement.spark.parquet_plan import _read_totals

    keys = [f"k{i % 13}" for i in range(600)]
    pq.write_table(pa.table({"key": keys}), tmp_path / "in.parquet", row_group_size=10)  # 60 row groups
    units = row_groups(tmp_path / "in.parquet", "key")
    opened = counting_opens(monkeypatch)
    handed = [pa.record_batch([pa.array(range(a, b))], ["id"]) for a, b in ((0, 35), (35, 60))]
    totals = pa.Table.from_batches(list(_read_totals(units)(iter(handed))))
    assert opened == ["in.parquet"]
    counted = dict(zip(totals.column("key").to_pylist(), totals.column("records").to_pylist(), strict=True))
    assert counted == {f"k{i}".encode(): keys.count(f"k{i}") for i in range(13)}
