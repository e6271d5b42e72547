"""kafka-python 3.x adapters. Import-light: ``kafka`` is imported only when an adapter is used.

``from kafka_placement.clients.kafka_python import RangeAssignor`` works (resolved lazily).
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "RangeAssignor": "kafka_placement.clients.kafka_python.assignors",
    "RoundRobinAssignor": "kafka_placement.clients.kafka_python.assignors",
    "StickyAssignor": "kafka_placement.clients.kafka_python.assignors",
    "CooperativeStickyAssignor": "kafka_placement.clients.kafka_python.assignors",
    "FailoverAssignor": "kafka_placement.clients.kafka_python.assignors",
    "PriorityAssignor": "kafka_placement.clients.kafka_python.assignors",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
