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
        ("part-00000.snappy.parquet", 0),
        ("part-00000.snappy.parquet", 1),
        ("part-00001.parquet", 0),
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


def counting_opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every ``pyarrow.parquet.ParquetFile`` opened from now on, by file name."""
    opened: list[str] = []
    real = pq.ParquetFile

    def open_file(source: object, *args: object, **kwargs: object) -> pq.ParquetFile:
        opened.append(Path(str(source)).name)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(pq, "ParquetFile", open_file)
    return opened


def test_a_reader_opens_each_file_once_for_all_its_row_groups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A footer holds every row group's metadata: opening the file per row group parses it once per row
    group (quadratic in the row groups). The reader parses it once per file, and reads what pyarrow reads."""
    from kafka_placement.planning.parquet_row_groups import RowGroupReader

    first = pa.table({"key": [f"k{i % 7}" for i in range(400)], "size": list(range(400))})
    pq.write_table(first, tmp_path / "a.parquet", row_group_size=10)  # 40 row groups
    pq.write_table(first.slice(0, 30), tmp_path / "b.parquet", row_group_size=10)  # 3
    units = row_groups(tmp_path, "key", "size")
    assert len(units) == 43
    opened = counting_opens(monkeypatch)
    with RowGroupReader() as reader:
        tables = [reader.read(unit) for unit in units]
    assert opened == ["a.parquet", "b.parquet"]
    got = pa.concat_tables(tables)
    expected = pa.concat_tables([first, first.slice(0, 30)])
    assert got.column("key").to_pylist() == expected.column("key").to_pylist()
    assert got.column("size").to_pylist() == expected.column("size").to_pylist()
    assert pa.types.is_dictionary(got.schema.field("key").type)  # string keys dictionary-encoded
