"""The main job end to end: ``kafka-placement demo`` against the live cluster exits 0 and proves each step.

Runs the real command in a subprocess (attached to the session's cluster with ``--bootstrap-servers``
so no second cluster starts) and checks what it printed and wrote: every consumed record in the
partition our murmur2 predicts, the standby taking over after the active member is SIGKILLed, an
audit without findings, and the plan report with its plots read through Spark's Kafka source — and that
every line it printed is one of ours (unit_tests/cli/terminal_lines.py), Spark's own output kept in a log.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from unit_tests.cli.terminal_lines import foreign_lines

pytestmark = [pytest.mark.integration, pytest.mark.spark]


def test_demo_end_to_end(kafka_cluster: Any, tmp_path: Path) -> None:
    out = tmp_path / "demo"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "kafka_placement.cli",
            "demo",
            "--bootstrap-servers",
            kafka_cluster.bootstrap_servers,
            "--records",
            "3000",
            "--partitions",
            "6",
            "--output",
            str(out),
            "--master",
            "local[2]",
        ],
        capture_output=True,
        text=True,
        timeout=1800,  # generous: on a loaded 2-core machine one Spark start has taken 335 s
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # only our lines: no JVM, Ivy, log4j, librdkafka or Python warning line between them (issue #32)
    assert foreign_lines(proc.stdout) == []
    assert foreign_lines(proc.stderr) == []
    text = proc.stdout
    for n in range(1, 7):
        assert f"=== {n}. " in text
    assert "in the partition our murmur2 predicts: 3,000/3,000" in text
    assert "(1,500 from kafka-python, 1,500 from confluent-kafka)" in text
    assert re.search(r"active: priority 30 owns all 6 partitions", text)
    takeover = re.search(r"takeover: priority 20 owns all 6 partitions ([0-9.]+)s after the kill", text)
    assert takeover is not None and float(takeover.group(1)) < 60
    assert "finding:" not in text
    # our progress says what Spark does on its long steps; its own output went to the log named
    assert re.search(r"  starting Spark \(local\[2\]\): done in [0-9.]+s — its output: \S+\.log", text)
    connector = r"  loading Spark's Kafka connector \(.+\): done in [0-9.]+s — org\.apache\.spark:"
    assert re.search(connector, text)
    assert re.search(r"  planning \d+ scenario\(s\) on Spark: done in ", text)
    assert (out / "report.html").is_file()
    for png in ("partitions.png", "brokers.png", "consumers.png", "skew.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    plan = json.loads((out / "plan.json").read_text())
    assert plan["totals"]["records"] == 3000
    assert plan["totals"]["keyless_records"] == 0
