"""The recommendation: its choice and reasons follow from loads counted directly (kafka-python's murmur2)."""

from __future__ import annotations

import pyarrow as pa
from kafka.partitioner.default import murmur2 as kafka_python_murmur2

from kafka_placement.planning.local import plan_table
from kafka_placement.planning.scenarios import Group, Placement, scenario_grid
from kafka_placement.planning.summary import human_bytes, human_count, summarize, summary_lines


def test_human_units() -> None:
    assert [human_bytes(x) for x in (0, 999, 1000, 1_234_567, 5e12)] == [
        "0 B",
        "999 B",
        "1 kB",
        "1.23 MB",
        "5 TB",
    ]
    assert [human_count(x) for x in (7, 9_999, 12_345, 2_500_000)] == ["7", "9,999", "12.3k", "2.5M"]


def _partition(key: bytes, n: int) -> int:
    return (kafka_python_murmur2(key) & 0x7FFFFFFF) % n


def test_the_most_even_partitioning_is_recommended_with_its_numbers() -> None:
    # 4,000 keys of one record each, plus one key with 30% of all records
    keys = [f"k{i}".encode() for i in range(4000)] + [b"hot"] * 1714
    table = pa.table({"key": keys})
    grid = scenario_grid(
        [3, 8], ["murmur2"], [Placement(seed=1), Placement(placer="balanced", seed=1)], [Group(2)]
    )
    result = plan_table(table, grid, top_keys=5)
    summary = summarize(result, period_s=10.0)
    loads = {n: [0] * n for n in (3, 8)}
    for k in keys:
        for n in (3, 8):
            loads[n][_partition(k, n)] += 1
    ratio = {n: max(v) / (len(keys) / n) for n, v in loads.items()}
    best = min((3, 8), key=lambda n: (round(ratio[n], 6), n))
    rec = summary["recommendation"]
    assert rec["num_partitions"] == best
    assert summary["partition_max_over_mean"] == ratio[best]
    assert summary["hottest_partition"]["records"] == max(loads[best])
    share = 1714 / len(keys)
    pinned = summary["pinning_hot_keys"]
    assert [p["key"] for p in pinned] == (["hot"] if share * best > 1 else [])
    assert summary["rates"]["total_records_per_s"] == len(keys) / 10.0
    assert summary["rates"]["hottest_partition_records_per_s"] == max(loads[best]) / 10.0
    lines = summary_lines(summary)
    assert lines[0].startswith(f"Recommendation: {best} partitions (murmur2/{best})")
    if best == 3:
        moved = sum(1 for k in keys if _partition(k, 3) != _partition(k, 8)) / len(keys)
        assert summary["moved_from_smallest"] is None and moved >= 0
    else:
        distinct = set(keys)
        moved_keys = sum(1 for k in distinct if _partition(k, 3) != _partition(k, 8))
        assert summary["moved_from_smallest"]["keys_fraction"] == moved_keys / len(distinct)


def test_no_records_no_recommendation() -> None:
    result = plan_table(pa.table({"key": pa.array([], pa.binary())}), scenario_grid([4]))
    assert summarize(result)["recommendation"] is None
    assert summary_lines(summarize(result))[0].startswith("Recommendation: none")
