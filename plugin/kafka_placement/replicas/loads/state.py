"""The mutable state of a load-aware plan: replica lists, broker loads and violations, who holds and
leads what, bytes moved against the budget, and the log of moves with their reasons.

Every change goes through :meth:`PlanState.move_replica` or :meth:`PlanState.transfer_leadership`,
which keep the loads, the violations and the per-broker sets in step. Candidate moves are scored in
bulk by :meth:`PlanState.evaluate` (numpy over many candidates at once).

Why some methods come twice: a phase scores thousands of candidates in one numpy call, then rechecks
the chosen ones one at a time against the state as it is by then, where numpy's per-call cost on a
five-element row would dominate. So the recheck has plain-Python twins: :meth:`~PlanState.evaluate` /
:meth:`~PlanState.evaluate_one`, :meth:`~PlanState.copy_cost` / :meth:`~PlanState.cost_of`,
:meth:`~PlanState.placement_ok` / :meth:`~PlanState.move_allowed`, and :meth:`Bands.terms` /
:meth:`~PlanState._shift` (with the plain rows ``load_rows``/``term_rows``). What a replica carries
(:meth:`~PlanState.deltas` / :meth:`~PlanState.change_of`, :meth:`~PlanState.leadership` /
:meth:`~PlanState.leadership_of`) is one array read two ways. ``unit_tests/replicas/loads/
test_load_state.py`` holds every pair equal on random clusters (hypothesis).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kafka_placement.replicas.loads.goals import HARD_WEIGHT, Bands
from kafka_placement.replicas.loads.load_goals import LOAD_GOALS, RESOURCES
from kafka_placement.replicas.loads.model import LoadModel
from kafka_placement.replicas.loads.placement_goal import BoundPlacementGoal
from kafka_placement.replicas.rack_rule import rack_shortfall, rack_shortfalls

#: Tolerance of "no worse" comparisons of violations (they are in units of a mean: O(1)).
EPSILON = 1e-9


@dataclass(frozen=True, slots=True)
class Move:
    """One step of a plan: ``kind`` is ``leader`` (reorder: no data moves), ``replica`` (a replica
    moves from ``source`` to ``destination``), or ``drain`` (a replica leaves a broker being removed);
    ``goal``/``broker``/``above`` say which violation it reduces."""

    kind: str
    partition: int
    source: int
    destination: int
    bytes: float
    goal: str
    broker: int
    above: bool

    def reason(self, broker_ids: np.ndarray) -> str:
        if self.kind == "drain":
            return f"broker {int(broker_ids[self.broker])} is being removed"
        where = "above" if self.above else "below"
        return f"{self.goal} of broker {int(broker_ids[self.broker])} {where} its band"


class PlanState:
    """Replica lists (broker indices, preferred leader first) and everything derived from them."""

    def __init__(
        self,
        model: LoadModel,
        bands: Bands,
        loads: np.ndarray,
        budget: float,
        placement: Sequence[BoundPlacementGoal] = (),
    ) -> None:
        self.model = model
        self.placement = tuple(placement)
        self.bands = bands
        self.replicas = model.replicas.copy()
        self.loads = loads.copy()
        brokers = model.num_brokers
        self.terms = bands.terms(self.loads, np.arange(brokers))
        self.band_terms = bands.band_violation(self.loads) * bands.weight
        # plain-list twins of the rows of loads and terms: the per-change recheck and update run in
        # plain Python, where numpy's per-call cost on a 5-element row would dominate
        self.load_rows: list[list[float]] = self.loads.tolist()
        self.term_rows: list[list[float]] = self.terms.tolist()
        self.rack, self.num_racks = model.rack_index()
        #: each partition's rack shortfall (:mod:`~kafka_placement.replicas.rack_rule`): no move grows it
        self.shortfall = self.shortfalls(self.replicas)
        hosted: list[list[int]] = [[] for _ in range(brokers)]
        rows, cols = np.nonzero(self.replicas >= 0)
        order = np.argsort(self.replicas[rows, cols], kind="stable")
        where = self.replicas[rows, cols][order]
        bounds = np.searchsorted(where, np.arange(brokers + 1))
        for b in range(brokers):
            hosted[b] = rows[order[bounds[b] : bounds[b + 1]]].tolist()
        self.hosted: list[set[int]] = [set(h) for h in hosted]
        leaders = self.replicas[:, 0] if model.num_partitions else np.zeros(0, dtype=np.int32)
        order = np.argsort(leaders, kind="stable")
        bounds = np.searchsorted(leaders[order], np.arange(brokers + 1))
        self.led: list[set[int]] = [set(order[bounds[b] : bounds[b + 1]].tolist()) for b in range(brokers)]
        # what one replica of each partition carries, as leader and as follower (``deltas`` gathers rows)
        carried = [goal.per_replica(model) for goal in LOAD_GOALS]
        self.leader_loads = np.stack([lead for lead, _ in carried], axis=1).reshape(-1, len(LOAD_GOALS))
        self.follower_loads = np.stack([follow for _, follow in carried], axis=1).reshape(-1, len(LOAD_GOALS))
        #: what leadership alone carries (leader minus follower: exactly 0 where both carry it)
        self.leadership_loads = self.leader_loads - self.follower_loads
        self._hosted_arrays: dict[int, np.ndarray] = {}
        self.size_list: list[float] = model.size.tolist()
        self._allowance: tuple[np.ndarray, float] | None = None
        self._inside_list: list[float] = []
        self.staying = np.flatnonzero(~bands.removed)
        self._staying_list: list[int] = self.staying.tolist()
        #: each broker's worst band term (weights applied), kept in step by ``_shift``
        self._band_worst: list[float] = (
            self.band_terms.max(axis=1).tolist() if brokers and len(RESOURCES) else [0.0] * brokers
        )
        self.budget = budget
        self.moved = 0.0
        self.budget_hit = False
        self.log: list[Move] = []

    # ------------------------------------------------------------------ derived quantities
    def hosted_array(self, b: int) -> np.ndarray:
        """The partitions broker ``b`` holds, sorted, as an array (cached until ``b`` changes)."""
        held = self._hosted_arrays.get(b)
        if held is None:
            held = np.fromiter(self.hosted[b], dtype=np.int64, count=len(self.hosted[b]))
            held.sort()
            self._hosted_arrays[b] = held
        return held

    def shortfalls(self, replicas: np.ndarray, partitions: np.ndarray | None = None) -> np.ndarray:
        """Rack shortfall of each row of ``replicas`` (broker indices) of ``partitions`` (default all)."""
        racks = np.where(replicas >= 0, self.rack[np.maximum(replicas, 0)], -1)
        rf = self.model.rf if partitions is None else self.model.rf[partitions]
        return rack_shortfalls(racks, rf, self.num_racks)

    def deltas(self, partitions: np.ndarray, leading: np.ndarray) -> np.ndarray:
        """``[n, resource]`` loads a replica of each partition carries (as leader where ``leading``)."""
        result: np.ndarray = np.where(
            leading[:, None], self.leader_loads[partitions], self.follower_loads[partitions]
        )
        return result

    def amount_of(self, partitions: np.ndarray, holder: int, r: int) -> np.ndarray:
        """Column ``r`` of :meth:`deltas` for ``holder``'s replicas of ``partitions``."""
        leading = self.replicas[partitions, 0] == holder
        result: np.ndarray = np.where(
            leading, self.leader_loads[partitions, r], self.follower_loads[partitions, r]
        )
        return result

    def leadership(self, partitions: np.ndarray) -> np.ndarray:
        """``[n, resource]`` loads leadership of each partition adds (the leader-only goals' amounts)."""
        result: np.ndarray = self.leadership_loads[partitions]
        return result

    def copy_cost(
        self, partitions: np.ndarray, source: np.ndarray | int, destination: np.ndarray | int
    ) -> np.ndarray:
        """Bytes a move adds to the plan: the size unless the destination held the replica at the
        start (moving back: minus the size), none if the source did not (re-routing a copy)."""
        original = self.model.replicas[partitions]
        src = np.asarray(source).reshape(-1, 1) if np.ndim(source) else source
        dst = np.asarray(destination).reshape(-1, 1) if np.ndim(destination) else destination
        had_destination = (original == dst).any(axis=1)
        had_source = (original == src).any(axis=1)
        size = self.model.size[partitions]
        result: np.ndarray = size * (~had_destination) - size * (~had_source)
        return result

    def change_of(self, p: int, leading: bool) -> list[float]:
        """The loads one replica of ``p`` carries, as a plain list (as leader if ``leading``)."""
        loads: list[float] = (self.leader_loads[p] if leading else self.follower_loads[p]).tolist()
        return loads

    def leadership_of(self, p: int) -> list[float]:
        """:meth:`leadership` of one partition, as a plain list."""
        loads: list[float] = self.leadership_loads[p].tolist()
        return loads

    def cost_of(self, p: int, source: int, destination: int) -> float:
        """:meth:`copy_cost` of one move, in plain Python."""
        original = self.model.replicas[p].tolist()
        size = self.size_list[p]
        return (0.0 if destination in original else size) - (0.0 if source in original else size)

    def swap_ok(self, p: np.ndarray, q: np.ndarray, giver: int, taker: int) -> np.ndarray:
        """:meth:`placement_ok` of swaps: ``p[i]``'s replica from giver to taker and ``q[i]``'s back
        (the rack rule move by move, each placement goal on the two moves together)."""
        result: np.ndarray = self._rack_ok(p, giver, taker) & self._rack_ok(q, taker, giver)
        for goal in self.placement:
            result &= goal.swap_allowed(p, q, giver, taker)
        return result

    def placement_ok(
        self, partitions: np.ndarray, source: np.ndarray | int, destination: np.ndarray | int
    ) -> np.ndarray:
        """Does moving each partition's replica from ``source`` to ``destination`` not grow its rack
        shortfall (:mod:`~kafka_placement.replicas.rack_rule`), not double a broker, and let no
        placement goal's violation grow?"""
        result = self._rack_ok(partitions, source, destination)
        for goal in self.placement:
            result &= goal.allowed(partitions, source, destination)
        return result

    def _rack_ok(
        self, partitions: np.ndarray, source: np.ndarray | int, destination: np.ndarray | int
    ) -> np.ndarray:
        rows = self.replicas[partitions]
        dst = np.asarray(destination).reshape(-1, 1) if np.ndim(destination) else destination
        src = np.asarray(source).reshape(-1, 1) if np.ndim(source) else source
        present = (rows == dst).any(axis=1)
        moved = np.where(rows == src, dst, rows)
        result: np.ndarray = (~present) & (self.shortfalls(moved, partitions) <= self.shortfall[partitions])
        return result

    def move_allowed(self, p: int, source: int, destination: int) -> bool:
        """:meth:`placement_ok` for one move, in plain Python."""
        row = self.replicas[p, : int(self.model.rf[p])].tolist()
        if destination in row or source not in row:
            return False
        rack = self.rack
        racks = [int(rack[b]) for b in row if b != source] + [int(rack[destination])]
        if rack_shortfall(racks, len(row), self.num_racks) > int(self.shortfall[p]):
            return False
        return all(goal.allowed_one(p, source, destination) for goal in self.placement)

    # ------------------------------------------------------------------ scoring
    def allowance(self) -> tuple[np.ndarray, float]:
        """How far a change may push a violation: a broker already outside a band may go up to the
        worst band violation of the cluster (any resource: so it can give up one resource to fix a
        worse one, and the worst never grows); one inside may leave it by at most half the band."""
        if self._allowance is None:
            band_worst = self._band_worst
            if len(self._staying_list) == len(band_worst):
                worst = max(band_worst, default=0.0)
            else:
                worst = max([band_worst[b] for b in self._staying_list], default=0.0)
            inside = np.minimum(worst, 0.5 * self.bands.band_width) * self.bands.weight
            self._allowance = (inside, worst)
            self._inside_list = inside.tolist()
        return self._allowance

    def evaluate(
        self, source: np.ndarray | int, destination: np.ndarray | int, change: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Moving loads ``change[i]`` from ``source[i]`` to ``destination[i]`` (or all from one
        broker to one broker: its rows broadcast instead of being gathered): (change of the total
        violation, acceptable) — acceptable when neither broker's violation of any resource grows
        beyond :meth:`allowance` and no capacity limit is newly crossed."""
        bands = self.bands
        new_source = self.loads[source] - change
        new_destination = self.loads[destination] + change
        old_s, old_d = self.terms[source], self.terms[destination]
        new_s = bands.terms(new_source, source)
        new_d = bands.terms(new_destination, destination)
        gain = (new_s - old_s).sum(axis=1) + (new_d - old_d).sum(axis=1)
        inside, worst = self.allowance()
        allowed_s = np.where(old_s > EPSILON, np.maximum(old_s, worst), inside) + EPSILON
        allowed_d = np.where(old_d > EPSILON, np.maximum(old_d, worst), inside) + EPSILON
        ok = (
            (new_s <= allowed_s).all(axis=1)
            & (new_d <= allowed_d).all(axis=1)
            & ((new_destination <= bands.limit[destination] * (1 + 1e-12)) | (change <= 0)).all(axis=1)
            & ((new_source <= bands.limit[source] * (1 + 1e-12)) | (change >= 0)).all(axis=1)
        )
        return gain, ok

    def evaluate_one(self, source: int, destination: int, change: list[float]) -> float | None:
        """:meth:`evaluate` for one change in plain Python (rechecking a candidate is frequent and
        numpy's per-call cost would dominate): the change of the total violation, or ``None``."""
        bands = self.bands
        worst = self.allowance()[1]
        inside = self._inside_list
        total = 0.0
        for broker, sign in ((source, -1.0), (destination, 1.0)):
            loads = self.load_rows[broker]
            lower, upper = bands.lower_rows[broker], bands.upper_rows[broker]
            limit, old = bands.limit_rows[broker], self.term_rows[broker]
            for r in range(len(loads)):
                x = loads[r] + sign * change[r]
                if sign * change[r] > 0 and x > limit[r] * (1 + 1e-12):
                    return None
                term = (
                    bands.weight_list[r] * (max(lower[r] - x, 0.0) + max(x - upper[r], 0.0))
                    + HARD_WEIGHT * max(x - limit[r], 0.0)
                ) / bands.scale_list[r]
                allowed = max(old[r], worst) if old[r] > EPSILON else inside[r]
                if term > allowed + EPSILON:
                    return None
                total += term - old[r]
        return total

    # ------------------------------------------------------------------ changes
    def _shift(self, source: int, destination: int, change: list[float]) -> None:
        """Move loads ``change`` from ``source`` to ``destination``: the same arithmetic as
        :meth:`Bands.terms` and :meth:`Bands.band_violation`, element by element in plain Python
        (the same floats, so the numpy scoring and the plain recheck agree exactly)."""
        bands = self.bands
        weight, scale = bands.weight_list, bands.scale_list
        for broker, sign in ((source, -1.0), (destination, 1.0)):
            loads = self.load_rows[broker]
            lower, upper, limit = bands.lower_rows[broker], bands.upper_rows[broker], bands.limit_rows[broker]
            terms = self.term_rows[broker]
            band_terms = []
            for r in range(len(loads)):
                x = loads[r] + sign * change[r]
                loads[r] = x
                band = max(lower[r] - x, 0.0) + max(x - upper[r], 0.0)
                terms[r] = (band * weight[r] + max(x - limit[r], 0.0) * HARD_WEIGHT) / scale[r]
                band_terms.append(band / scale[r] * weight[r])
            self.loads[broker] = loads
            self.terms[broker] = terms
            self.band_terms[broker] = band_terms
            self._band_worst[broker] = max(band_terms)
        self._allowance = None

    def move_replica(
        self, p: int, source: int, destination: int, kind: str, goal: int | str, broker: int, above: bool
    ) -> None:
        """Move ``p``'s replica; ``goal`` (a load goal's column, or a placement goal's reason),
        ``broker`` and ``above``: the violation it reduces, for the plan's reasons."""
        row = self.replicas[p]
        position = row.tolist().index(source)
        leading = position == 0
        change = self.change_of(p, leading)
        cost = self.cost_of(p, source, destination)
        row[position] = destination
        rack = self.rack
        rf = int(self.model.rf[p])
        self.shortfall[p] = rack_shortfall([int(rack[b]) for b in row[:rf].tolist()], rf, self.num_racks)
        self.hosted[source].discard(p)
        self.hosted[destination].add(p)
        self._hosted_arrays.pop(source, None)
        self._hosted_arrays.pop(destination, None)
        if leading:
            self.led[source].discard(p)
            self.led[destination].add(p)
        self._shift(source, destination, change)
        for placement in self.placement:
            placement.moved(p, source, destination)
        self.moved += cost
        why = RESOURCES[goal] if isinstance(goal, int) else goal
        self.log.append(Move(kind, p, source, destination, self.size_list[p], why, broker, above))

    def transfer_leadership(self, p: int, new_leader: int, goal: int, broker: int, above: bool) -> None:
        row = self.replicas[p]
        old = int(row[0])
        position = row.tolist().index(new_leader)
        row[0], row[position] = new_leader, old
        self.led[old].discard(p)
        self.led[new_leader].add(p)
        change = self.leadership_of(p)
        self._shift(old, new_leader, change)
        self.log.append(Move("leader", p, old, new_leader, 0.0, RESOURCES[goal], broker, above))

    def affordable(self, cost: np.ndarray | float) -> np.ndarray | bool:
        """Whether moves copying ``cost`` bytes (a number or an array) fit what is left of the budget:
        exactly, with no slack (a half-byte slack once let a 1.5-byte budget copy 2 bytes)."""
        result: np.ndarray | bool = cost <= self.budget - self.moved
        return result


__all__ = ["Move", "PlanState"]
