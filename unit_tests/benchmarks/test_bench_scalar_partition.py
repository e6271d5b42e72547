"""``benchmarks/bench_scalar_partition.py`` on a tiny size runs end to end and both sides of every row agree.

The benchmark is how issue 47's ratios (our one-key functions vs confluent-kafka's) are measured; this keeps
it runnable. Nothing here asserts a time (the machine is noisy; times are what the benchmark prints): only
that every row is printed with a positive ratio and that every keyed row gives the same partitions as the
other side (confluent-kafka's function or our pure-Python definition).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from kafka_placement.partitioning import SCHEMES

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_scalar_partition.py"
HASH_ROWS = ["murmur2(k)", "murmur2_unsigned(k)", "crc32(k)", "fnv1a(k)", "jump_hash(int, 12)"]


def test_tiny_run_prints_every_row_and_both_sides_agree() -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--keys", "3000", "--rounds", "2", "--sample", "1000"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = {
        line.split("  ")[0].strip(): line for line in proc.stdout.splitlines() if not line.startswith("#")
    }
    expected = ["partition_key(k, 12)", "partition_key jump (scale)", *HASH_ROWS]
    expected += [f"partition_key {name}" for name in SCHEMES]
    assert sorted(rows) == sorted(expected), proc.stdout
    for name, line in rows.items():
        ratio = re.search(r"  ([0-9.]+) \([0-9.]+–[0-9.]+\)x  ", line)
        assert ratio and float(ratio.group(1)) > 0, line
        if name == "partition_key random":
            assert line.endswith("keyless: random"), line
        elif name.endswith("(scale)"):
            assert line.endswith("scale only"), line
        else:
            assert line.endswith("same partitions"), line
