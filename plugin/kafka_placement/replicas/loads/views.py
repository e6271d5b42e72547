"""What the goals read of a load model and of a plan in progress, as structural types.

The goals are declared before the model and the state that use them (``model.py`` and ``state.py``
import the goals' list), so the goals name these protocols instead of the classes: no import circle,
and a goal's needs are written down in one place. :class:`~.model.LoadModel` and
:class:`~.state.PlanState` satisfy them (mypy checks it wherever one is passed).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

__all__ = ["ModelView", "StateView"]


class ModelView(Protocol):
    """The model's partitions and brokers, read-only."""

    @property
    def broker_ids(self) -> np.ndarray: ...
    @property
    def topics(self) -> tuple[str, ...]: ...
    @property
    def topic_index(self) -> np.ndarray: ...
    @property
    def replicas(self) -> np.ndarray: ...
    @property
    def rf(self) -> np.ndarray: ...
    @property
    def size(self) -> np.ndarray: ...
    @property
    def bytes_in(self) -> np.ndarray: ...
    @property
    def bytes_out(self) -> np.ndarray: ...
    @property
    def num_brokers(self) -> int: ...
    @property
    def num_partitions(self) -> int: ...


class StateView(Protocol):
    """A plan in progress: each partition's replicas now (``[partition, slot]`` broker indexes)."""

    @property
    def replicas(self) -> np.ndarray: ...
