"""Parquet input cut into row groups: which files count, and columns checked in every file before reading."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.planning.parquet_row_groups import parquet_files, row_groups


def test_spark_output_directories_count_their_parquet_parts_only(tmp_path: Path) -> None:
    table = pa.table({"key": [b"a", b"b", b"c"]})
    (tmp_path / "day=1").mkdir()
    pq.write_table(table, tmp_path / "day=1" / "part-00000.snappy.parquet", row_group_size=2)
    pq.write_table(table, tmp_path / "part-00001.parquet")
    (tmp_path / "_SUCCESS").write_text("")
    (tmp_path / ".part-00001.parquet.crc").write_text("")
    (tmp_path / "_metadata.parquet").write_text("")
    names = [Path(f).name for f in parquet_files(tmp_path)]
    assert names == ["part-00000.snappy.parquet", "part-00001.parquet"]
    units = row_groups(tmp_path, "key")
    assert [(Path(u.file).name, u.index) for u in units] == [
        ("part-00000.snappy.parquet", 0), ("part-00000.snappy.parquet", 1), ("part-00001.parquet", 0)
    ]
    assert all(u.dictionary for u in units)
    assert sum(u.read().num_rows for u in units) == 6


def test_columns_and_types_are_checked_in_every_file_before_reading(tmp_path: Path) -> None:
    pq.write_table(pa.table({"key": ["a"], "size": [1]}), tmp_path / "a.parquet")
    pq.write_table(pa.table({"key": ["b"]}), tmp_path / "b.parquet")
    missing = r"b\.parquet: value column 'size' is not in the input; available columns: key$"  # which file
    with pytest.raises(InvalidArgumentError, match=missing):
        row_groups(tmp_path, "key", "size")
    pq.write_table(pa.table({"key": [1.5], "size": [1]}), tmp_path / "b.parquet")
    with pytest.raises(InvalidArgumentError, match=r"b\.parquet: key column 'key' has type double"):
        row_groups(tmp_path, "key", "size")
    pq.write_table(pa.table({"key": [7], "size": [1]}), tmp_path / "b.parquet")
    units = row_groups(tmp_path, "key", "size")  # integer keys: read as they are, not dictionary-encoded
    assert [u.dictionary for u in units] == [True, False]
    with pytest.raises(InvalidArgumentError, match="no Parquet files at"):
        row_groups(tmp_path / "a.parquet.missing", "key")
