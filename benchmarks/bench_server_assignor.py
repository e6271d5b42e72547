"""The broker-side failover assignor vs Kafka's own ``uniform`` and ``range``, warm, in one JVM per case.

``benchmarks/java/server_assignor/ServerAssignorBench.java`` (compiled here against the Kafka version's
``kafka-group-coordinator`` jar and our plugin jar, :mod:`kafka_placement.broker_plugin`) builds one
``GroupSpecImpl`` per case — members with ``client.rack=#priority=<i>``, nothing owned yet (a fresh target
assignment) — and times ``assign()`` of each assignor on it after a warm-up: the median of the warm calls.
The ratio columns are Kafka's time over ours (>1: ours is faster).

Usage: python benchmarks/bench_server_assignor.py [--quick] [--seconds S] [--kafka-version X.Y.Z]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from kafka_placement.broker_plugin.build import build_jar
from kafka_placement.broker_plugin.maven import REFERENCE, resolve
from kafka_placement.versions import KAFKA_VERSION

SOURCE = Path(__file__).with_name("java") / "server_assignor" / "ServerAssignorBench.java"
MAIN = "io.kafkaplacement.bench.ServerAssignorBench"
#: (members, topics, partitions per topic, subscriptions)
CASES = [
    (10, 10, 100, "homogeneous"),
    (100, 100, 100, "homogeneous"),
    (1_000, 100, 1_000, "homogeneous"),
    (100, 100, 100, "heterogeneous"),
    (1_000, 100, 1_000, "heterogeneous"),
]
QUICK = CASES[:2] + CASES[3:4]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="only the small cases")
    parser.add_argument("--seconds", type=float, default=6.0, help="time budget per assignor and case")
    parser.add_argument("--kafka-version", default=KAFKA_VERSION)
    args = parser.parse_args()
    javac, java = shutil.which("javac"), shutil.which("java")
    if javac is None or java is None:
        print("bench_server_assignor: needs a JDK (javac, java)", file=sys.stderr)
        return 2
    class_path = [*map(str, resolve(args.kafka_version, REFERENCE)), str(build_jar(args.kafka_version))]
    with tempfile.TemporaryDirectory() as classes:
        subprocess.run(
            [
                javac,
                "--release",
                "17",
                "-nowarn",
                "-d",
                classes,
                "-cp",
                os.pathsep.join(class_path),
                str(SOURCE),
            ],
            check=True,
        )
        run_cp = os.pathsep.join([*class_path, classes])
        print(f"Kafka {args.kafka_version}, warm median per assign() call, fresh target assignment")
        print(
            "| members × partitions (topics) | subscriptions | failover (ours) | uniform | range "
            "| uniform / ours | range / ours |"
        )
        print("|---|---|---|---|---|---|---|")
        for members, topics, per_topic, kind in QUICK if args.quick else CASES:
            command = [
                java,
                "-Xmx2g",
                "-cp",
                run_cp,
                MAIN,
                str(members),
                str(topics),
                str(per_topic),
                kind,
                str(args.seconds),
            ]
            out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            rows = {row["assignor"]: row for row in map(json.loads, out.splitlines())}
            ours, uniform, rng = (rows[n]["median_ms"] for n in ("failover", "uniform", "range"))
            assert rows["failover"]["assigned"] == rows["uniform"]["assigned"] == topics * per_topic
            print(
                f"| {members:,} × {topics * per_topic:,} ({topics}) | {kind} | {ours:.3f} ms | "
                f"{uniform:.3f} ms | {rng:.3f} ms | {uniform / ours:,.0f}× | {rng / ours:,.0f}× |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
