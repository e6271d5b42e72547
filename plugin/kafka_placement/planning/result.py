"""From the loads of every partitioning to everything a plan reports (small pandas frames, no Spark).

:func:`plan_result` takes the merged :class:`~kafka_placement.planning.key_loads.KeyLoads` and the
scenarios, places the keyless records (:func:`keyless_loads`), and derives per-broker (leader and
replica), per-rack and per-consumer loads from the partition → replicas and partition → consumer tables
that the replicas and assignment cores compute for each scenario; then skew, keys moved and hot keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kafka_placement.partitioning import get_scheme, partition_keys
from kafka_placement.planning.key_loads import KeyLoads
from kafka_placement.planning.scenarios import Partitioning, Scenario
from kafka_placement.planning.skew import skew

if TYPE_CHECKING:
    import pandas as pd

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
    keyless: pd.DataFrame
    totals: dict[str, Any] = field(default_factory=dict)

    def skew_of(self, scenario: int, level: str, measure: str, metric: str = "max_over_mean") -> float:
        """One skew figure of one scenario (``level``/``measure`` as in :attr:`skew`; 0.0 if absent)."""
        sk = self.skew
        sel = sk[(sk["scenario"] == scenario) & (sk["level"] == level) & (sk["measure"] == measure)]
        return float(sel[metric].iloc[0]) if len(sel) else 0.0


def keyless_loads(p: Partitioning, records: int, nbytes: int) -> list[tuple[int, int, int]]:
    """Where ``records`` keyless records (``nbytes`` bytes) go in partitioning ``p``:
    ``(partition, records, bytes)`` for each partition that gets some.

    A scheme that hashes NULL (librdkafka ``murmur2``, ``consistent``, ``fnv1a``: NULL hashed like an
    empty key) puts them all in one partition. A scheme that treats NULL as keyless (Java's producer —
    ``murmur2_random``: sticky batches spread uniformly; librdkafka ``*_random``: random) spreads them
    evenly, which is where a long run of them lands: each partition gets ``records // n``, the lowest
    ``records % n`` partitions one more (bytes likewise)."""
    scheme, n = get_scheme(p.scheme), p.partitions
    if records <= 0 and nbytes <= 0:
        return []
    if not scheme.null_is_keyless:
        return [(scheme.keyed_index(None, n), records, nbytes)]
    base_r, extra_r = divmod(records, n)
    base_b, extra_b = divmod(nbytes, n)
    return [
        (q, base_r + (q < extra_r), base_b + (q < extra_b))
        for q in range(n)
        if base_r + (q < extra_r) or base_b + (q < extra_b)
    ]


def plan_result(loads: KeyLoads, scenarios: Sequence[Scenario], top_keys: int) -> PlanResult:
    """The report's frames for ``scenarios`` from the loads of their partitionings."""
    import pandas as pd

    parts = loads.partitionings
    pid_of = {p: i for i, p in enumerate(parts)}
    # a copy of the loads with the keyless records added below (the caller's KeyLoads stays as merged)
    loads = replace(loads, loads=[(k, r.copy(), b.copy()) for k, r, b in loads.loads])
    keyless_rows = []
    for i, p in enumerate(parts):
        # NULL keys of every scheme, plus what the scheme itself set aside (the empty key, for some)
        extra_records, extra_bytes = loads.keyless[i]
        records, nbytes = loads.null_records + extra_records, loads.null_bytes + extra_bytes
        for q, r, b in keyless_loads(p, records, nbytes):
            loads.loads[i][1][q] += r
            loads.loads[i][2][q] += b
        if records or nbytes:
            scheme = get_scheme(p.scheme)
            keyless_rows.append(
                {
                    "partitioning": p.name,
                    "null_records": loads.null_records,
                    "null_bytes": loads.null_bytes,
                    "empty_key_records": extra_records,
                    "empty_key_bytes": extra_bytes,
                    "placed": "spread evenly" if scheme.null_is_keyless else "one partition",
                    "partition": -1 if scheme.null_is_keyless else scheme.keyed_index(None, p.partitions),
                }
            )
    partitions = pd.concat(
        [
            pd.DataFrame(
                {
                    "partitioning": p.name,
                    "scheme": p.scheme,
                    "num_partitions": p.partitions,
                    "partition": range(p.partitions),
                    "records": loads.loads[i][1],
                    BYTES: loads.loads[i][2],
                    "keys": loads.loads[i][0],
                }
            )
            for i, p in enumerate(parts)
        ],
        ignore_index=True,
    )
    brokers, racks, consumers, scenario_rows = placement_loads(loads, scenarios, pid_of)
    scenario_frame = pd.DataFrame(scenario_rows)
    totals = {
        "records": loads.keyed_records + loads.null_records,
        "keyless_records": loads.null_records,
        BYTES: loads.keyed_bytes + loads.null_bytes,
        "keyless_bytes": loads.null_bytes,
        "keys": loads.keys,
    }
    return PlanResult(
        scenarios=scenario_frame,
        partitions=partitions,
        brokers=brokers,
        racks=racks,
        consumers=consumers,
        skew=skews(scenario_frame, partitions, brokers, racks, consumers),
        moved=moved_frame(loads),
        hot_keys=hot_keys_frame(loads, top_keys, totals["records"]),
        keyless=pd.DataFrame(
            keyless_rows,
            columns=[
                "partitioning",
                "null_records",
                "null_bytes",
                "empty_key_records",
                "empty_key_bytes",
                "placed",
                "partition",
            ],
        ),
        totals=totals,
    )


def placement_loads(
    loads: KeyLoads, scenarios: Sequence[Scenario], pid_of: dict[Partitioning, int]
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[dict[str, Any]]]:
    """Broker (leader/replica), rack and consumer loads of each scenario, idle ones as zeros."""
    import numpy as np
    import pandas as pd

    broker_frames, consumer_frames, scenario_rows = [], [], []
    replica_cache: dict[tuple[Any, int], list[list[int]]] = {}
    for sid, sc in enumerate(scenarios):
        n = sc.partitioning.partitions
        _, records, nbytes = loads.loads[pid_of[sc.partitioning]]
        key = (sc.placement, n)
        if key not in replica_cache:
            replica_cache[key] = sc.placement.replicas(n)
        replicas = replica_cache[key]
        brokers = [b.id for b in sc.placement.brokers]
        rack_of = {b.id: b.rack for b in sc.placement.brokers}
        column = {b: k for k, b in enumerate(brokers)}
        leader_partitions = np.zeros(len(brokers), np.int64)
        replica_count = np.zeros(len(brokers), np.int64)
        leader_records = np.zeros(len(brokers), np.int64)
        leader_bytes = np.zeros(len(brokers), np.int64)
        replica_bytes = np.zeros(len(brokers), np.int64)
        for partition, reps in enumerate(replicas):
            for pos, broker in enumerate(reps):
                k = column[broker]
                replica_count[k] += 1
                replica_bytes[k] += nbytes[partition]
                if pos == 0:
                    leader_partitions[k] += 1
                    leader_records[k] += records[partition]
                    leader_bytes[k] += nbytes[partition]
        broker_frames.append(
            pd.DataFrame(
                {
                    "scenario": sid,
                    "broker": brokers,
                    "rack": [rack_of[b] or "(none)" for b in brokers],
                    "leader_records": leader_records,
                    "leader_bytes": leader_bytes,
                    "replica_bytes": replica_bytes,
                    "leader_partitions": leader_partitions,
                    "replicas": replica_count,
                }
            )
        )
        members = sc.group.member_ids()
        owned: dict[str, list[int]] = {m: [] for m in members}
        for partition, member in enumerate(sc.group.owners(n, replicas, rack_of)):
            owned[member].append(partition)
        consumer_frames.append(
            pd.DataFrame(
                {
                    "scenario": sid,
                    "consumer": members,
                    "partitions": [len(owned[m]) for m in members],
                    "records": [int(records[owned[m]].sum()) for m in members],
                    BYTES: [int(nbytes[owned[m]].sum()) for m in members],
                }
            )
        )
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
    brokers_frame = pd.concat(broker_frames, ignore_index=True)
    racks = brokers_frame.groupby(["scenario", "rack"], as_index=False)[
        ["leader_partitions", "replicas", "leader_bytes", "replica_bytes"]
    ].sum()
    return brokers_frame, racks, pd.concat(consumer_frames, ignore_index=True), scenario_rows


def skews(
    scenarios: pd.DataFrame,
    partitions: pd.DataFrame,
    brokers: pd.DataFrame,
    racks: pd.DataFrame,
    consumers: pd.DataFrame,
) -> pd.DataFrame:
    """Skew (max/mean, cv, Gini) of every load level of every scenario."""
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


def moved_frame(loads: KeyLoads) -> pd.DataFrame:
    """Keys, records and bytes whose partition differs between each pair of keyed partitionings.

    One denominator for records and bytes: the keyed ones (keyless records have no partition to keep)."""
    import pandas as pd

    columns = ["from", "to", "keys", "keys_fraction", "records", "records_fraction", BYTES, "bytes_fraction"]
    parts = loads.partitionings
    out = []
    for (i, j), (k, r, b) in loads.moved.items():
        out.append(
            {
                "from": parts[i].name,
                "to": parts[j].name,
                "keys": k,
                "keys_fraction": k / loads.keys if loads.keys else 0.0,
                "records": r,
                "records_fraction": r / loads.keyed_records if loads.keyed_records else 0.0,
                BYTES: b,
                "bytes_fraction": b / loads.keyed_bytes if loads.keyed_bytes else 0.0,
            }
        )
    return pd.DataFrame(out, columns=columns)


def hot_keys_frame(loads: KeyLoads, top_keys: int, total_records: int) -> pd.DataFrame:
    """The hot keys (by records, then bytes, then key) with their partition in each keyed partitioning."""
    import pandas as pd

    hot = loads.hot[:top_keys]
    keys = [k for k, _, _ in hot]
    frame = pd.DataFrame(
        {
            "rank": range(1, len(hot) + 1),
            "key": [k.decode("utf-8", "backslashreplace") for k in keys],
            "records": [r for _, r, _ in hot],
            BYTES: [b for _, _, b in hot],
        }
    )
    for p in loads.partitionings:
        if not p.per_record:
            frame[p.name] = partition_keys(keys, p.partitions, p.scheme) if keys else []
    frame["records_share"] = frame["records"] / total_records if total_records else 0.0
    return frame
