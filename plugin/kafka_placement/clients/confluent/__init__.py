"""confluent-kafka adapters: a drop-in Producer placing records with kafka_placement partitioners,
and a drop-in :class:`Consumer` whose group runs our assignors (see :mod:`.consumer`)::

    from kafka_placement.clients.confluent import Consumer, FailoverAssignor

The consumer and the assignors are imported on first use (they need kafka-python, in the
``confluent`` extra too), so ``clients.confluent.admin``/``producer`` import without it.
"""

from __future__ import annotations

import importlib

__all__ = [
    "Consumer",
    "CooperativeStickyAssignor",
    "FailoverAssignor",
    "PriorityAssignor",
    "RangeAssignor",
    "RoundRobinAssignor",
    "StickyAssignor",
]


def __getattr__(name: str) -> object:
    if name == "Consumer":
        return importlib.import_module("kafka_placement.clients.confluent.consumer").Consumer
    if name in __all__:
        return getattr(importlib.import_module("kafka_placement.clients.kafka_python.assignors"), name)
    raise AttributeError(name)
