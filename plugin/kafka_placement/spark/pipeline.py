"""The planning pipeline: which partitions, brokers, racks and consumers will be hot?

Input: any DataFrame with a key column (binary; strings are taken as their UTF-8 bytes, as Kafka's
StringSerializer sends them; ints/longs as 4/8 big-endian bytes, as Integer/LongSerializer send
them) and optionally a value column (binary/string: its byte length; numeric: a size in bytes).
A record's bytes are ``len(key) + value size`` (a NULL or negative numeric size counts as 0). NULL
keys follow the scheme (:func:`keyless_loads`): hashed like an empty key into one partition where the
scheme hashes NULL, spread evenly where it treats NULL as keyless (Java's sticky producer, librdkafka's
``*_random``); they count in every partition, broker, rack and consumer load, and ``totals`` reports them
apart (``keyless_records``/``keyless_bytes``). Keys moved and hot keys are about keyed records only.

Steps, all distributed (only aggregates reach the driver):

1. per-key aggregate ``(key, records, bytes)``;
2. key → partition for every distinct (partition count, scheme) with
   :func:`kafka_placement.partitioning.partition_keys` inside ``mapInArrow`` (per key — one hash
   call per distinct key, not per record; the ``random`` scheme is applied per record instead);
3. per-partition loads; joined with broadcast tables partition → replicas and partition → consumer
   built by the replicas and assignment cores, giving broker (leader / replica), rack and consumer
   loads per scenario;
4. keys/records/bytes moved between every pair of partitionings, and the top hot keys.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.spark.metrics import skew
from kafka_placement.spark.scenarios import Partitioning, Scenario

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

KEY = "key"
BYTES = "bytes"


@dataclass
class PlanResult:
    """Everything the report shows, as small pandas frames (aggregates only)."""

    scenarios: pd.DataFrame
    partitions: pd.DataFrame
    brokers: pd.DataFrame
    racks: pd.DataFrame
    consumers: pd.DataFrame
    skew: pd.DataFrame
    moved: pd.DataFrame
    hot_keys: pd.DataFrame
    totals: dict[str, Any] = field(default_factory=dict)


def _check_column(df: DataFrame, name: str, role: str) -> Any:
    fields = {f.name: f for f in df.schema.fields}
    if name not in fields:
        raise InvalidArgumentError(
            f"{role} column {name!r} is not in the input; available columns: {', '.join(fields) or '(none)'}"
        )
    return fields[name].dataType


def normalize(df: DataFrame, key_column: str = "key", value_column: str | None = None) -> DataFrame:
    """``(key binary, bytes bigint)`` per record, validating column names and types."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    key_type = _check_column(df, key_column, "key")
    key = F.col(key_column)
    if isinstance(key_type, T.BinaryType):
        key_bin = key
    elif isinstance(key_type, T.StringType):
        key_bin = key.cast("binary")
    elif isinstance(key_type, T.IntegerType | T.LongType | T.ShortType | T.ByteType):
        # Two's complement, big-endian, fixed width: what Kafka's Integer/Long/Short serializers send.
        width = {T.LongType: 8, T.IntegerType: 4, T.ShortType: 2, T.ByteType: 1}[type(key_type)]
        unsigned = key.cast("bigint")
        if width < 8:
            unsigned = unsigned.bitwiseAND(F.lit((1 << (8 * width)) - 1))
        key_bin = F.unhex(F.lpad(F.hex(unsigned), 2 * width, "0"))
    else:
        raise InvalidArgumentError(
            f"key column {key_column!r} has type {key_type.simpleString()}; allowed: binary, string "
            "(UTF-8 bytes), int/bigint/smallint/tinyint (big-endian bytes, as Kafka's serializers)"
        )
    if value_column is None:
        size = F.lit(0).cast("bigint")
    else:
        value_type = _check_column(df, value_column, "value")
        value = F.col(value_column)
        if isinstance(value_type, T.BinaryType | T.StringType):
            size = F.coalesce(F.octet_length(value), F.lit(0)).cast("bigint")
        elif isinstance(value_type, T.NumericType):
            size = F.greatest(F.coalesce(value, F.lit(0)).cast("bigint"), F.lit(0).cast("bigint"))
        else:
            raise InvalidArgumentError(
                f"value column {value_column!r} has type {value_type.simpleString()}; allowed: binary or "
                "string (its byte length) or a numeric size in bytes"
            )
    record_bytes = F.coalesce(F.octet_length(key_bin), F.lit(0)).cast("bigint") + size
    return df.select(key_bin.alias(KEY), record_bytes.alias(BYTES))


def _partition_columns(partitionings: Sequence[Partitioning]) -> Any:
    """A ``mapInArrow`` function adding ``p0..pk`` (int) for each partitioning to a key batch."""
    specs = [(p.partitions, p.scheme) for p in partitionings]

    def add_partitions(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import numpy as np
        import pyarrow as pa

        from kafka_placement.partitioning import partition_keys

        for batch in batches:
            keys = batch.column(0)
            columns = list(batch.columns)
            names = list(batch.schema.names)
            for i, (n, scheme) in enumerate(specs):
                columns.append(pa.array(np.asarray(partition_keys(keys, n, scheme), dtype=np.int32)))
                names.append(f"p{i}")
            yield pa.RecordBatch.from_arrays(columns, names=names)

    return add_partitions


def with_partitions(df: DataFrame, partitionings: Sequence[Partitioning], key_column: str = KEY) -> DataFrame:
    """``df`` (its first column the binary key) plus ``p0..pk`` from our partitioners (vectorized)."""
    from pyspark.sql import types as T

    first = df.schema.fields[0]
    if first.name != key_column or not isinstance(first.dataType, T.BinaryType):
        df = df.select(key_column, *[c for c in df.columns if c != key_column])
    schema = T.StructType(
        [
            *df.schema.fields,
            *[T.StructField(f"p{i}", T.IntegerType(), False) for i in range(len(partitionings))],
        ]
    )
    return df.mapInArrow(_partition_columns(partitionings), schema)


def partition_counts(
    df: DataFrame,
    num_partitions: int,
    scheme: str = "murmur2",
    key_column: str = "key",
    *,
    distinct_first: bool = False,
) -> list[int]:
    """Records per partition of ``df``'s keys (NULL keys skipped): the fast path, no per-key rows.

    Each Arrow batch is hashed by :func:`kafka_placement.partitioning.partition_keys` and reduced to
    ``num_partitions`` counts inside the Python worker, so only counts travel back to the JVM. With
    ``distinct_first`` the JVM first counts records per distinct key and each distinct key is hashed
    once (weighted by its count) — much less Arrow traffic when keys repeat (skewed data); ignored
    for schemes that place every record at random.
    """
    from pyspark.sql import functions as F

    part = Partitioning(num_partitions, scheme)
    keys = normalize(df, key_column).select(KEY).where(F.col(KEY).isNotNull())
    weighted = distinct_first and not part.per_record
    if weighted:
        keys = keys.groupBy(KEY).agg(F.count(F.lit(1)).alias("records"))

    def count(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import numpy as np
        import pyarrow as pa

        from kafka_placement.partitioning import partition_keys

        ids = pa.array(np.arange(part.partitions, dtype=np.int32))
        for batch in batches:
            if batch.num_rows:
                partitions = partition_keys(batch.column(0), part.partitions, part.scheme)
                weights = batch.column(1).to_numpy() if weighted else None
                counts = np.bincount(partitions, weights=weights, minlength=part.partitions)
                yield pa.RecordBatch.from_arrays(
                    [ids, pa.array(np.rint(counts).astype(np.int64))], names=["partition", "records"]
                )

    rows = (
        keys.mapInArrow(count, "partition int, records bigint").groupBy("partition").sum("records").collect()
    )
    out = [0] * part.partitions
    for row in rows:
        out[int(row[0])] = int(row[1])
    return out


def _stack(columns: Sequence[str]) -> Any:
    from pyspark.sql import functions as F

    pairs = ", ".join(f"{i}, {c}" for i, c in enumerate(columns))
    return F.expr(f"stack({len(columns)}, {pairs}) as (pid, partition)")


def plan(
    spark: SparkSession,
    df: DataFrame,
    scenarios: Sequence[Scenario],
    *,
    key_column: str = "key",
    value_column: str | None = None,
    top_keys: int = 20,
) -> PlanResult:
    """Run every scenario over ``df`` and return the aggregates (see the module docstring)."""
    import pandas as pd
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    if not scenarios:
        raise InvalidArgumentError("no scenario to plan: give at least one partition count")
    if not 0 <= top_keys <= 10_000:
        raise InvalidArgumentError(f"top keys must be in [0, 10000], got {top_keys}")
    records = normalize(df, key_column, value_column)

    partitionings = list(dict.fromkeys(s.partitioning for s in scenarios))
    keyed_parts = [p for p in partitionings if not p.per_record]
    random_parts = [p for p in partitionings if p.per_record]
    pid_of = {p: i for i, p in enumerate(partitionings)}

    # One pass over the input: per-key aggregate (the NULL-key group holds the keyless records).
    by_key = (
        records.groupBy(KEY)
        .agg(F.count(F.lit(1)).alias("records"), F.sum(BYTES).alias(BYTES))
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    keyed = with_partitions(by_key.where(F.col(KEY).isNotNull()), keyed_parts).persist(
        StorageLevel.MEMORY_AND_DISK
    )
    try:
        totals_row = (
            by_key.agg(
                F.coalesce(F.sum("records"), F.lit(0)).alias("records"),
                F.coalesce(F.sum(F.when(F.col(KEY).isNull(), F.col("records"))), F.lit(0)).alias(
                    "keyless_records"
                ),
                F.coalesce(F.sum(BYTES), F.lit(0)).alias(BYTES),
                F.coalesce(F.sum(F.when(F.col(KEY).isNull(), F.col(BYTES))), F.lit(0)).alias("keyless_bytes"),
                F.count(F.col(KEY)).alias("keys"),
            )
            .collect()[0]
            .asDict()
        )
        totals: dict[str, Any] = {k: int(v or 0) for k, v in totals_row.items()}

        frames = []
        if keyed_parts:
            cols = [f"p{i}" for i in range(len(keyed_parts))]
            remap = F.create_map(
                *[x for p in keyed_parts for x in (F.lit(keyed_parts.index(p)), F.lit(pid_of[p]))]
            )
            frames.append(
                keyed.select("records", BYTES, _stack(cols))
                .withColumn("pid", remap[F.col("pid")])
                .groupBy("pid", "partition")
                .agg(
                    F.sum("records").alias("records"),
                    F.sum(BYTES).alias(BYTES),
                    F.count(F.lit(1)).alias("keys"),
                )
            )
        if random_parts:
            cols = [f"p{i}" for i in range(len(random_parts))]
            remap = F.create_map(
                *[x for p in random_parts for x in (F.lit(random_parts.index(p)), F.lit(pid_of[p]))]
            )
            per_record = with_partitions(records.where(F.col(KEY).isNotNull()), random_parts)
            frames.append(
                per_record.select(BYTES, _stack(cols))
                .withColumn("pid", remap[F.col("pid")])
                .groupBy("pid", "partition")
                .agg(
                    F.count(F.lit(1)).alias("records"),
                    F.sum(BYTES).alias(BYTES),
                    F.lit(None).cast("bigint").alias("keys"),
                )
            )
        part_df = frames[0] if len(frames) == 1 else frames[0].unionByName(frames[1])
        keyless_rows = keyless_loads(partitionings, totals["keyless_records"], totals["keyless_bytes"])
        if keyless_rows:
            keyless_df = spark.createDataFrame(
                [(pid_of[p], q, r, b, None if p.per_record else 0) for p, q, r, b in keyless_rows],
                "pid int, partition int, records bigint, bytes bigint, keys bigint",
            )
            part_df = (
                part_df.select(
                    F.col("pid").cast("int"), F.col("partition").cast("int"), F.col("records").cast("bigint"),
                    F.col(BYTES).cast("bigint"), F.col("keys").cast("bigint"),
                )
                .unionByName(keyless_df)
                .groupBy("pid", "partition")
                .agg(
                    F.sum("records").alias("records"), F.sum(BYTES).alias(BYTES), F.sum("keys").alias("keys")
                )
            )
        part_df = part_df.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            partitions = _complete_partitions(part_df.toPandas(), partitionings)
            brokers, racks, consumers, scenario_rows = _placement_loads(spark, part_df, scenarios, pid_of)
        finally:
            part_df.unpersist()
        moved = _moved(keyed, keyed_parts, totals)
        hot = _hot_keys(keyed, keyed_parts, top_keys, totals)
    finally:
        keyed.unpersist()
        by_key.unpersist()

    scenario_frame = pd.DataFrame(scenario_rows)
    return PlanResult(
        scenarios=scenario_frame,
        partitions=partitions,
        brokers=brokers,
        racks=racks,
        consumers=consumers,
        skew=_skews(scenario_frame, partitions, brokers, racks, consumers),
        moved=moved,
        hot_keys=hot,
        totals=totals,
    )


def keyless_loads(
    partitionings: Sequence[Partitioning], records: int, nbytes: int
) -> list[tuple[Partitioning, int, int, int]]:
    """Where NULL-key records go, per partitioning: ``(partitioning, partition, records, bytes)``.

    A scheme that hashes NULL (librdkafka ``murmur2``, ``consistent``, ``fnv1a``: NULL hashed like an
    empty key) puts them all in one partition. A scheme that treats NULL as keyless (Java's producer —
    ``murmur2_random``: sticky batches spread uniformly; librdkafka ``*_random``: random) spreads them
    evenly, which is where a long run of them lands: each partition gets ``records // n``, the lowest
    ``records % n`` partitions one more (bytes likewise)."""
    from kafka_placement.partitioning import get_scheme

    rows: list[tuple[Partitioning, int, int, int]] = []
    if records <= 0:
        return rows
    for p in partitionings:
        scheme, n = get_scheme(p.scheme), p.partitions
        if scheme.null_is_keyless:
            base_r, extra_r = divmod(records, n)
            base_b, extra_b = divmod(nbytes, n)
            rows += [
                (p, q, base_r + (q < extra_r), base_b + (q < extra_b))
                for q in range(n) if base_r + (q < extra_r) or base_b + (q < extra_b)
            ]
        else:
            rows.append((p, scheme.keyed_index(None, n), records, nbytes))
    return rows


def _complete_partitions(raw: pd.DataFrame, partitionings: Sequence[Partitioning]) -> pd.DataFrame:
    """Every partition of every partitioning, idle ones as zero rows."""
    import pandas as pd

    frames = []
    for pid, p in enumerate(partitionings):
        full = pd.DataFrame({"partition": range(p.partitions)})
        got = raw[raw["pid"] == pid].drop(columns=["pid"])
        merged = full.merge(got, on="partition", how="left")
        merged[["records", BYTES]] = merged[["records", BYTES]].fillna(0).astype("int64")
        merged["keys"] = merged["keys"].fillna(0 if not p.per_record else -1).astype("int64")
        merged.insert(0, "partitioning", p.name)
        merged.insert(1, "scheme", p.scheme)
        merged.insert(2, "num_partitions", p.partitions)
        frames.append(merged)
    return pd.concat(frames, ignore_index=True)


def _placement_loads(
    spark: SparkSession, part_df: DataFrame, scenarios: Sequence[Scenario], pid_of: dict[Partitioning, int]
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[dict[str, Any]]]:
    """Broker/rack/consumer loads: per-partition loads ⋈ broadcast(replicas), ⋈ broadcast(owners)."""
    import pandas as pd
    from pyspark.sql import functions as F

    replica_rows: list[tuple[int, int, int, int, str, int]] = []
    owner_rows: list[tuple[int, int, int, str]] = []
    scenario_rows: list[dict[str, Any]] = []
    broker_index: list[dict[str, Any]] = []
    member_index: list[dict[str, Any]] = []
    replica_cache: dict[tuple[Any, int], list[list[int]]] = {}
    for sid, sc in enumerate(scenarios):
        n = sc.partitioning.partitions
        pid = pid_of[sc.partitioning]
        key = (sc.placement, n)
        if key not in replica_cache:
            replica_cache[key] = sc.placement.replicas(n)
        replicas = replica_cache[key]
        rack_of = {b.id: b.rack for b in sc.placement.brokers}
        for partition, reps in enumerate(replicas):
            for pos, broker in enumerate(reps):
                replica_rows.append(
                    (sid, pid, partition, broker, rack_of.get(broker) or "(none)", 1 if pos == 0 else 0)
                )
        for partition, member in enumerate(sc.group.owners(n, replicas, rack_of)):
            owner_rows.append((sid, pid, partition, member))
        scenario_rows.append(
            {
                "scenario": sid,
                "name": sc.name,
                "partitioning": sc.partitioning.name,
                "scheme": sc.partitioning.scheme,
                "num_partitions": n,
                "placement": sc.placement.name,
                "placer": sc.placement.placer,
                "replication_factor": sc.placement.replication_factor,
                "group": sc.group.name,
                "assignor": sc.group.assignor,
                "consumers": sc.group.consumers,
            }
        )
        broker_index += [
            {"scenario": sid, "broker": b.id, "rack": b.rack or "(none)"} for b in sc.placement.brokers
        ]
        member_index += [{"scenario": sid, "consumer": m} for m in sc.group.member_ids()]

    assigned = pd.DataFrame(
        replica_rows, columns=["scenario", "pid", "partition", "broker", "rack", "leader"]
    )
    owned = pd.DataFrame(owner_rows, columns=["scenario", "pid", "partition", "consumer"])
    replica_tbl = spark.createDataFrame(
        assigned.astype({c: "int32" for c in ("scenario", "pid", "partition", "broker", "leader")})
    )
    owner_tbl = spark.createDataFrame(owned.astype({c: "int32" for c in ("scenario", "pid", "partition")}))
    with_replicas = part_df.join(F.broadcast(replica_tbl), ["pid", "partition"])
    broker_raw = (
        with_replicas.groupBy("scenario", "broker")
        .agg(
            F.sum("leader").alias("leader_partitions"),
            F.count(F.lit(1)).alias("replicas"),
            F.sum(F.when(F.col("leader") == 1, F.col("records")).otherwise(0)).alias("leader_records"),
            F.sum(F.when(F.col("leader") == 1, F.col(BYTES)).otherwise(0)).alias("leader_bytes"),
            F.sum(BYTES).alias("replica_bytes"),
        )
        .toPandas()
    )
    consumer_raw = (
        part_df.join(F.broadcast(owner_tbl), ["pid", "partition"])
        .groupBy("scenario", "consumer")
        .agg(
            F.count(F.lit(1)).alias("partitions"),
            F.sum("records").alias("records"),
            F.sum(BYTES).alias(BYTES),
        )
        .toPandas()
    )
    # Idle brokers/consumers (no partition with data, or none assigned) count as zero load.
    counts = assigned.groupby(["scenario", "broker"]).agg(
        leader_partitions=("leader", "sum"), replicas=("leader", "size")
    )
    brokers = pd.DataFrame(broker_index).merge(
        broker_raw.drop(columns=["leader_partitions", "replicas"]), on=["scenario", "broker"], how="left"
    )
    brokers = brokers.merge(counts.reset_index(), on=["scenario", "broker"], how="left")
    load_cols = ["leader_partitions", "replicas", "leader_records", "leader_bytes", "replica_bytes"]
    brokers[load_cols] = brokers[load_cols].fillna(0).astype("int64")
    racks = brokers.groupby(["scenario", "rack"], as_index=False)[
        ["leader_partitions", "replicas", "leader_bytes", "replica_bytes"]
    ].sum()
    owned_counts = owned.groupby(["scenario", "consumer"]).size().rename("partitions").reset_index()
    consumers = pd.DataFrame(member_index).merge(owned_counts, on=["scenario", "consumer"], how="left")
    consumers = consumers.merge(
        consumer_raw.drop(columns=["partitions"]), on=["scenario", "consumer"], how="left"
    )
    consumers[["partitions", "records", BYTES]] = (
        consumers[["partitions", "records", BYTES]].fillna(0).astype("int64")
    )
    return brokers, racks, consumers, scenario_rows


def _skews(
    scenarios: pd.DataFrame,
    partitions: pd.DataFrame,
    brokers: pd.DataFrame,
    racks: pd.DataFrame,
    consumers: pd.DataFrame,
) -> pd.DataFrame:
    import pandas as pd

    rows: list[dict[str, Any]] = []
    for sc in scenarios.to_dict("records"):
        sid = sc["scenario"]
        parts = partitions[partitions["partitioning"] == sc["partitioning"]]
        levels = {
            ("partition", "records"): parts["records"],
            ("partition", "bytes"): parts[BYTES],
            ("broker", "leader_bytes"): brokers.loc[brokers["scenario"] == sid, "leader_bytes"],
            ("broker", "replica_bytes"): brokers.loc[brokers["scenario"] == sid, "replica_bytes"],
            ("rack", "replica_bytes"): racks.loc[racks["scenario"] == sid, "replica_bytes"],
            ("consumer", "bytes"): consumers.loc[consumers["scenario"] == sid, BYTES],
        }
        for (level, measure), values in levels.items():
            s = skew(values.tolist())
            rows.append(
                {
                    "scenario": sid,
                    "name": sc["name"],
                    "level": level,
                    "measure": measure,
                    "entities": s.entities,
                    "max": s.max,
                    "mean": s.mean,
                    "max_over_mean": s.max_over_mean,
                    "cv": s.cv,
                    "gini": s.gini,
                }
            )
    return pd.DataFrame(rows)


def _moved(keyed: DataFrame, parts: Sequence[Partitioning], totals: dict[str, Any]) -> pd.DataFrame:
    """Keys, records and bytes whose partition differs between each pair of partitionings."""
    import pandas as pd
    from pyspark.sql import functions as F

    pairs = [(i, j) for i in range(len(parts)) for j in range(i + 1, len(parts))]
    columns = ["from", "to", "keys", "keys_fraction", "records", "records_fraction", BYTES, "bytes_fraction"]
    if not pairs:
        return pd.DataFrame(columns=columns)
    aggs = []
    for i, j in pairs:
        differs = F.col(f"p{i}") != F.col(f"p{j}")
        aggs += [
            F.sum(F.when(differs, 1).otherwise(0)).alias(f"k_{i}_{j}"),
            F.sum(F.when(differs, F.col("records")).otherwise(0)).alias(f"r_{i}_{j}"),
            F.sum(F.when(differs, F.col(BYTES)).otherwise(0)).alias(f"b_{i}_{j}"),
        ]
    row = keyed.agg(*aggs).collect()[0].asDict()
    # One denominator for records and bytes: the keyed ones (keyless records have no partition to keep).
    keyed_records = totals["records"] - totals["keyless_records"]
    keyed_bytes = totals[BYTES] - totals.get("keyless_bytes", 0)
    out = []
    for i, j in pairs:
        k, r, b = (int(row[f"{x}_{i}_{j}"] or 0) for x in "krb")
        out.append(
            {
                "from": parts[i].name,
                "to": parts[j].name,
                "keys": k,
                "keys_fraction": k / totals["keys"] if totals["keys"] else 0.0,
                "records": r,
                "records_fraction": r / keyed_records if keyed_records else 0.0,
                BYTES: b,
                "bytes_fraction": b / keyed_bytes if keyed_bytes else 0.0,
            }
        )
    return pd.DataFrame(out, columns=columns)


def _hot_keys(
    keyed: DataFrame, parts: Sequence[Partitioning], top: int, totals: dict[str, Any]
) -> pd.DataFrame:
    """The ``top`` keys by records (ties by bytes, then key), with their partition in each partitioning."""
    from pyspark.sql import functions as F

    ordered = keyed.orderBy(F.col("records").desc(), F.col(BYTES).desc(), F.col(KEY)).limit(top)
    hot = ordered.toPandas()
    hot = hot.rename(columns={f"p{i}": p.name for i, p in enumerate(parts)})
    hot.insert(0, "rank", range(1, len(hot) + 1))
    hot[KEY] = [bytes(k).decode("utf-8", "backslashreplace") for k in hot[KEY]]
    hot["records_share"] = hot["records"] / totals["records"] if totals["records"] else 0.0
    return hot
