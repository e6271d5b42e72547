"""Live: ``rebalance loads`` reads the load model through the Admin API, and ``rebalance plan
--bootstrap-server`` plans from it.

A topic of 6 partitions RF 2 is placed on brokers 0 and 3 only and given 1 MB of incompressible
records per partition: the model's sizes equal DescribeLogDirs' (read independently here), its
replica lists equal DescribeTopics', its bytes in are positive (records produced inside the window),
and the plan moves replicas of the topic onto the brokers that held none of it.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from kafka_placement.cli import main
from kafka_placement.replicas.reassignment_json import parse_reassignment

pytestmark = pytest.mark.integration

PARTITIONS = 6
RECORDS = 100
VALUE = 10_000


def test_loads_and_plan_from_a_live_cluster(
    kafka_cluster: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kafka import KafkaAdminClient, KafkaProducer
    from kafka.admin import NewTopic

    topic = f"rebalance-{uuid.uuid4().hex[:8]}"
    bootstrap = kafka_cluster.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="rebalance-live")
    try:
        layout = {p: ([0, 3] if p % 2 == 0 else [3, 0]) for p in range(PARTITIONS)}
        admin.create_topics([NewTopic(topic, replica_assignments=layout)])
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
        for p in range(PARTITIONS):
            for _ in range(RECORDS):
                producer.send(topic, os.urandom(VALUE), partition=p)
        producer.flush(60)
        producer.close()

        assert (
            main(["rebalance", "loads", "--bootstrap-server", bootstrap, "--window", "900", "--sample", "0"])
            == 0
        )
        out, err = capsys.readouterr()
        doc = json.loads(out)
        mine = {p["partition"]: p for p in doc["partitions"] if p["topic"] == topic}
        assert sorted(mine) == list(range(PARTITIONS))
        # independent read of the sizes: every replica's log size, the largest per partition
        sizes: dict[int, int] = {}
        for answer in admin.describe_log_dirs([topic]):
            for log_dir in answer.get("log_dirs", []):
                for t in log_dir.get("topics", []):
                    for part in t.get("partitions", []):
                        if not part.get("is_future_key"):
                            i = int(part["partition_index"])
                            sizes[i] = max(sizes.get(i, 0), int(part["partition_size"]))
        for p, entry in mine.items():
            assert entry["replicas"] == layout[p]
            assert entry["size"] == sizes[p] >= RECORDS * VALUE
            assert entry["bytes_in"] > 0 and entry["bytes_out"] >= entry["bytes_in"]
        assert {b["id"] for b in doc["brokers"]} == {0, 1, 2, 3, 4, 5}
        assert all("rack" in b for b in doc["brokers"])
        assert "network capacities" in err

        loads = tmp_path / "loads.json"
        loads.write_text(out)
        assert main(["rebalance", "plan", "--loads", str(loads), "--goals", "disk"]) == 0
        plan_out, table = capsys.readouterr()
        moves = {
            m.partition: m.replicas
            for m in parse_reassignment(plan_out, allow_empty=True)
            if m.topic == topic
        }
        assert moves, table
        assert any(set(r) & {1, 2, 4, 5} for r in moves.values())
    finally:
        admin.delete_topics([topic])
        admin.close()
