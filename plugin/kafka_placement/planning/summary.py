"""What to do with a plan: a recommended partition count and placer, with the reasons in numbers.

:func:`summarize` reads a :class:`~kafka_placement.planning.result.PlanResult` and returns a plain dict
(it goes into ``plan.json`` as ``summary``; the CLI and the HTML report print the same numbers):

* the partitioning with the most even partition loads (max/mean records; fewer partitions on a tie —
  more partitions cost memory, file handles and rebalance time) and, for it, the placement and consumer
  group with the most even broker and consumer loads;
* hot keys that no partition count can spread: a key whose records alone exceed a partition's fair share
  (records / partitions) pins its partition above the mean whatever the count;
* what changing the partition count costs: keys and records remapped from the smallest planned count.

Rates are given when the caller says how long the input covers (``period_s``): ``records/s`` and
``MB/s`` (10^6 bytes, as Kafka's quotas and tools count them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafka_placement.planning.result import PlanResult

_UNITS = ("B", "kB", "MB", "GB", "TB", "PB", "EB")


def human_bytes(n: float) -> str:
    """``1234567`` → ``'1.23 MB'`` (decimal units)."""
    value = float(n)
    for unit in _UNITS:
        if abs(value) < 1000 or unit == _UNITS[-1]:
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.3g} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def human_count(n: float) -> str:
    """``1234567`` → ``'1.23M'``; below 10,000 the exact number."""
    if abs(n) < 10_000:
        return f"{n:,.0f}"
    for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.3g}{unit}"
    return f"{n:,.0f}"


@dataclass(frozen=True)
class _Pick:
    """The recommended scenario and the hottest partition, broker and consumer under it."""

    best: dict[str, Any]
    by_partitioning: dict[str, dict[str, Any]]  # each partitioning's first scenario
    hottest: Any  # pandas rows
    hot_broker: Any
    hot_consumer: Any

    @property
    def sid(self) -> Any:
        return self.best["scenario"]

    @property
    def n(self) -> int:
        return int(self.best["num_partitions"])


def summarize(result: PlanResult, period_s: float | None = None) -> dict[str, Any]:
    """The recommendation and its reasons (see the module docstring); JSON-ready."""
    t = result.totals
    scenarios: list[dict[str, Any]] = [
        {str(k): v for k, v in sc.items()} for sc in result.scenarios.to_dict("records")
    ]
    if not scenarios or not t["records"]:
        return {"recommendation": None, "reasons": ["no records: nothing to recommend"], "hot_keys": []}
    pick = _pick(result, scenarios)
    reasons = _load_reasons(result, pick)
    pinned, hot_key_reasons = _hot_keys(result, pick)
    reasons += hot_key_reasons
    moved_from = _moved_from_smallest(result, pick)
    if moved_from is not None:
        reasons.append(
            f"going from {moved_from['from']} to {pick.best['partitioning']} remaps "
            f"{100 * moved_from['keys_fraction']:.1f}% of keys "
            f"({100 * moved_from['records_fraction']:.1f}% of keyed records): per-key order breaks "
            "for them during the switch"
        )
    if t["keyless_records"]:
        reasons.append(
            f"{human_count(t['keyless_records'])} records have a NULL key "
            f"({100 * t['keyless_records'] / t['records']:.1f}%): placed as the scheme places keyless records"
        )
    summary = _summary(result, pick, pinned, moved_from, reasons)
    if period_s:
        summary["period_s"] = period_s
        summary["rates"] = _rates(t, pick, period_s)
        reasons.append(_rates_reason(summary["rates"], period_s))
    return summary


def _pick(result: PlanResult, scenarios: list[dict[str, Any]]) -> _Pick:
    """1. the partitioning: most even partition records, then fewer partitions, then the name;
    2. its placement and group: most even broker replica bytes, then consumer bytes, then scenario order."""
    by_partitioning: dict[str, dict[str, Any]] = {}
    for sc in scenarios:
        if sc["partitioning"] not in by_partitioning:
            by_partitioning[sc["partitioning"]] = sc
    best_part = min(
        by_partitioning.values(),
        key=lambda sc: (
            round(result.skew_of(sc["scenario"], "partition", "records"), 6),
            sc["num_partitions"],
            sc["partitioning"],
        ),
    )
    candidates = [sc for sc in scenarios if sc["partitioning"] == best_part["partitioning"]]
    best = min(
        candidates,
        key=lambda sc: (
            round(result.skew_of(sc["scenario"], "broker", "replica_bytes"), 6),
            round(result.skew_of(sc["scenario"], "consumer", "bytes"), 6),
            sc["scenario"],
        ),
    )
    sid = best["scenario"]
    parts = result.partitions[result.partitions["partitioning"] == best["partitioning"]]
    hottest = parts.sort_values(["records", "partition"], ascending=[False, True]).iloc[0]
    brokers = result.brokers[result.brokers["scenario"] == sid]
    hot_broker = brokers.sort_values(["replica_bytes", "broker"], ascending=[False, True]).iloc[0]
    consumers = result.consumers[result.consumers["scenario"] == sid]
    hot_consumer = consumers.sort_values(["bytes", "consumer"], ascending=[False, True]).iloc[0]
    return _Pick(best, by_partitioning, hottest, hot_broker, hot_consumer)


def _load_reasons(result: PlanResult, pick: _Pick) -> list[str]:
    """The recommendation's partition, broker and consumer loads, then the other partitionings'."""
    best, sid, hottest = pick.best, pick.sid, pick.hottest
    hot_broker, hot_consumer = pick.hot_broker, pick.hot_consumer
    part_skew = result.skew_of(sid, "partition", "records")
    reasons = [
        f"partition loads: max/mean {part_skew:.3f} with {best['partitioning']} "
        f"(hottest partition {int(hottest['partition'])}: {human_count(int(hottest['records']))} records, "
        f"{human_bytes(int(hottest['bytes']))})",
        f"broker loads with {best['placer']}: replica bytes max/mean "
        f"{result.skew_of(sid, 'broker', 'replica_bytes'):.3f}, leader bytes max/mean "
        f"{result.skew_of(sid, 'broker', 'leader_bytes'):.3f} (hottest broker {int(hot_broker['broker'])}: "
        f"{human_bytes(int(hot_broker['replica_bytes']))} of replicas)",
        f"consumer loads with {best['group']}: max/mean {result.skew_of(sid, 'consumer', 'bytes'):.3f} "
        f"(hottest {hot_consumer['consumer']}: {human_bytes(int(hot_consumer['bytes']))})",
    ]
    others = sorted(
        (round(result.skew_of(sc["scenario"], "partition", "records"), 3), sc["partitioning"])
        for sc in pick.by_partitioning.values()
        if sc["partitioning"] != best["partitioning"]
    )
    if others:
        reasons.append(
            "other partitionings, partition max/mean: " + ", ".join(f"{name} {s:.3f}" for s, name in others)
        )
    return reasons


def _hot_keys(result: PlanResult, pick: _Pick) -> tuple[list[dict[str, Any]], list[str]]:
    """3. hot keys that pin a partition whatever the count, and a key that dominates the hottest
    partition (more partitions leave it as hot): the pinning keys and the reasons."""
    n, hottest = pick.n, pick.hottest
    reasons = []
    pinned = []
    for row in result.hot_keys.to_dict("records"):
        share = float(row["records_share"])
        if share * n > 1.0:
            pinned.append({"key": row["key"], "records": int(row["records"]), "share": share})
    if pinned:
        top = pinned[0]
        reasons.append(
            f"hot key {top['key']!r} carries {100 * top['share']:.1f}% of all records: its partition holds "
            f"at least {top['share'] * n:.2f}× the mean with {n} partitions, and more partitions raise that "
            f"ratio — spread it with a compound key or a dedicated topic"
            + (f" ({len(pinned)} such keys)" if len(pinned) > 1 else "")
        )
    if pick.best["partitioning"] in result.hot_keys.columns and int(hottest["records"]):
        hot = result.hot_keys
        inside = hot[hot[pick.best["partitioning"]] == int(hottest["partition"])]
        if len(inside):
            dominant = inside.iloc[0]
            share = int(dominant["records"]) / int(hottest["records"])
            if share >= 0.5:
                reasons.append(
                    f"key {dominant['key']!r} alone is {100 * share:.1f}% of the hottest partition "
                    f"{int(hottest['partition'])}: that partition stays hot at any count while the key is "
                    "kept"
                )
    return pinned, reasons


def _moved_from_smallest(result: PlanResult, pick: _Pick) -> dict[str, Any] | None:
    """4. the cost of changing the count: keys remapped from the smallest planned count, same scheme."""
    best = pick.best
    same_scheme = [sc for sc in pick.by_partitioning.values() if sc["scheme"] == best["scheme"]]
    smallest = min(same_scheme, key=lambda sc: sc["num_partitions"])
    if smallest["partitioning"] == best["partitioning"] or not len(result.moved):
        return None
    m = result.moved[
        (result.moved["from"] == smallest["partitioning"]) & (result.moved["to"] == best["partitioning"])
    ]
    if not len(m):
        return None
    row = m.iloc[0]
    return {
        "from": smallest["partitioning"],
        "keys_fraction": float(row["keys_fraction"]),
        "records_fraction": float(row["records_fraction"]),
        "bytes_fraction": float(row["bytes_fraction"]),
    }


def _summary(
    result: PlanResult,
    pick: _Pick,
    pinned: list[dict[str, Any]],
    moved_from: dict[str, Any] | None,
    reasons: list[str],
) -> dict[str, Any]:
    best, hottest, hot_broker, hot_consumer = pick.best, pick.hottest, pick.hot_broker, pick.hot_consumer
    return {
        "recommendation": {
            "scenario": pick.sid,
            "partitioning": best["partitioning"],
            "num_partitions": pick.n,
            "scheme": best["scheme"],
            "placer": best["placer"],
            "placement": best["placement"],
            "group": best["group"],
        },
        "partition_max_over_mean": result.skew_of(pick.sid, "partition", "records"),
        "hottest_partition": {
            "partition": int(hottest["partition"]),
            "records": int(hottest["records"]),
            "bytes": int(hottest["bytes"]),
        },
        "hottest_broker": {
            "broker": int(hot_broker["broker"]),
            "replica_bytes": int(hot_broker["replica_bytes"]),
        },
        "hottest_consumer": {"consumer": str(hot_consumer["consumer"]), "bytes": int(hot_consumer["bytes"])},
        "pinning_hot_keys": pinned,
        "moved_from_smallest": moved_from,
        "reasons": reasons,
    }


def _rates(t: dict[str, Any], pick: _Pick, period_s: float) -> dict[str, float]:
    return {
        "total_records_per_s": t["records"] / period_s,
        "total_mb_per_s": t["bytes"] / period_s / 1e6,
        "hottest_partition_records_per_s": int(pick.hottest["records"]) / period_s,
        "hottest_partition_mb_per_s": int(pick.hottest["bytes"]) / period_s / 1e6,
        "hottest_broker_replica_mb_per_s": int(pick.hot_broker["replica_bytes"]) / period_s / 1e6,
        "hottest_consumer_mb_per_s": int(pick.hot_consumer["bytes"]) / period_s / 1e6,
    }


def _rates_reason(r: dict[str, float], period_s: float) -> str:
    return (
        f"over {period_s:g} s: {human_count(r['total_records_per_s'])} records/s, "
        f"{r['total_mb_per_s']:.3g} MB/s in total; hottest partition "
        f"{human_count(r['hottest_partition_records_per_s'])} records/s, "
        f"{r['hottest_partition_mb_per_s']:.3g} MB/s; hottest broker "
        f"{r['hottest_broker_replica_mb_per_s']:.3g} MB/s of replica writes; hottest consumer "
        f"{r['hottest_consumer_mb_per_s']:.3g} MB/s"
    )


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """The summary as text lines (the CLI prints them first)."""
    rec = summary.get("recommendation")
    if rec is None:
        return ["Recommendation: none (" + "; ".join(summary["reasons"]) + ")"]
    head = (
        f"Recommendation: {rec['num_partitions']} partitions ({rec['partitioning']}), "
        f"placer {rec['placer']}, group {rec['group']}"
    )
    return [head, *(f"  - {r}" for r in summary["reasons"])]
