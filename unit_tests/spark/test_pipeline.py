"""Plan results equal a direct computation (numpy/pandas + our cores, no Spark) on the same sample.

Independent oracles on top: kafka-python's own murmur2 (``kafka.partitioner.default.murmur2``) and
librdkafka's helpers (``confluent_kafka.murmur2``/``consistent``) for the partition of every key.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pandas as pd
import pytest
from unit_tests.spark.record_oracle import partition_oracle

from kafka_placement.assignment import assign
from kafka_placement.errors import InvalidArgumentError
from kafka_placement.partitioning import partition_keys
from kafka_placement.planning.result import PlanResult
from kafka_placement.planning.scenarios import PLAN_TOPIC, Group, Placement, scenario_grid
from kafka_placement.planning.skew import skew
from kafka_placement.spark.pipeline import plan
from kafka_placement.spark.sample import SampleSpec, key_bytes, sample_arrays, sample_dataframe
from kafka_placement.vocabulary import Member

pytestmark = pytest.mark.spark

SPEC = SampleSpec(30_000, distinct_keys=700, exponent=1.2, mean_value_size=300, seed=11)
PARTITIONS = [12, 16]
SCHEMES = ["murmur2", "jump", "consistent"]
PLACEMENTS = [Placement(seed=3), Placement(placer="striped", seed=3)]
GROUPS = [Group(3, "range"), Group(5, "roundrobin"), Group(2, "failover")]
SCENARIOS = scenario_grid(PARTITIONS, SCHEMES, PLACEMENTS, GROUPS)


@pytest.fixture(scope="module")
def records() -> pd.DataFrame:
    ranks, sizes = sample_arrays(SPEC, np.arange(SPEC.records))
    keys = key_bytes(ranks)
    return pd.DataFrame({"key": keys, "bytes": [len(k) for k in keys] + sizes})


@pytest.fixture(scope="module")
def result(spark: Any) -> PlanResult:
    df = sample_dataframe(spark, SPEC, num_slices=3)
    return plan(spark, df, SCENARIOS, value_column="value_size", top_keys=10)


def direct_partition_loads(records: pd.DataFrame, n: int, scheme: str) -> pd.DataFrame:
    partition = partition_keys(records["key"].tolist(), n, scheme)
    frame = records.assign(partition=partition)
    return (
        frame.groupby("partition")
        .agg(records=("key", "size"), bytes=("bytes", "sum"), keys=("key", "nunique"))
        .reindex(range(n), fill_value=0)
    )


def test_totals(result: PlanResult, records: pd.DataFrame) -> None:
    assert result.totals == {
        "records": SPEC.records,
        "keyless_records": 0,
        "bytes": int(records["bytes"].sum()),
        "keyless_bytes": 0,
        "keys": records["key"].nunique(),
    }


@pytest.mark.parametrize("n", PARTITIONS)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_partition_loads_equal_direct_computation(
    result: PlanResult, records: pd.DataFrame, n: int, scheme: str
) -> None:
    got = result.partitions[result.partitions["partitioning"] == f"{scheme}/{n}"].set_index("partition")
    expected = direct_partition_loads(records, n, scheme)
    assert got["records"].tolist() == expected["records"].tolist()
    assert got["bytes"].tolist() == expected["bytes"].tolist()
    assert got["keys"].tolist() == expected["keys"].tolist()


@pytest.mark.parametrize("n", PARTITIONS)
def test_murmur2_partitions_match_kafka_python_and_librdkafka(
    result: PlanResult, records: pd.DataFrame, n: int
) -> None:
    from kafka.partitioner.default import murmur2 as kafka_python_murmur2

    confluent_kafka = pytest.importorskip("confluent_kafka")
    counts: Counter[int] = Counter()
    crc: Counter[int] = Counter()
    for key, c in records["key"].value_counts().items():
        partition = (kafka_python_murmur2(key) & 0x7FFFFFFF) % n
        assert partition == confluent_kafka.murmur2(key, n)
        counts[partition] += int(c)
        crc[confluent_kafka.consistent(key, n)] += int(c)
    for scheme, oracle in (("murmur2", counts), ("consistent", crc)):
        got = result.partitions[result.partitions["partitioning"] == f"{scheme}/{n}"]
        assert got["records"].tolist() == [oracle.get(p, 0) for p in range(n)]


def test_broker_rack_and_consumer_loads_equal_direct_computation(
    result: PlanResult, records: pd.DataFrame
) -> None:
    for sc in result.scenarios.to_dict("records"):
        scenario = SCENARIOS[sc["scenario"]]
        n = scenario.partitioning.partitions
        loads = direct_partition_loads(records, n, scenario.partitioning.scheme)
        replicas = scenario.placement.replicas(n)  # the replicas core, same seed
        leader_bytes: Counter[int] = Counter()
        replica_bytes: Counter[int] = Counter()
        for p, reps in enumerate(replicas):
            leader_bytes[reps[0]] += int(loads.loc[p, "bytes"])
            for b in reps:
                replica_bytes[b] += int(loads.loc[p, "bytes"])
        got = result.brokers[result.brokers["scenario"] == sc["scenario"]].set_index("broker")
        broker_ids = [b.id for b in scenario.placement.brokers]
        assert got.loc[broker_ids, "leader_bytes"].tolist() == [leader_bytes[b] for b in broker_ids]
        assert got.loc[broker_ids, "replica_bytes"].tolist() == [replica_bytes[b] for b in broker_ids]
        rack_of = {b.id: b.rack for b in scenario.placement.brokers}
        rack_bytes: Counter[str] = Counter()
        for b, v in replica_bytes.items():
            rack_bytes[str(rack_of[b])] += v
        got_racks = result.racks[result.racks["scenario"] == sc["scenario"]].set_index("rack")[
            "replica_bytes"
        ]
        assert got_racks.to_dict() == dict(rack_bytes)

        group = scenario.group
        priorities = {m: group.consumers - i for i, m in enumerate(group.member_ids())}
        members = {
            m: Member([PLAN_TOPIC], priority=priorities[m] if group.assignor == "failover" else None)
            for m in group.member_ids()
        }
        assignment = assign(group.assignor, {PLAN_TOPIC: n}, members)
        expected = {
            m: int(sum(loads.loc[tp.partition, "bytes"] for tp in tps)) for m, tps in assignment.items()
        }
        got_c = result.consumers[result.consumers["scenario"] == sc["scenario"]].set_index("consumer")[
            "bytes"
        ]
        assert got_c.to_dict() == expected


def test_failover_group_puts_everything_on_one_consumer(result: PlanResult) -> None:
    failover = result.scenarios[result.scenarios["assignor"] == "failover"]["scenario"]
    for sid in failover:
        got = result.consumers[result.consumers["scenario"] == sid]
        assert sorted(got["bytes"].tolist())[0] == 0
        assert got["bytes"].max() == result.totals["bytes"]


def test_skew_metrics_are_those_of_the_loads(result: PlanResult, records: pd.DataFrame) -> None:
    for sc in result.scenarios.to_dict("records")[:4]:
        loads = direct_partition_loads(records, sc["num_partitions"], sc["scheme"])
        expected = skew(loads["records"].tolist())
        row = result.skew[
            (result.skew["scenario"] == sc["scenario"])
            & (result.skew["level"] == "partition")
            & (result.skew["measure"] == "records")
        ].iloc[0]
        assert row["max_over_mean"] == pytest.approx(expected.max_over_mean)
        assert row["gini"] == pytest.approx(expected.gini)
        assert row["cv"] == pytest.approx(expected.cv)


def test_moved_equals_direct_comparison(result: PlanResult, records: pd.DataFrame) -> None:
    by_key = records.groupby("key").agg(records=("key", "size"), bytes=("bytes", "sum")).reset_index()
    keys = by_key["key"].tolist()
    names = [f"{s}/{n}" for n in PARTITIONS for s in SCHEMES]
    parts = {f"{s}/{n}": partition_keys(keys, n, s) for n in PARTITIONS for s in SCHEMES}
    assert len(result.moved) == len(names) * (len(names) - 1) // 2
    for row in result.moved.to_dict("records"):
        differs = parts[row["from"]] != parts[row["to"]]
        assert row["keys"] == int(differs.sum())
        assert row["records"] == int(by_key["records"][differs].sum())
        assert row["bytes"] == int(by_key["bytes"][differs].sum())
        # one denominator for both: the keyed records and their bytes
        assert row["records_fraction"] == pytest.approx(row["records"] / by_key["records"].sum())
        assert row["bytes_fraction"] == pytest.approx(row["bytes"] / by_key["bytes"].sum())
    # By arithmetic: modulo hashing 12 → 16 moves 75% of keys, jump moves the minimum 25%.
    m = result.moved.set_index(["from", "to"])
    assert m.loc[("murmur2/12", "murmur2/16"), "keys_fraction"] == pytest.approx(0.75, abs=0.05)
    assert m.loc[("jump/12", "jump/16"), "keys_fraction"] == pytest.approx(0.25, abs=0.05)


def test_hot_keys_are_the_most_frequent(result: PlanResult, records: pd.DataFrame) -> None:
    counts = records["key"].value_counts()
    top = result.hot_keys
    assert len(top) == 10
    assert top["records"].tolist() == counts.head(10).tolist()
    assert top["key"].iloc[0] == "user-1"
    for row in top.to_dict("records"):
        key = row["key"].encode()
        for n in PARTITIONS:
            for s in SCHEMES:
                assert row[f"{s}/{n}"] == int(partition_keys([key], n, s)[0])


def test_string_int_and_null_keys_from_files(spark: Any, tmp_path: Any) -> None:
    frame = pd.DataFrame(
        {
            "user": ["alice", "bob", None, "alice", "émile", ""],
            "id": [1, 2, 3, 1, 300, -1],
            "payload": ["x" * 10, "yy", "zzz", None, "ü", ""],
        }
    )
    path = tmp_path / "in.parquet"
    frame.to_parquet(path)
    df = spark.read.parquet(str(path))
    sc = scenario_grid([7], ["murmur2"], [Placement(seed=1)], [Group(2, "range")])
    by_user = plan(spark, df, sc, key_column="user", value_column="payload", top_keys=3)
    utf8_bytes = sum(len(str(v).encode()) for v in [*frame["user"], *frame["payload"]] if pd.notna(v))
    assert by_user.totals == {
        "records": 6,
        "keyless_records": 1,
        "bytes": utf8_bytes,
        "keyless_bytes": 3,
        "keys": 4,
    }
    # librdkafka's murmur2 hashes a NULL key like an empty one: the None record joins the "" key's partition
    expected = Counter(
        int(partition_keys([k.encode() if pd.notna(k) else b""], 7, "murmur2")[0]) for k in frame["user"]
    )
    assert by_user.partitions["records"].tolist() == [expected.get(p, 0) for p in range(7)]
    assert by_user.partitions["records"].sum() == 6  # every record is in a partition load
    by_id = plan(spark, df, sc, key_column="id")  # Kafka LongSerializer: 8 big-endian bytes
    expected_id = Counter(
        int(partition_keys([int(i).to_bytes(8, "big", signed=True)], 7)[0]) for i in frame["id"]
    )
    assert by_id.partitions["records"].tolist() == [expected_id.get(p, 0) for p in range(7)]
    by_int = plan(spark, df.selectExpr("CAST(id AS INT) AS id"), sc, key_column="id")  # IntegerSerializer
    expected_int = Counter(
        int(partition_keys([int(i).to_bytes(4, "big", signed=True)], 7)[0]) for i in frame["id"]
    )
    assert by_int.partitions["records"].tolist() == [expected_int.get(p, 0) for p in range(7)]


def test_missing_and_bad_columns_are_named(spark: Any) -> None:
    df = spark.createDataFrame([("a", 1.5)], "k string, v double")
    sc = scenario_grid([3])
    with pytest.raises(
        InvalidArgumentError, match="key column 'key' is not in the input; available columns: k, v"
    ):
        plan(spark, df, sc)
    with pytest.raises(InvalidArgumentError, match="value column 'size' is not in the input"):
        plan(spark, df, sc, key_column="k", value_column="size")
    with pytest.raises(InvalidArgumentError, match="key column 'v' has type double"):
        plan(spark, df, sc, key_column="v")


def test_random_scheme_is_planned_per_record(spark: Any) -> None:
    df = sample_dataframe(spark, SampleSpec(4000, distinct_keys=5, exponent=3.0, seed=1))
    res = plan(spark, df, scenario_grid([4], ["random"]), value_column="value_size")
    got = res.partitions["records"]
    assert got.sum() == 4000
    # five keys, one of them with most records: per key it would be lopsided, per record it is even.
    assert got.max() / got.mean() < 1.2
    assert (res.partitions["keys"] == -1).all()
    assert res.moved.empty


@pytest.mark.parametrize(("scheme", "distinct_first"), [("murmur2", False), ("consistent_random", True)])
def test_partition_counts_fast_path_equals_direct(
    spark: Any, records: pd.DataFrame, scheme: str, distinct_first: bool
) -> None:
    from kafka_placement.spark.pipeline import partition_counts

    df = sample_dataframe(spark, SPEC, num_slices=2)
    got = partition_counts(df, 13, scheme, distinct_first=distinct_first)
    assert got == np.bincount(partition_keys(records["key"].tolist(), 13, scheme), minlength=13).tolist()


def test_empty_input_gives_zero_loads_not_errors(spark: Any, tmp_path: Any) -> None:
    from kafka_placement.planning.report import write_report

    df = spark.createDataFrame([], "key binary, value binary")
    res = plan(spark, df, scenario_grid([4, 5], ["murmur2"], [Placement()], [Group(2)]), value_column="value")
    assert res.totals == {"records": 0, "keyless_records": 0, "bytes": 0, "keyless_bytes": 0, "keys": 0}
    assert res.partitions["records"].tolist() == [0] * 9
    assert (res.brokers["replica_bytes"] == 0).all() and (res.consumers["bytes"] == 0).all()
    assert res.moved["keys"].tolist() == [0] and res.hot_keys.empty
    assert (res.skew["max_over_mean"] == 0).all()
    assert write_report(res, tmp_path).is_file()


def test_null_keys_follow_the_scheme_in_every_load(spark: Any) -> None:
    """All keys NULL: Java's producer (murmur2_random) and jump spread them evenly, librdkafka's murmur2
    and consistent hash them like an empty key into one partition; loads and skew reflect it."""
    from kafka.partitioner.default import murmur2 as kafka_python_murmur2

    df = spark.createDataFrame([(None, b"v" * 10)] * 100, "key binary, value binary")
    sc = scenario_grid(
        [8], ["murmur2_random", "jump", "murmur2", "consistent"], [Placement(seed=1)], [Group(2, "range")]
    )
    res = plan(spark, df, sc, value_column="value")
    assert res.totals["keyless_records"] == 100 and res.totals["keyless_bytes"] == 1000
    parts = res.partitions.set_index(["partitioning", "partition"])
    for spread in ("murmur2_random/8", "jump/8"):
        assert [parts.loc[(spread, q), "records"] for q in range(8)] == [13, 13, 13, 13, 12, 12, 12, 12]
        assert sum(parts.loc[(spread, q), "bytes"] for q in range(8)) == 1000
    empty_murmur2 = (kafka_python_murmur2(b"") & 0x7FFFFFFF) % 8  # independent: kafka-python's murmur2
    assert parts.loc[("murmur2/8", empty_murmur2), "records"] == 100
    assert sum(parts.loc[("consistent/8", q), "records"] for q in range(8)) == 100
    assert max(parts.loc[("consistent/8", q), "records"] for q in range(8)) == 100
    consumers = res.consumers
    assert consumers.groupby("scenario")["records"].sum().tolist() == [100] * 4


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_csv_json_and_parquet_give_the_directly_counted_figures(spark: Any, tmp_path: Any, fmt: str) -> None:
    from kafka_placement.cli.plan_input import with_size_column
    from kafka_placement.planning.local import plan_table

    users: list[str | None] = [f"u{i % 17}" for i in range(300)] + [None] * 7 + [""] * 5
    sizes = [(i * 31) % 200 for i in range(len(users))]
    path = tmp_path / f"in.{fmt}"
    if fmt == "csv":  # Spark's CSV reader takes an empty field, quoted or not, as NULL
        lines = ["user,size"] + [
            f"{'' if u is None else (chr(34) * 2 if u == '' else u)},{s}"
            for u, s in zip(users, sizes, strict=True)
        ]
        path.write_text("\n".join(lines) + "\n")
        df = with_size_column(spark.read.option("header", "true").csv(str(path)), "size")
        keys: list[bytes | None] = [u.encode() if u else None for u in users]
    elif fmt == "json":
        pd.DataFrame({"user": users, "size": sizes}).to_json(path, orient="records", lines=True)
        df = spark.read.json(str(path))
        keys = [None if u is None else u.encode() for u in users]
    else:  # binary keys, including non-UTF-8 bytes
        keys = [None if u is None else (u.encode() + b"\xff\x00" if u else b"") for u in users]
        pd.DataFrame({"user": keys, "size": sizes}).to_parquet(path)
        df = spark.read.parquet(str(path))
    schemes = ["murmur2", "murmur2_random", "consistent_random"]
    grid = scenario_grid([5, 7], schemes, [Placement(seed=4)], [Group(2)])
    got = plan(spark, df, grid, key_column="user", value_column="size", top_keys=3)
    parts = got.partitions.set_index(["partitioning", "partition"])
    for n in (5, 7):
        for scheme in schemes:
            records, nbytes = partition_oracle(keys, sizes, n, scheme)
            assert [parts.loc[(f"{scheme}/{n}", q), "records"] for q in range(n)] == records, (fmt, scheme, n)
            assert [parts.loc[(f"{scheme}/{n}", q), "bytes"] for q in range(n)] == nbytes, (fmt, scheme, n)
    assert got.totals["keyless_records"] == keys.count(None)
    assert got.totals["keys"] == len({k for k in keys if k is not None})
    distinct = {k for k in keys if k is not None}
    from kafka.partitioner.default import murmur2 as kafka_python_murmur2

    positive = {k: kafka_python_murmur2(k) & 0x7FFFFFFF for k in distinct}
    changed = {k for k, h in positive.items() if h % 5 != h % 7}
    moved = got.moved.set_index(["from", "to"]).loc[("murmur2/5", "murmur2/7")]
    assert moved["keys"] == len(changed)
    assert moved["records"] == sum(1 for k in keys if k in changed)
    # the single-process path gives the same frames from the same records
    import pyarrow as pa

    local = plan_table(
        pa.table({"user": pa.array(keys, pa.binary()), "size": sizes}),
        grid,
        key_column="user",
        value_column="size",
        top_keys=3,
    )
    for name in ("partitions", "brokers", "consumers", "moved", "skew", "hot_keys", "keyless"):
        pd.testing.assert_frame_equal(getattr(got, name), getattr(local, name), check_dtype=False, obj=name)
