"""The replica core is sans-I/O: importing it loads no Kafka client library."""

from __future__ import annotations

import subprocess
import sys

CORE = [
    "kafka_placement.replicas",
    "kafka_placement.replicas.adminutils",
    "kafka_placement.replicas.placement_audit",
    "kafka_placement.replicas.balanced",
    "kafka_placement.replicas.javarandom",
    "kafka_placement.replicas.leaders",
    "kafka_placement.replicas.placement_quality",
    "kafka_placement.replicas.planner",
    "kafka_placement.replicas.quotas",
    "kafka_placement.replicas.reassignment_json",
    "kafka_placement.replicas.striped",
    "kafka_placement.cli.audit",
    "kafka_placement.cli.reassign",
]


def test_core_imports_no_client() -> None:
    code = (
        "import importlib, sys\n"
        f"for m in {CORE!r}: importlib.import_module(m)\n"
        "clients = ('kafka', 'confluent_kafka', 'aiokafka')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in clients)\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""
