"""The rack rule, defined once for every planner and check here: a partition's replicas span
``min(rf, R)`` distinct racks (``R``: the racks of the cluster; a cluster without racks has one), as
Kafka's rack-aware replica assignment places new partitions (KIP-36).

Who uses it how: the audits (:mod:`.placement_audit`, :mod:`.placement_quality`) require the
shortfall to be zero; the count planner (:mod:`.planner`) builds sets that reach it; the load planner
(:mod:`.loads`) moves replicas so that no partition's shortfall grows (a partition already short stays
movable as long as it gets no shorter). The shortfall comes in two forms, plain and numpy, because the
load planner scores thousands of candidates at once (numpy) and rechecks one at a time (plain, where
numpy's per-call cost dominates); ``unit_tests/replicas/test_rack_rule.py`` holds them equal.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TypeVar

import numpy as np

Count = TypeVar("Count", int, np.ndarray)


def racks_wanted(rf: Count, num_racks: int) -> Count:
    """How many distinct racks partitions of replication factor ``rf`` should span."""
    if isinstance(rf, np.ndarray):
        result: np.ndarray = np.minimum(rf, num_racks)
        return result
    return min(rf, num_racks)


def rack_shortfall(racks: Iterable[Hashable], rf: int, num_racks: int) -> int:
    """How many racks short of :func:`racks_wanted` a partition whose replicas sit on ``racks`` is."""
    return max(0, racks_wanted(rf, num_racks) - len(set(racks)))


def distinct_racks(rack_rows: np.ndarray) -> np.ndarray:
    """Per row of rack numbers (``-1``: no replica in that column), how many distinct racks."""
    ordered = np.sort(rack_rows, axis=1)
    new = ordered[:, 1:] != ordered[:, :-1]
    result: np.ndarray = (ordered[:, 0] >= 0).astype(np.int32) + (new & (ordered[:, 1:] >= 0)).sum(axis=1)
    return result


def rack_shortfalls(rack_rows: np.ndarray, rf: np.ndarray, num_racks: int) -> np.ndarray:
    """:func:`rack_shortfall` of each row of rack numbers (``-1``: no replica), in numpy."""
    result: np.ndarray = np.maximum(
        racks_wanted(rf.astype(np.int32), num_racks) - distinct_racks(rack_rows), 0
    )
    return result
