"""Moved to :mod:`kafka_placement.clients.confluent.thread_handoff` (issue 47: the name said "rebalance",
beside ``cli/rebalance/``, for a handoff between threads). Kept only until ``clients/confluent/consumer.py``
imports from there; then delete this file."""

from kafka_placement.clients.confluent.thread_handoff import (
    ASSIGN,
    LOST,
    REVOKE,
    RebalanceBridge,
    RebalanceEvent,
)

__all__ = ["ASSIGN", "LOST", "REVOKE", "RebalanceBridge", "RebalanceEvent"]
