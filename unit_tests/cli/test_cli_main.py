"""The installed command in a fresh process: help, and the README's plan example on a fresh sample."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kafka_placement.partitioning import partition_keys
from kafka_placement.spark.sample import SampleSpec, key_bytes, sample_arrays


def cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafka_placement.cli", *args], capture_output=True, text=True, timeout=timeout
    )


def test_help_lists_the_subcommands() -> None:
    proc = cli("--help", timeout=60)
    assert proc.returncode == 0
    for sub in ("plan", "audit", "reassign", "demo", "conformance"):
        assert sub in proc.stdout
    plan_help = cli("plan", "--help", timeout=60)
    assert plan_help.returncode == 0 and "--sample N" in plan_help.stdout


def test_unknown_scheme_fails_before_spark() -> None:
    proc = cli("plan", "--sample", "1000", "--schemes", "crc64", timeout=60)
    assert proc.returncode == 2
    assert "kafka-placement plan: error: unknown partitioning scheme 'crc64'" in proc.stderr


@pytest.mark.spark
def test_plan_sample_100000_partitions_12_16(tmp_path: Path) -> None:
    out = tmp_path / "plan"
    proc = cli(
        "plan", "--sample", "100000", "--partitions", "12,16", "--output", str(out), "--master", "local[2]"
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "murmur2/12" in proc.stdout and "murmur2/16" in proc.stdout
    assert (out / "report.html").is_file()
    html = (out / "report.html").read_text()
    for png in ("partitions.png", "brokers.png", "consumers.png", "skew.png", "hot_keys.png", "moved.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f'src="{png}"' in html
    # Machine-readable per-partition results equal a direct computation on the same sample.
    spec = SampleSpec(100_000, seed=42, mean_value_size=512, min_value_size=16)
    ranks, sizes = sample_arrays(spec, np.arange(spec.records))
    keys = key_bytes(ranks)
    lengths = np.array([len(k) for k in keys]) + sizes
    parts = pd.read_parquet(out / "partitions.parquet")
    for n in (12, 16):
        p = partition_keys(keys, n)
        got = parts[parts["partitioning"] == f"murmur2/{n}"]
        assert got["records"].tolist() == np.bincount(p, minlength=n).tolist()
        assert got["bytes"].tolist() == np.bincount(p, weights=lengths, minlength=n).astype(int).tolist()
    doc = json.loads((out / "plan.json").read_text())
    assert doc["totals"]["records"] == 100_000
    moved = doc["moved"][0]
    direct = Counter(
        k for k, a, b in zip(keys, partition_keys(keys, 12), partition_keys(keys, 16), strict=True) if a != b
    )
    assert moved["keys"] == len(direct)


def test_sigterm_runs_every_finally_and_exits_143(tmp_path: Path) -> None:
    """A command ended by SIGTERM (docker stop, systemd, a CI timeout) unwinds like Ctrl-C: its
    ``finally`` (here a marker file, in a soak the cluster's containers) runs; one line, exit 143."""
    marker = tmp_path / "cleaned"
    started = tmp_path / "started"
    script = f"""
import sys, time, pathlib
import kafka_placement.cli as cli
real = cli.build_parser
def slow(args):
    pathlib.Path({str(started)!r}).touch()
    try:
        time.sleep(60)
    finally:
        pathlib.Path({str(marker)!r}).write_text("yes")
    return 0
def build():
    parser = real()
    parsed = parser.parse_args(["cluster", "status"])
    parsed.handler = slow
    parser.parse_args = lambda argv: parsed
    return parser
cli.build_parser = build
sys.exit(cli.main(["cluster", "status"]))
"""
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while not started.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    assert marker.read_text() == "yes"
    assert err.strip().splitlines() == ["kafka-placement cluster: terminated (SIGTERM); cleaned up"]
