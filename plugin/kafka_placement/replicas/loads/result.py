"""A load-aware plan: the target replica lists, the moves with their reasons, loads before and
after, goals met or not (and what blocked them), bytes copied against the lower bound."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kafka_placement.replicas.loads.bound import BytesBound
from kafka_placement.replicas.loads.goals import Bands, Goals
from kafka_placement.replicas.loads.load_goals import CAPACITY_COLUMNS, RESOURCES
from kafka_placement.replicas.loads.model import LoadModel
from kafka_placement.replicas.loads.state import EPSILON, Move
from kafka_placement.vocabulary import TopicPartition

#: A band counts as held when no broker is further outside it than this (in units of the mean).
HELD = 1e-9


@dataclass(frozen=True, eq=False)
class RebalancePlan:
    model: LoadModel
    goals: Goals
    bands: Bands
    before: np.ndarray
    after: np.ndarray
    replicas: np.ndarray
    moves: tuple[Move, ...]
    lower_bound: BytesBound
    problems: tuple[str, ...]
    budget_hit: bool
    max_bytes_moved: float | None

    def changed_rows(self) -> np.ndarray:
        """Partitions whose replica list (or its order) changes."""
        result: np.ndarray = np.flatnonzero((self.replicas != self.model.replicas).any(axis=1))
        return result

    def changed(self) -> dict[TopicPartition, list[int]]:
        """The reassignment: new replica lists (broker ids, leader first) of the changed partitions."""
        m = self.model
        return {m.topic_partition(int(p)): m.replica_ids(self.replicas, int(p)) for p in self.changed_rows()}

    def current(self) -> dict[TopicPartition, list[int]]:
        """Today's lists of the changed partitions (what a rollback restores)."""
        m = self.model
        return {m.topic_partition(int(p)): m.replica_ids(m.replicas, int(p)) for p in self.changed_rows()}

    def copies(self) -> list[tuple[int, int, float]]:
        """(partition, new broker index, bytes) of every replica the plan creates."""
        result = []
        for p in self.changed_rows().tolist():
            old = set(self.model.replicas[p].tolist())
            for b in self.replicas[p].tolist():
                if b >= 0 and b not in old:
                    result.append((p, b, float(self.model.size[p])))
        return result

    def moved_per_broker(self) -> tuple[np.ndarray, np.ndarray]:
        """Bytes copied onto and off each broker."""
        n = self.model.num_brokers
        into, off = np.zeros(n), np.zeros(n)
        for p in self.changed_rows().tolist():
            old = set(self.model.replicas[p].tolist()) - {-1}
            new = set(self.replicas[p].tolist()) - {-1}
            for b in new - old:
                into[b] += self.model.size[p]
            for b in old - new:
                off[b] += self.model.size[p]
        return into, off

    @property
    def bytes_moved(self) -> float:
        return float(sum(c[2] for c in self.copies()))

    @property
    def leader_changes(self) -> int:
        return (
            int((self.replicas[:, 0] != self.model.replicas[:, 0]).sum()) if self.model.num_partitions else 0
        )

    def worst(self, loads: np.ndarray) -> np.ndarray:
        """Per resource, the worst distance outside the band (units of the mean) over staying brokers."""
        violation = self.bands.band_violation(loads)[~self.bands.removed]
        result: np.ndarray = violation.max(axis=0) if len(violation) else np.zeros(len(RESOURCES))
        return result

    def goal_status(self) -> dict[str, dict[str, Any]]:
        before, after = self.worst(self.before), self.worst(self.after)
        violation = self.bands.band_violation(self.after)
        status: dict[str, dict[str, Any]] = {}
        staying = ~self.bands.removed
        for r, name in enumerate(RESOURCES):
            outside = [
                int(self.model.broker_ids[b]) for b in np.flatnonzero((violation[:, r] > HELD) & staying)
            ]
            met = not outside
            blocked = None
            if not met:
                blocked = (
                    "the --max-bytes-moved budget"
                    if self.budget_hit
                    else "no move, swap or leadership change reduces it without breaking the rack rule, "
                    "a capacity limit or another band"
                )
            status[name] = {
                "goal": name in self.goals.soft,
                "band": [
                    float(self.bands.lower[staying][0, r]) if staying.any() else 0.0,
                    float(self.bands.upper[staying][0, r]) if staying.any() else 0.0,
                ],
                "mean": float(self.bands.mean[r]),
                "worst_before": round(float(before[r]), 6),
                "worst_after": round(float(after[r]), 6),
                "met_before": bool(before[r] <= HELD),
                "met": met,
                "brokers_outside": outside,
                "blocked_by": blocked if name in self.goals.soft else None,
            }
        for goal in self.goals.placement_goals():
            status[goal.name] = goal.status(
                self.model, self.bands.removed, self.model.replicas, self.replicas
            )
        columns = list(CAPACITY_COLUMNS)
        capacity = self.after[:, columns] > self.bands.limit[:, columns] * (1 + 1e-12) + EPSILON
        status["capacity"] = {
            "goal": True,
            "threshold": self.goals.capacity_threshold,
            "met": not capacity.any(),
            "brokers_outside": [int(self.model.broker_ids[b]) for b in np.flatnonzero(capacity.any(axis=1))],
        }
        return status

    def reasons(self) -> dict[TopicPartition, list[str]]:
        result: dict[TopicPartition, list[str]] = {}
        ids = self.model.broker_ids
        for move in self.moves:
            tp = self.model.topic_partition(move.partition)
            src, dst = int(ids[move.source]), int(ids[move.destination])
            what = f"leadership {src}→{dst}" if move.kind == "leader" else f"replica {src}→{dst}"
            result.setdefault(tp, []).append(f"{what}: {move.reason(ids)}")
        return result

    def broker_rows(self) -> list[dict[str, Any]]:
        into, off = self.moved_per_broker()
        rows = []
        for i, ident in enumerate(self.model.broker_ids):
            rows.append(
                {
                    "id": int(ident),
                    "rack": self.model.racks[i],
                    "removed": bool(self.bands.removed[i]),
                    "before": {name: float(self.before[i, r]) for r, name in enumerate(RESOURCES)},
                    "after": {name: float(self.after[i, r]) for r, name in enumerate(RESOURCES)},
                    "bytes_moved_in": float(into[i]),
                    "bytes_moved_out": float(off[i]),
                }
            )
        return rows

    def summary(self, with_reasons: bool = True) -> dict[str, Any]:
        kinds: dict[str, int] = {}
        for move in self.moves:
            kinds[move.kind] = kinds.get(move.kind, 0) + 1
        bound = self.lower_bound
        moved = self.bytes_moved
        return {
            "brokers": self.broker_rows(),
            "bytes_moved": moved,
            "lower_bound": {"bytes": bound.bytes, "above_bands": bound.above, "below_bands": bound.below},
            "bytes_moved_vs_bound": round(moved / bound.bytes, 4) if bound.bytes else None,
            "max_bytes_moved": self.max_bytes_moved,
            "budget_reached": self.budget_hit,
            "leader_changes": self.leader_changes,
            "partitions_changed": len(self.changed_rows()),
            "steps": kinds,
            "goals": self.goal_status(),
            "band": self.goals.band,
            "problems": list(self.problems),
            "plan": {
                "version": 1,
                "partitions": [
                    {"topic": tp.topic, "partition": tp.partition, "replicas": reps}
                    for tp, reps in self.changed().items()
                ],
            },
            **(
                {"reasons": {f"{tp.topic}-{tp.partition}": r for tp, r in self.reasons().items()}}
                if with_reasons
                else {}
            ),
        }
