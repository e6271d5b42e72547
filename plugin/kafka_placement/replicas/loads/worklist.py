"""What the phases of a plan share: the worst violation still worth working on, and which brokers
are stuck (no acceptable change found for them) until a change touches them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kafka_placement.replicas.loads.state import EPSILON, PlanState

#: Accepted changes per pick of the worst violation before it is picked again (scores go stale).
BATCH = 128


class Worklist:
    """The worst (broker, resource) violation among ``resources`` that is not stuck."""

    def __init__(self, state: PlanState, resources: Sequence[int]) -> None:
        self.state = state
        self.resources = np.array(resources, dtype=np.int64)
        self.stuck = np.zeros_like(state.terms, dtype=bool)
        self.changed_since_reset = False

    def worst(self) -> tuple[int, int] | None:
        terms = self.state.terms[:, self.resources]
        open_terms = np.where(self.stuck[:, self.resources], 0.0, terms)
        if open_terms.size == 0:
            return None
        flat = int(np.argmax(open_terms))
        b, column = divmod(flat, len(self.resources))
        if open_terms[b, column] <= EPSILON:
            if self.changed_since_reset and self.stuck.any():
                # something changed since these got stuck: one more look at each
                self.stuck[:] = False
                self.changed_since_reset = False
                return self.worst()
            return None
        return b, int(self.resources[column])

    def above(self, b: int, r: int) -> bool:
        state = self.state
        return bool(state.loads[b, r] > min(state.bands.upper[b, r], state.bands.limit[b, r]))

    def mark_stuck(self, b: int, r: int) -> None:
        self.stuck[b, r] = True

    def touched(self, brokers: Sequence[int]) -> None:
        self.stuck[list(brokers)] = False
        self.changed_since_reset = True
