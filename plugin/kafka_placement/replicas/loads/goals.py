"""Goals of a load-aware rebalance and how far a broker is from meeting them.

Hard goals (never broken by a move): the rack rule of the replica planner (a partition spans
``min(rf, racks)`` racks) and capacities (no broker's disk, bytes in or bytes out above
``capacity_threshold`` × its capacity). Soft goals: each broker's load of each load goal
(:mod:`.load_goals`) within a band around the mean over the brokers that stay, ``mean × (1 ± band)``
(counts rounded outwards to whole units); brokers being removed have the band ``[0, 0]``; and the
placement goals chosen (:data:`PLACEMENT_GOALS`, each a file of its own: :mod:`.placement_goal`).

A broker's *violation* of a resource is its distance outside the band (plus a heavily weighted
distance above capacity), in units of the resource's mean, so the resources are comparable.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.replicas.loads.load_goals import CAPACITY_COLUMNS, LOAD_GOALS, RESOURCES
from kafka_placement.replicas.loads.placement_goal import PlacementGoal
from kafka_placement.replicas.loads.topic_replica_distribution import TopicReplicaDistribution

#: Weight of a capacity excess against a band excess: a hard goal comes first.
HARD_WEIGHT = 100.0
DEFAULT_BAND = 0.10
DEFAULT_CAPACITY_THRESHOLD = 0.8
#: The placement goals by name, with their default settings (not chosen unless named).
PLACEMENT_GOALS: dict[str, PlacementGoal] = {"topic_replicas": TopicReplicaDistribution()}
#: Every soft goal's name, load goals first (their column order), then the placement goals.
GOAL_NAMES = RESOURCES + tuple(PLACEMENT_GOALS)
#: ``--goals`` names of the soft goals and their short aliases.
GOAL_ALIASES = {
    **{name: g.name for g in LOAD_GOALS for name in (g.name, *g.aliases)},
    **{name: name for name in PLACEMENT_GOALS},
}


@dataclass(frozen=True)
class Goals:
    """What a plan aims for: the soft goals (names, see ``GOAL_NAMES``), the band around the mean and
    the capacity threshold. ``placement``: placement goals with settings of their own (they count as
    chosen); a placement goal named in ``soft`` without one here has its default settings."""

    soft: tuple[str, ...] = RESOURCES
    band: float = DEFAULT_BAND
    capacity_threshold: float = DEFAULT_CAPACITY_THRESHOLD
    placement: tuple[PlacementGoal, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.band, bool) or not isinstance(self.band, int | float) or not 0 < self.band <= 1:
            raise InvalidArgumentError(f"band must be a number in (0, 1], got {self.band!r:.40}")
        threshold = self.capacity_threshold
        if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 < threshold <= 1:
            raise InvalidArgumentError(
                f"capacity threshold must be a number in (0, 1], got {threshold!r:.40}"
            )
        for goal in self.soft:
            if goal not in GOAL_NAMES:
                raise InvalidArgumentError(f"unknown goal {goal!r:.60} (goals: {', '.join(GOAL_NAMES)})")
        for configured in self.placement:
            if configured.name not in PLACEMENT_GOALS:
                raise InvalidArgumentError(
                    f"unknown placement goal {configured.name!r:.60} (goals: {', '.join(PLACEMENT_GOALS)})"
                )
            if configured.name not in self.soft:
                object.__setattr__(self, "soft", (*self.soft, configured.name))

    def placement_goals(self) -> tuple[PlacementGoal, ...]:
        """The placement goals chosen, with their settings."""
        configured = {g.name: g for g in self.placement}
        return tuple(configured.get(n, PLACEMENT_GOALS[n]) for n in PLACEMENT_GOALS if n in self.soft)


def parse_goals(text: str | Iterable[str]) -> tuple[str, ...]:
    """``"disk,in,leaders"`` → the soft goals' names, in the order of ``GOAL_NAMES``."""
    items = [t.strip() for t in (text.split(",") if isinstance(text, str) else text)]
    chosen: set[str] = set()
    for item in items:
        if not item:
            continue
        if item not in GOAL_ALIASES:
            raise InvalidArgumentError(
                f"unknown goal {item!r:.60} (goals: {', '.join(sorted(GOAL_ALIASES))})"
            )
        chosen.add(GOAL_ALIASES[item])
    if not chosen:
        raise InvalidArgumentError("--goals names no goal")
    return tuple(r for r in GOAL_NAMES if r in chosen)


@dataclass(frozen=True, eq=False)
class Bands:
    """Per broker and resource: the band ``[lower, upper]``, the capacity limit, and the scale and
    weight that turn a distance into a violation."""

    lower: np.ndarray
    upper: np.ndarray
    limit: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    weight: np.ndarray
    removed: np.ndarray
    band_width: float = DEFAULT_BAND
    lower_rows: list[list[float]] = field(init=False, repr=False)
    upper_rows: list[list[float]] = field(init=False, repr=False)
    limit_rows: list[list[float]] = field(init=False, repr=False)
    weight_list: list[float] = field(init=False, repr=False)
    scale_list: list[float] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # plain lists for the per-change recheck, which runs in plain Python
        object.__setattr__(self, "lower_rows", self.lower.tolist())
        object.__setattr__(self, "upper_rows", self.upper.tolist())
        object.__setattr__(self, "limit_rows", self.limit.tolist())
        object.__setattr__(self, "weight_list", self.weight.tolist())
        object.__setattr__(self, "scale_list", self.scale.tolist())

    def terms(self, loads: np.ndarray, brokers: np.ndarray | int) -> np.ndarray:
        """Violations of ``loads`` (``[n, resource]`` or ``[resource]``) on ``brokers``."""
        lower, upper, limit = self.lower[brokers], self.upper[brokers], self.limit[brokers]
        band = np.maximum(lower - loads, 0.0) + np.maximum(loads - upper, 0.0)
        hard = np.maximum(loads - limit, 0.0)
        result: np.ndarray = (band * self.weight + hard * HARD_WEIGHT) / self.scale
        return result

    def band_violation(self, loads: np.ndarray, brokers: np.ndarray | slice = slice(None)) -> np.ndarray:
        """``[broker, resource]`` distance outside the band in units of the mean (weights ignored)."""
        lower, upper = self.lower[brokers], self.upper[brokers]
        band = np.maximum(lower - loads, 0.0) + np.maximum(loads - upper, 0.0)
        result: np.ndarray = band / self.scale
        return result


def make_bands(loads: np.ndarray, capacity: np.ndarray, removed: np.ndarray, goals: Goals) -> Bands:
    """Bands around the mean over the brokers that stay (``removed``: brokers to empty)."""
    brokers = loads.shape[0]
    staying = max(1, int((~removed).sum()))
    mean = loads.sum(axis=0) / staying
    lower = np.tile(mean * (1 - goals.band), (brokers, 1))
    upper = np.tile(mean * (1 + goals.band), (brokers, 1))
    for r, goal in enumerate(LOAD_GOALS):
        if goal.whole_units:
            lower[:, r] = math.floor(mean[r] * (1 - goals.band) + 1e-9)
            upper[:, r] = math.ceil(mean[r] * (1 + goals.band) - 1e-9)
    lower[removed] = 0.0
    upper[removed] = 0.0
    limit = np.full_like(lower, np.inf)
    limit[:, list(CAPACITY_COLUMNS)] = capacity * goals.capacity_threshold
    scale = np.where(mean > 0, mean, 1.0)
    weight = np.array([1.0 if r in goals.soft else 0.0 for r in RESOURCES])
    return Bands(lower, upper, limit, mean, scale, weight, removed.copy(), float(goals.band))
