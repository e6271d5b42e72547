"""Load-aware rebalancing (sans-I/O): even disk, bytes in/out and leaders with the fewest bytes copied.

* :mod:`.model` — brokers (racks, capacities) and partitions (replicas, size, bytes in/out) in numpy
  arrays; :mod:`.loads_file` — the ``--loads`` JSON, read strictly;
* :mod:`.goals` — hard goals (rack rule, capacity threshold) and soft goals (bands around the mean);
* :mod:`.planner` — the driver; its phases :mod:`.drain`, :mod:`.leadership`, :mod:`.moves`,
  :mod:`.swaps` over the shared :mod:`.state` (their worst violation first: :mod:`.worklist`; when the
  usual partners offer nothing: :mod:`.fallback_candidates`); :mod:`.bound` — the lower bound on bytes copied;
  :mod:`.result` — the plan, its reasons and its summary.
"""

from __future__ import annotations

from kafka_placement.replicas.loads.bound import BytesBound, disk_lower_bound
from kafka_placement.replicas.loads.goals import Goals, parse_goals
from kafka_placement.replicas.loads.loads_file import format_loads, loads_document, parse_loads
from kafka_placement.replicas.loads.model import (
    RESOURCES,
    BrokerSpec,
    LoadModel,
    PartitionSpec,
    broker_loads,
    build_model,
)
from kafka_placement.replicas.loads.planner import plan_rebalance
from kafka_placement.replicas.loads.result import RebalancePlan

__all__ = [
    "RESOURCES",
    "BrokerSpec",
    "BytesBound",
    "Goals",
    "LoadModel",
    "PartitionSpec",
    "RebalancePlan",
    "broker_loads",
    "build_model",
    "disk_lower_bound",
    "format_loads",
    "loads_document",
    "parse_goals",
    "parse_loads",
    "plan_rebalance",
]
