"""The load goals, each declared once: a per-broker sum of what the replicas on a broker carry.

A :class:`LoadGoal` says what one replica of a partition carries (``amount``), whether only the
leader carries it (``leader_only``: bytes out, a leadership), which broker capacity bounds it
(``capacity``: a :class:`~.model.BrokerSpec` field) and whether its band is rounded outwards to
whole units (counts). The columns of a load matrix, the bands, the scoring of moves and leadership
changes, the fallback search and the report are all derived from :data:`LOAD_GOALS`, so a new
per-broker-sum goal is one entry here. Goals on where replicas are rather than on sums (a topic's
spread over the brokers) are placement goals: :mod:`.placement_goal`.

Who carries what is Cruise Control's model: every replica holds the partition's bytes on disk and
takes its bytes in (the leader from producers, a follower by fetching); only the leader serves bytes
out (consumers and the followers' fetches).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kafka_placement.replicas.loads.views import ModelView


@dataclass(frozen=True)
class LoadGoal:
    """A load kept within a band around the mean over the brokers that stay."""

    name: str
    #: what one replica of each partition carries (as leader; a follower carries it too unless
    #: ``leader_only``)
    amount: Callable[[ModelView], np.ndarray]
    leader_only: bool = False
    #: the :class:`~.model.BrokerSpec` field (and loads-file capacity key) bounding it, if any
    capacity: str | None = None
    #: a count: its band is rounded outwards to whole units
    whole_units: bool = False
    #: other ``--goals`` names for it
    aliases: tuple[str, ...] = ()

    def per_replica(self, model: ModelView) -> tuple[np.ndarray, np.ndarray]:
        """(as leader, as follower): what one replica of each partition carries."""
        lead = np.asarray(self.amount(model), dtype=np.float64)
        return lead, np.zeros_like(lead) if self.leader_only else lead


def _leaderships(model: ModelView) -> np.ndarray:
    return np.ones(model.num_partitions)


#: The load goals, in the order of the columns of a load matrix ``[broker, goal]``.
LOAD_GOALS: tuple[LoadGoal, ...] = (
    LoadGoal("disk", lambda m: m.size, capacity="disk"),
    LoadGoal("bytes_in", lambda m: m.bytes_in, capacity="bytes_in", aliases=("in",)),
    LoadGoal("bytes_out", lambda m: m.bytes_out, leader_only=True, capacity="bytes_out", aliases=("out",)),
    LoadGoal("leader_bytes_in", lambda m: m.bytes_in, leader_only=True, aliases=("leader_bytes",)),
    LoadGoal("leaders", _leaderships, leader_only=True, whole_units=True),
)
RESOURCES = tuple(g.name for g in LOAD_GOALS)
#: Columns only a leader carries (balanced first by moving leadership, which copies nothing).
LEADER_COLUMNS = tuple(r for r, g in enumerate(LOAD_GOALS) if g.leader_only)
#: Columns with a broker capacity, in the order of the columns of ``ModelView.capacity``.
CAPACITY_COLUMNS = tuple(r for r, g in enumerate(LOAD_GOALS) if g.capacity)
CAPACITY_RESOURCES = tuple(str(LOAD_GOALS[r].capacity) for r in CAPACITY_COLUMNS)
