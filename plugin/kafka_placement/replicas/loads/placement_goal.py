"""Placement goals: goals on where replicas are that are not a per-broker sum (those are
:mod:`.load_goals`), such as Cruise Control's TopicReplicaDistributionGoal (each topic's replicas
spread evenly over the brokers).

A placement goal is one file implementing :class:`PlacementGoal` and one entry in
:data:`.goals.PLACEMENT_GOALS`. The search asks its bound form (:class:`BoundPlacementGoal`, kept in
step with the plan) whether a replica move is acceptable — every phase takes a move only if no
placement goal's violation grows, as Cruise Control's ``actionAcceptance`` — and
:mod:`.placement_phase` reduces its violations with moves it proposes; the report asks it for its
status before and after.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from kafka_placement.replicas.loads.views import ModelView, StateView


class BoundPlacementGoal(Protocol):
    """A placement goal bound to one plan: its counts kept in step by :meth:`moved`."""

    @property
    def name(self) -> str: ...

    def allowed(
        self, partitions: np.ndarray, source: np.ndarray | int, destination: np.ndarray | int
    ) -> np.ndarray:
        """Per candidate move (each partition's replica from source to destination): does no
        broker's violation of this goal grow?"""
        ...

    def swap_allowed(self, p: np.ndarray, q: np.ndarray, giver: int, taker: int) -> np.ndarray:
        """Per candidate swap (``p[i]``'s replica from giver to taker, ``q[i]``'s back): does no
        broker's violation grow, the two moves taken together?"""
        ...

    def allowed_one(self, p: int, source: int, destination: int) -> bool:
        """:meth:`allowed` for one move, in plain Python."""
        ...

    def gain(self, partitions: np.ndarray, source: np.ndarray, destination: np.ndarray) -> np.ndarray:
        """Per candidate move: the change of this goal's total violation (negative: better)."""
        ...

    def gain_one(self, p: int, source: int, destination: int) -> int:
        """:meth:`gain` of one move, in plain Python (the recheck of each move taken)."""
        ...

    def moved(self, p: int, source: int, destination: int) -> None:
        """A replica of ``p`` moved from ``source`` to ``destination`` (broker indices)."""
        ...

    def worst(self, stuck: set[tuple[int, int]]) -> tuple[int, int, bool, int, str] | None:
        """The worst violation not in ``stuck``: (key, broker, above, amount, reason), or ``None``;
        ``amount``: how many of the moves :meth:`candidates` gives for it remove it."""
        ...

    def candidates(
        self, state: StateView, key: int, broker: int, above: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(partition, source, destination) of the moves that could reduce that violation."""
        ...


class PlacementGoal(Protocol):
    """A placement goal with its settings (unbound)."""

    @property
    def name(self) -> str: ...

    def bind(self, model: ModelView, removed: np.ndarray) -> BoundPlacementGoal:
        """The goal for a plan on ``model`` (``removed``: brokers being emptied, band zero)."""
        ...

    def status(
        self, model: ModelView, removed: np.ndarray, before: np.ndarray, after: np.ndarray
    ) -> dict[str, Any]:
        """How far replica lists ``before`` and ``after`` (broker indices) are from the goal."""
        ...
