"""Per-key totals reduced to small partial aggregates, and partials merged: the one pass of a plan.

Input: Arrow batches of ``key`` (binary; NULL for the keyless group), ``records`` and ``bytes`` in which
every distinct key appears once over all batches of all workers — the output of a group-by on the key.
A :class:`KeyLoadReducer` (one per Spark task, or one for the single-process path) turns its batches into
one small batch of tagged rows (:func:`partial_schema`); :func:`merge_partials` sums those into
:class:`KeyLoads`. Every scenario's partitioning is computed here in the same pass: per-partition loads,
keys/records/bytes moved between every pair of partitionings and the top hot-key candidates.

Keys are hashed by :func:`kafka_placement.partitioning.partition_keys` (one call per batch and
partitioning). Where a scheme treats a record as keyless — NULL keys of every scheme that does, and the
empty key of schemes with ``empty_is_keyless`` — its records are set aside as *keyless* and spread by
:func:`kafka_placement.planning.result.keyless_loads`. A scheme that places every record at random
(``random``) splits each key's records by a multinomial draw (what per-record uniform choices sum to);
its bytes follow the records in proportion.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.partitioning import get_scheme, partition_keys
from kafka_placement.planning.scenarios import Partitioning, Scenario

if TYPE_CHECKING:
    import pyarrow as pa

Int64s = npt.NDArray[np.int64]

#: Row kinds of a partial: a partition's load, a moved pair, keyed totals, keyless totals, a hot key.
LOAD, MOVED, KEYED, KEYLESS, HOT = range(5)
#: The partial's columns as Spark DDL (``mapInArrow`` output schema).
PARTIAL_DDL = "kind int, a int, b int, keys bigint, records bigint, bytes bigint, key binary"
MAX_TOP_KEYS = 10_000
_MULTINOMIAL_CELLS = 1 << 20  # keys × partitions drawn at once for a random scheme (bounds memory)


def partial_schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema(
        [
            ("kind", pa.int32()),
            ("a", pa.int32()),
            ("b", pa.int32()),
            ("keys", pa.int64()),
            ("records", pa.int64()),
            ("bytes", pa.int64()),
            ("key", pa.binary()),
        ]
    )


@dataclass
class KeyLoads:
    """Loads of every partitioning over the whole input (what the merge of all partials gives).

    ``loads[i]`` is ``(keys, records, bytes)`` per partition of partitioning ``i`` (keys ``-1`` for a random
    scheme); ``moved[(i, j)]`` the keys/records/bytes whose partition differs between keyed partitionings
    ``i < j``; ``keyless[i]`` the records/bytes partitioning ``i`` treats as keyless (NULL keys, and the
    empty key where the scheme says so); ``hot`` the ``top_keys`` keys by records, bytes, then key."""

    partitionings: list[Partitioning]
    loads: list[tuple[Int64s, Int64s, Int64s]]
    moved: dict[tuple[int, int], tuple[int, int, int]]
    keyless: list[tuple[int, int]]
    keys: int = 0
    keyed_records: int = 0
    keyed_bytes: int = 0
    null_records: int = 0
    null_bytes: int = 0
    hot: list[tuple[bytes, int, int]] = field(default_factory=list)

    @classmethod
    def empty(cls, partitionings: Sequence[Partitioning]) -> KeyLoads:
        """All zeros: the start of a reducer and of a merge."""
        parts = list(partitionings)
        return cls(
            parts,
            [_zeros(p.partitions) for p in parts],
            dict.fromkeys(moved_pairs(parts), (0, 0, 0)),
            [(0, 0)] * len(parts),
        )


def _zeros(n: int) -> tuple[Int64s, Int64s, Int64s]:
    return np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64)


def partitionings_of(scenarios: Sequence[Scenario], top_keys: int) -> list[Partitioning]:
    """The distinct partitionings of ``scenarios`` in order, after checking the plan's arguments."""
    if not scenarios:
        raise InvalidArgumentError("no scenario to plan: give at least one partition count")
    if not 0 <= top_keys <= MAX_TOP_KEYS:
        raise InvalidArgumentError(f"top keys must be in [0, {MAX_TOP_KEYS}], got {top_keys}")
    return list(dict.fromkeys(s.partitioning for s in scenarios))


def moved_pairs(partitionings: Sequence[Partitioning]) -> list[tuple[int, int]]:
    """Index pairs ``i < j`` of keyed partitionings (a random scheme moves nothing we can name)."""
    keyed = [i for i, p in enumerate(partitionings) if not p.per_record]
    return [(i, j) for x, i in enumerate(keyed) for j in keyed[x + 1 :]]


class KeyLoadReducer:
    """Accumulates batches of distinct keys; :meth:`partial` gives the tagged rows to merge."""

    def __init__(
        self, partitionings: Sequence[Partitioning], top_keys: int, rng: np.random.Generator | None = None
    ) -> None:
        self.partitionings = list(partitionings)
        self.top_keys = top_keys
        self.rng = rng or np.random.default_rng()
        self.state = KeyLoads.empty(self.partitionings)
        self._hot: pa.Table | None = None

    def add(self, batch: pa.RecordBatch | pa.Table) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        keys = batch.column("key")
        records = _int64(batch.column("records"))
        nbytes = _int64(batch.column("bytes"))
        null = keys.is_null().to_numpy(zero_copy_only=False)
        s = self.state
        if null.any():
            s.null_records += int(records[null].sum())
            s.null_bytes += int(nbytes[null].sum())
            valid = ~null
            keys, records, nbytes = keys.filter(pa.array(valid)), records[valid], nbytes[valid]
        if len(keys) == 0:
            return
        s.keys += len(keys)
        s.keyed_records += int(records.sum())
        s.keyed_bytes += int(nbytes.sum())
        empty = pc.binary_length(keys).to_numpy(zero_copy_only=False) == 0
        placed: dict[int, tuple[Int64s, npt.NDArray[np.bool_] | None]] = {}
        for i, p in enumerate(self.partitionings):
            key_counts, record_loads, byte_loads = s.loads[i]
            if p.per_record:
                self._random(p.partitions, records, nbytes, record_loads, byte_loads)
                continue
            partition = partition_keys(keys, p.partitions, p.scheme)
            mask = None
            if get_scheme(p.scheme).empty_is_keyless and empty.any():
                kr, kb = s.keyless[i]
                s.keyless[i] = (kr + int(records[empty].sum()), kb + int(nbytes[empty].sum()))
                mask = ~empty
            q, r, b = (
                (partition, records, nbytes)
                if mask is None
                else (partition[mask], records[mask], nbytes[mask])
            )
            np.add.at(key_counts, q, 1)
            np.add.at(record_loads, q, r)
            np.add.at(byte_loads, q, b)
            placed[i] = (partition, mask)
        for i, j in s.moved:
            (qi, mi), (qj, mj) = placed[i], placed[j]
            differs = qi != qj
            for m in (mi, mj):
                if m is not None:
                    differs &= m
            k, r, b = s.moved[(i, j)]
            s.moved[(i, j)] = (
                k + int(differs.sum()),
                r + int(records[differs].sum()),
                b + int(nbytes[differs].sum()),
            )
        if self.top_keys:
            self._keep_hot(keys, records, nbytes)

    def _random(
        self, n: int, records: Int64s, nbytes: Int64s, record_loads: Int64s, byte_loads: Int64s
    ) -> None:
        """Each key's records split uniformly at random over ``n`` partitions; bytes in proportion."""
        chunk = max(1, _MULTINOMIAL_CELLS // n)
        pvals = np.full(n, 1.0 / n)
        for start in range(0, len(records), chunk):
            r, b = records[start : start + chunk], nbytes[start : start + chunk]
            counts = self.rng.multinomial(r, pvals)
            share = np.floor(b[:, None] * (counts / np.maximum(r, 1)[:, None])).astype(np.int64)
            # what flooring left over goes to the partition that got most of the key's records
            share[np.arange(len(b)), counts.argmax(axis=1)] += b - share.sum(axis=1)
            record_loads += counts.sum(axis=0)
            byte_loads += share.sum(axis=0)

    def _keep_hot(self, keys: pa.Array, records: Int64s, nbytes: Int64s) -> None:
        import pyarrow as pa

        batch = pa.table({"key": keys.cast(pa.binary()), "records": records, "bytes": nbytes})
        if self._hot is not None:
            batch = pa.concat_tables([self._hot, batch])
        self._hot = _top(batch, self.top_keys)

    def partial(self) -> pa.RecordBatch:
        """Every nonzero aggregate as one tagged row (columns of :func:`partial_schema`)."""
        import pyarrow as pa

        s = self.state
        columns: list[list[npt.NDArray[np.int64]]] = [
            [] for _ in range(6)
        ]  # kind, a, b, keys, records, bytes

        def put(kind: int, a: object, b: object, keys: object, records: object, nbytes: object) -> None:
            values = [np.atleast_1d(np.asarray(v, dtype=np.int64)) for v in (a, b, keys, records, nbytes)]
            size = min(v.size for v in values) and max(v.size for v in values)  # scalars broadcast
            columns[0].append(np.full(size, kind, np.int64))
            for column, v in zip(columns[1:], values, strict=True):
                column.append(np.broadcast_to(v, size))

        for i, (key_counts, record_loads, byte_loads) in enumerate(s.loads):
            q = np.flatnonzero(key_counts | record_loads | byte_loads)
            put(LOAD, i, q, key_counts[q], record_loads[q], byte_loads[q])
            if any(s.keyless[i]):
                put(KEYLESS, i, 0, 0, *s.keyless[i])
        for (i, j), (k, r, b) in s.moved.items():
            if k:
                put(MOVED, i, j, k, r, b)
        put(KEYED, 0, 0, s.keys, s.keyed_records, s.keyed_bytes)
        if s.null_records or s.null_bytes:
            put(KEYLESS, -1, 0, 0, s.null_records, s.null_bytes)
        hot_keys: list[bytes | None] = []
        if self._hot is not None and self._hot.num_rows:
            hot_keys = self._hot.column("key").to_pylist()
            put(HOT, 0, 0, 1, self._hot.column("records").to_numpy(), self._hot.column("bytes").to_numpy())
        arrays = [np.concatenate(c) for c in columns]
        schema = partial_schema()
        key_column = [None] * (len(arrays[0]) - len(hot_keys)) + hot_keys
        return pa.RecordBatch.from_arrays(
            [pa.array(a, type=f.type) for a, f in zip(arrays, schema, strict=False)]
            + [pa.array(key_column, pa.binary())],
            schema=schema,
        )


def _int64(column: pa.Array | pa.ChunkedArray) -> Int64s:
    import pyarrow as pa

    return np.asarray(column.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)


def _top(table: pa.Table, k: int) -> pa.Table:
    """The ``k`` rows with most records, then most bytes, then the smallest key (unsigned bytes)."""
    import pyarrow.compute as pc

    order = [("records", "descending"), ("bytes", "descending"), ("key", "ascending")]
    if table.num_rows > k:
        table = table.take(pc.select_k_unstable(table, k, sort_keys=order))
    return table.take(pc.sort_indices(table, sort_keys=order))


def merge_partials(
    partials: pa.Table | Iterable[pa.RecordBatch], partitionings: Sequence[Partitioning], top_keys: int
) -> KeyLoads:
    """Sum partial aggregates (from any number of reducers) into the loads of the whole input."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = (
        partials
        if isinstance(partials, pa.Table)
        else pa.Table.from_batches(list(partials), partial_schema())
    )
    parts = list(partitionings)
    out = KeyLoads.empty(parts)
    kind = table.column("kind").to_numpy()
    a = table.column("a").to_numpy()
    b = table.column("b").to_numpy()
    keys = table.column("keys").to_numpy()
    records = table.column("records").to_numpy()
    nbytes = table.column("bytes").to_numpy()
    for i in range(len(parts)):
        sel = (kind == LOAD) & (a == i)
        for acc, values in zip(out.loads[i], (keys, records, nbytes), strict=True):
            np.add.at(acc, b[sel], values[sel])
        sel = (kind == KEYLESS) & (a == i)
        out.keyless[i] = (int(records[sel].sum()), int(nbytes[sel].sum()))
    for i, j in out.moved:
        sel = (kind == MOVED) & (a == i) & (b == j)
        out.moved[(i, j)] = (int(keys[sel].sum()), int(records[sel].sum()), int(nbytes[sel].sum()))
    sel = kind == KEYED
    out.keys, out.keyed_records, out.keyed_bytes = (
        int(keys[sel].sum()),
        int(records[sel].sum()),
        int(nbytes[sel].sum()),
    )
    sel = (kind == KEYLESS) & (a == -1)
    out.null_records, out.null_bytes = int(records[sel].sum()), int(nbytes[sel].sum())
    for i, p in enumerate(parts):
        if p.per_record:
            out.loads[i][0][:] = -1
    hot = table.filter(pc.equal(table.column("kind"), HOT)).select(["key", "records", "bytes"])
    if top_keys and hot.num_rows:
        top = _top(hot, top_keys)
        out.hot = list(
            zip(
                top.column("key").to_pylist(),
                top.column("records").to_pylist(),
                top.column("bytes").to_pylist(),
                strict=True,
            )
        )
    return out
