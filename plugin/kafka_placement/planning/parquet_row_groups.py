"""Parquet input cut into row groups: the unit of work of the Parquet plan paths (one process or Spark).

A :class:`RowGroup` names a file and a row group in it; it reads only the key (and value) column, the key
dictionary-encoded when it is a string or binary column, and totals records and bytes per key
(:func:`~kafka_placement.planning.key_totals.key_totals`). Columns and their types are checked on the
first file's schema before anything is read, so a bad argument fails at once with the columns there are.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.planning.key_totals import dictionary_keys, key_totals
from kafka_placement.planning.records import check_column, record_table

if TYPE_CHECKING:
    import pyarrow as pa


def parquet_files(path: str | Path) -> list[str]:
    """``path`` itself, or every ``*.parquet`` file under it (Spark's output directories)."""
    root = Path(path)
    if root.is_file():
        return [str(root)]
    files = sorted(str(p) for p in root.rglob("*.parquet") if not p.name.startswith(("_", ".")))
    if not files:
        raise InvalidArgumentError(f"no Parquet files at {str(root)!r}")
    return files


@dataclass(frozen=True)
class RowGroup:
    """Row group ``index`` of ``file``, to be read for ``key_column`` (and ``value_column``)."""

    file: str
    index: int
    key_column: str
    value_column: str | None
    dictionary: bool

    def read(self) -> pa.Table:
        import pyarrow.parquet as pq

        columns = [self.key_column] + ([self.value_column] if self.value_column else [])
        reader = pq.ParquetFile(self.file, read_dictionary=[self.key_column] if self.dictionary else None)
        return reader.read_row_group(self.index, columns=columns, use_threads=False)

    def key_totals(self) -> pa.Table:
        return key_totals(self.read(), self.key_column, self.value_column)


def row_groups(path: str | Path, key_column: str, value_column: str | None = None) -> list[RowGroup]:
    """Every row group of the Parquet file(s) at ``path``, after checking the columns in every file."""
    import pyarrow.parquet as pq

    units: list[RowGroup] = []
    for file in parquet_files(path):
        meta = pq.ParquetFile(file)
        schema = meta.schema_arrow
        try:
            check_column(key_column, "key", schema.names)
            if value_column is not None:
                check_column(value_column, "value", schema.names)
            columns = [key_column] + ([value_column] if value_column else [])
            record_table(schema.empty_table().select(columns), key_column, value_column)  # types, at once
        except InvalidArgumentError as exc:
            raise InvalidArgumentError(f"{file}: {exc}") from None
        dictionary = dictionary_keys(schema.field(key_column).type)
        units += [
            RowGroup(file, index, key_column, value_column, dictionary)
            for index in range(meta.metadata.num_row_groups)
        ]
    return units
