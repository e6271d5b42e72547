"""aiokafka 0.14 adapters. Import-light: ``aiokafka`` is imported only when an adapter is used.

``from kafka_placement.clients.aiokafka import FailoverAssignor`` works (resolved lazily).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the real names for type checkers; at run time they load on first use
    from kafka_placement.clients.aiokafka.assignors import (
        ASSIGNOR_CLASSES,
        FailoverAssignor,
        PriorityAssignor,
        RangeAssignor,
        RoundRobinAssignor,
        StickyAssignor,
        assignors_from_config,
    )

_LAZY = {
    "ASSIGNOR_CLASSES": "kafka_placement.clients.aiokafka.assignors",
    "FailoverAssignor": "kafka_placement.clients.aiokafka.assignors",
    "PriorityAssignor": "kafka_placement.clients.aiokafka.assignors",
    "RangeAssignor": "kafka_placement.clients.aiokafka.assignors",
    "RoundRobinAssignor": "kafka_placement.clients.aiokafka.assignors",
    "StickyAssignor": "kafka_placement.clients.aiokafka.assignors",
    "assignors_from_config": "kafka_placement.clients.aiokafka.assignors",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "ASSIGNOR_CLASSES",
    "FailoverAssignor",
    "PriorityAssignor",
    "RangeAssignor",
    "RoundRobinAssignor",
    "StickyAssignor",
    "assignors_from_config",
]
