"""Cruise Control's TopicReplicaDistributionGoal: each topic's replicas spread evenly over the brokers.

Per topic, every broker that stays should hold between ``lower`` and ``upper`` of its replicas, the
limits Cruise Control computes from ``topic.replica.count.balance.threshold`` (default 3.00),
``topic.replica.count.balance.min.gap`` (2) and ``topic.replica.count.balance.max.gap`` (40) (see
Cruise Control's wiki, "Configurations", and the goal's source in linkedin/cruise-control): with
``average`` = the topic's replicas / the brokers that stay and ``margin = (threshold − 1) × 0.9``,

* ``upper = ceil(average × (1 + margin))``, kept within
  ``[ceil(average) + min_gap, ceil(average) + max_gap]``;
* ``lower = floor(average × max(0, 1 − margin))``, kept within
  ``[max(0, floor(average) − max_gap), max(0, floor(average) − min_gap)]``.

A broker being removed has the limits ``[0, 0]``. A broker's violation for a topic is how many
replicas it holds outside its limits. A move is acceptable when neither broker's violation grows:
the destination ends at most at ``upper`` and the source at least at ``lower`` (or they were already
outside and do not get further), as the goal's ``actionAcceptance``. Leadership changes do not
concern it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.replicas.loads.views import ModelView, StateView

#: Cruise Control's margin: the threshold's excess over 1 is used at 90% to avoid churn.
BALANCE_MARGIN = 0.9


def topic_limits(
    replicas_per_topic: np.ndarray, staying: int, threshold: float, min_gap: int, max_gap: int
) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) replicas per staying broker for topics with ``replicas_per_topic`` replicas."""
    margin = (threshold - 1.0) * BALANCE_MARGIN
    lower, upper = [], []
    for total in replicas_per_topic.tolist():
        average = total / staying
        high = math.ceil(average * (1 + margin))
        upper.append(max(math.ceil(average) + min_gap, min(high, math.ceil(average) + max_gap)))
        low = math.floor(average * max(0.0, 1 - margin))
        floor = math.floor(average)
        lower.append(max(max(0, floor - max_gap), min(low, max(0, floor - min_gap))))
    return np.array(lower, dtype=np.int64), np.array(upper, dtype=np.int64)


def replica_counts(model: ModelView, replicas: np.ndarray) -> np.ndarray:
    """``[topic, broker]`` replicas of each topic on each broker."""
    held = replicas >= 0
    topics = np.broadcast_to(model.topic_index[:, None], replicas.shape)[held].astype(np.int64)
    cells = topics * model.num_brokers + replicas[held]
    counts = np.bincount(cells, minlength=len(model.topics) * model.num_brokers)
    result: np.ndarray = counts.reshape(len(model.topics), model.num_brokers).astype(np.int64)
    return result


def _outside(count: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    result: np.ndarray = np.maximum(lower - count, 0) + np.maximum(count - upper, 0)
    return result


@dataclass(frozen=True)
class TopicReplicaDistribution:
    """The goal's settings (Cruise Control's names and defaults)."""

    threshold: float = 3.0
    min_gap: int = 2
    max_gap: int = 40
    name: str = "topic_replicas"

    def __post_init__(self) -> None:
        t = self.threshold
        if isinstance(t, bool) or not isinstance(t, int | float) or not 1 <= t < math.inf:
            raise InvalidArgumentError(f"topic replica threshold must be a number >= 1, got {t!r:.40}")
        for label, gap in (("min gap", self.min_gap), ("max gap", self.max_gap)):
            if isinstance(gap, bool) or not isinstance(gap, int) or gap < 0:
                raise InvalidArgumentError(f"topic replica {label} must be an integer >= 0, got {gap!r:.40}")
        if self.min_gap > self.max_gap:
            raise InvalidArgumentError(
                f"topic replica min gap {self.min_gap} must not exceed the max gap {self.max_gap}"
            )

    def limits(self, model: ModelView, removed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``[topic, broker]`` lower and upper limits (``[0, 0]`` on removed brokers)."""
        totals = np.bincount(model.topic_index, weights=model.rf, minlength=len(model.topics))
        staying = max(1, int((~removed).sum()))
        low, high = topic_limits(totals.astype(np.int64), staying, self.threshold, self.min_gap, self.max_gap)
        lower = np.where(removed[None, :], 0, low[:, None])
        upper = np.where(removed[None, :], 0, high[:, None])
        return lower, upper

    def bind(self, model: ModelView, removed: np.ndarray) -> BoundTopicReplicaDistribution:
        return BoundTopicReplicaDistribution(self, model, removed)

    def status(
        self, model: ModelView, removed: np.ndarray, before: np.ndarray, after: np.ndarray
    ) -> dict[str, Any]:
        lower, upper = self.limits(model, removed)
        staying = ~removed
        result: dict[str, Any] = {"goal": True, "threshold": self.threshold}
        for when, replicas in (("before", before), ("after", after)):
            counts = replica_counts(model, replicas)
            outside = _outside(counts, lower, upper)
            kept = counts[:, staying]
            spread = (kept.max(axis=1) - kept.min(axis=1)) if kept.size else np.zeros(len(model.topics))
            result[f"worst_{when}"] = int(outside.max()) if outside.size else 0
            result[f"topics_outside_{when}"] = int((outside.max(axis=1) > 0).sum()) if outside.size else 0
            result[f"widest_spread_{when}"] = int(spread.max()) if len(spread) else 0
            if when == "after":
                rows, cols = np.nonzero(outside)
                result["outside"] = [
                    f"{model.topics[t]}@{int(model.broker_ids[b])}"
                    for t, b in zip(rows[:20].tolist(), cols[:20].tolist(), strict=True)
                ]
        result["met_before"] = result["worst_before"] == 0
        result["met"] = result["worst_after"] == 0
        lows, highs = lower[:, staying], upper[:, staying]
        result["limits"] = [int(lows.min()), int(highs.max())] if lows.size else [0, 0]
        result["line"] = (
            f"{self.name} (each topic's replicas per broker within Cruise Control's limits, threshold "
            f"{self.threshold:g}): "
            + (
                "met"
                if result["met"]
                else f"NOT met ({result['topics_outside_after']} topics outside: {result['outside'][:5]})"
            )
            + f"; widest spread {result['widest_spread_before']} → {result['widest_spread_after']} replicas"
        )
        return result


class BoundTopicReplicaDistribution:
    """The goal on one plan: replicas per topic and broker, kept in step with the moves."""

    def __init__(self, goal: TopicReplicaDistribution, model: ModelView, removed: np.ndarray) -> None:
        self.name = goal.name
        self.model = model
        self.topic = model.topic_index.astype(np.int64)
        self.lower, self.upper = goal.limits(model, removed)
        self.counts = replica_counts(model, model.replicas)
        self.removed = removed
        self._members: dict[int, np.ndarray] = {}

    def _change(self, t: np.ndarray, broker: np.ndarray, step: int) -> np.ndarray:
        """How a broker's violation for topic ``t`` changes when its count changes by ``step``."""
        count = self.counts[t, broker]
        lower, upper = self.lower[t, broker], self.upper[t, broker]
        result: np.ndarray = _outside(count + step, lower, upper) - _outside(count, lower, upper)
        return result

    def _pairs(
        self, partitions: np.ndarray, source: np.ndarray | int, destination: np.ndarray | int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        t = self.topic[partitions]
        return t, np.broadcast_to(source, t.shape), np.broadcast_to(destination, t.shape)

    def allowed(
        self, partitions: np.ndarray, source: np.ndarray | int, destination: np.ndarray | int
    ) -> np.ndarray:
        t, s, d = self._pairs(partitions, source, destination)
        result: np.ndarray = (self._change(t, s, -1) <= 0) & (self._change(t, d, 1) <= 0)
        return result

    def swap_allowed(self, p: np.ndarray, q: np.ndarray, giver: int, taker: int) -> np.ndarray:
        """Replicas of one topic traded leave its counts as they were; of two topics, each move
        changes its own topic's counts only."""
        same = self.topic[p] == self.topic[q]
        result: np.ndarray = same | (self.allowed(p, giver, taker) & self.allowed(q, taker, giver))
        return result

    def allowed_one(self, p: int, source: int, destination: int) -> bool:
        t = int(self.topic[p])
        # what Cruise Control's actionAcceptance checks; with lower <= upper it is "no violation grows"
        source_ok = int(self.counts[t, source]) - 1 >= int(self.lower[t, source])
        destination_ok = int(self.counts[t, destination]) + 1 <= int(self.upper[t, destination])
        return source_ok and destination_ok

    def gain(self, partitions: np.ndarray, source: np.ndarray, destination: np.ndarray) -> np.ndarray:
        t, s, d = self._pairs(partitions, source, destination)
        result: np.ndarray = self._change(t, s, -1) + self._change(t, d, 1)
        return result

    def gain_one(self, p: int, source: int, destination: int) -> int:
        t = int(self.topic[p])
        total = 0
        for broker, step in ((source, -1), (destination, 1)):
            count = int(self.counts[t, broker])
            low, high = int(self.lower[t, broker]), int(self.upper[t, broker])
            after = count + step
            total += max(low - after, 0) + max(after - high, 0) - max(low - count, 0) - max(count - high, 0)
        return total

    def moved(self, p: int, source: int, destination: int) -> None:
        t = int(self.topic[p])
        self.counts[t, source] -= 1
        self.counts[t, destination] += 1

    def worst(self, stuck: set[tuple[int, int]]) -> tuple[int, int, bool, int, str] | None:
        outside = _outside(self.counts, self.lower, self.upper)
        for t, b in stuck:
            outside[t, b] = 0
        if outside.size == 0 or outside.max() <= 0:
            return None
        t, b = divmod(int(np.argmax(outside)), self.model.num_brokers)
        above = bool(self.counts[t, b] > self.upper[t, b])
        return t, b, above, int(outside[t, b]), f"topic {self.model.topics[t]} replica count"

    def _topic_partitions(self, t: int) -> np.ndarray:
        members = self._members.get(t)
        if members is None:
            members = np.flatnonzero(self.topic == t)
            self._members[t] = members
        return members

    def candidates(
        self, state: StateView, key: int, broker: int, above: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Above: the topic's replicas on ``broker`` to every staying broker with room under its
        upper limit; below: the topic's replicas on brokers above their lower limit to ``broker``."""
        t, members = key, self._topic_partitions(key)
        rows = state.replicas[members]
        staying = np.flatnonzero(~self.removed)
        if above:
            mine = members[(rows == broker).any(axis=1)]
            room = staying[(staying != broker) & (self.counts[t, staying] < self.upper[t, staying])]
            partitions = np.repeat(mine, len(room))
            source = np.full(len(partitions), broker, dtype=np.int64)
            return partitions, source, np.tile(room, len(mine)).astype(np.int64)
        held = rows >= 0
        holders = np.where(held, rows, 0)
        spare = held & (holders != broker) & (self.counts[t, holders] > self.lower[t, holders])
        spare &= ~(rows == broker).any(axis=1)[:, None]
        partitions = np.broadcast_to(members[:, None], rows.shape)[spare].astype(np.int64)
        source = rows[spare].astype(np.int64)
        return partitions, source, np.full(len(partitions), broker, dtype=np.int64)
