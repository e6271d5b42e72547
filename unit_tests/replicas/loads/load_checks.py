"""Independent checks of load plans: loads, bands and rules recomputed in plain Python from the
replica lists, never from the planner's own arrays."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

RESOURCES = ("disk", "bytes_in", "bytes_out", "leader_bytes_in", "leaders")


def loads_of(
    doc: Mapping[str, Any], lists: Mapping[tuple[str, int], Sequence[int]]
) -> dict[int, list[float]]:
    """Per broker id: disk, bytes in, bytes out, leader bytes in, leaders (replicas[0] leads)."""
    loads = {b["id"]: [0.0] * 5 for b in doc["brokers"]}
    for p in doc["partitions"]:
        reps = lists[(p["topic"], p["partition"])]
        size, rate, out = p.get("size", 0), p.get("bytes_in", 0), p.get("bytes_out", 0)
        for b in reps:
            loads[b][0] += size
            loads[b][1] += rate
        loads[reps[0]][2] += out
        loads[reps[0]][3] += rate
        loads[reps[0]][4] += 1
    return loads


def worst_violation(loads: Mapping[int, list[float]], staying: Sequence[int], band: float) -> list[float]:
    """Per resource: the largest distance outside mean × (1 ± band), in means (leaders rounded out)."""
    import math

    result = []
    for r in range(5):
        mean = sum(loads[b][r] for b in loads) / len(staying)
        low, high = mean * (1 - band), mean * (1 + band)
        if r == 4:
            low, high = math.floor(low + 1e-9), math.ceil(high - 1e-9)
        scale = mean if mean > 0 else 1.0
        result.append(max(max(low - loads[b][r], loads[b][r] - high, 0.0) / scale for b in staying))
    return result


def racks_ok(
    doc: Mapping[str, Any], lists: Mapping[tuple[str, int], Sequence[int]]
) -> dict[tuple[str, int], bool]:
    rack = {b["id"]: b.get("rack") for b in doc["brokers"]}
    count = len({r for r in rack.values() if r is not None}) or 1
    return {
        key: len({rack[b] for b in reps}) >= min(len(reps), count) and len(set(reps)) == len(reps)
        for key, reps in lists.items()
    }


def current_lists(doc: Mapping[str, Any]) -> dict[tuple[str, int], list[int]]:
    return {(p["topic"], p["partition"]): list(p["replicas"]) for p in doc["partitions"]}


def target_lists(doc: Mapping[str, Any], plan_json: str) -> dict[tuple[str, int], list[int]]:
    lists = current_lists(doc)
    for entry in json.loads(plan_json)["partitions"]:
        lists[(entry["topic"], entry["partition"])] = list(entry["replicas"])
    return lists


def bytes_copied(
    doc: Mapping[str, Any],
    before: Mapping[tuple[str, int], Sequence[int]],
    after: Mapping[tuple[str, int], Sequence[int]],
) -> float:
    size = {(p["topic"], p["partition"]): p.get("size", 0) for p in doc["partitions"]}
    return float(sum(size[k] * len(set(after[k]) - set(before[k])) for k in before))
