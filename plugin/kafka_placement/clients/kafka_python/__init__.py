"""kafka-python 3.x adapters. Each adapter module loads on first use.

``from kafka_placement.clients.kafka_python import RangeAssignor`` works (resolved lazily). Importing
this package imports ``kafka`` itself once (its message schemas, about 0.13 s) with its schema loader's
deprecation warnings silenced and nothing else (:mod:`.schema_loading`): every later ``import kafka`` —
ours, the pytest plugin's — finds it loaded, so those warnings never reach a user's test output.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from kafka_placement.clients.kafka_python.schema_loading import load_kafka_python

if TYPE_CHECKING:  # the real names for type checkers; at run time they load on first use
    from kafka_placement.clients.kafka_python.assignors import (
        ASSIGNOR_CLASSES,
        CooperativeStickyAssignor,
        FailoverAssignor,
        PriorityAssignor,
        RangeAssignor,
        RoundRobinAssignor,
        StickyAssignor,
        assignors_from_config,
    )
    from kafka_placement.clients.kafka_python.consumer import KafkaConsumer

_LAZY = {
    "ASSIGNOR_CLASSES": "kafka_placement.clients.kafka_python.assignors",
    "CooperativeStickyAssignor": "kafka_placement.clients.kafka_python.assignors",
    "FailoverAssignor": "kafka_placement.clients.kafka_python.assignors",
    "PriorityAssignor": "kafka_placement.clients.kafka_python.assignors",
    "RangeAssignor": "kafka_placement.clients.kafka_python.assignors",
    "RoundRobinAssignor": "kafka_placement.clients.kafka_python.assignors",
    "StickyAssignor": "kafka_placement.clients.kafka_python.assignors",
    "assignors_from_config": "kafka_placement.clients.kafka_python.assignors",
    "KafkaConsumer": "kafka_placement.clients.kafka_python.consumer",
}

load_kafka_python()


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "ASSIGNOR_CLASSES",
    "CooperativeStickyAssignor",
    "FailoverAssignor",
    "KafkaConsumer",
    "PriorityAssignor",
    "RangeAssignor",
    "RoundRobinAssignor",
    "StickyAssignor",
    "assignors_from_config",
]
