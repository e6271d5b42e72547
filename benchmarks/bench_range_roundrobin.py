"""range / roundrobin / failover: ours vs kafka-python's RangePartitionAssignor and
RoundRobinPartitionAssignor, side by side in one run.

Each measurement runs in a fresh subprocess; the input (members, subscriptions, fake cluster) is
built before the clock starts; CPU time (``time.process_time``) is reported next to wall time
because the machine is shared. kafka-python's assignors get the same input through the same
ConsumerProtocolSubscription objects its coordinator would pass (dynamic members, equal
subscriptions: the case its round robin does not crash on).

Cases: 10k = 100 topics x 100 partitions x 500 members; 1M = 500 topics x 2000 partitions x 2000
members (Java's published sticky case; range/roundrobin are the baseline).

Usage: .venv/bin/python benchmarks/bench_range_roundrobin.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import namedtuple
from typing import Any

CASES = {"10k x 500": (100, 100, 500), "1M x 2000": (500, 2000, 2000)}


def _child(impl: str, strategy: str, case: str) -> dict[str, Any]:
    topics_n, parts, members_n = CASES[case]
    topics = [f"topic-{i:04d}" for i in range(topics_n)]
    ppt = dict.fromkeys(topics, parts)
    ids = [f"consumer-{i:05d}" for i in range(members_n)]
    if impl == "ours":
        from kafka_placement.assignment import Member, assign

        members = {m: Member(topics, priority=i) for i, m in enumerate(ids)}
        start_w, start_c = time.perf_counter(), time.process_time()
        result = assign(strategy, ppt, members)
        n = sum(len(v) for v in result.values())
    else:
        from kafka.coordinator.assignors.range import RangePartitionAssignor
        from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
        from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

        class Cluster:
            def partitions_for_topic(self, topic: str) -> set[int] | None:
                return set(range(ppt[topic])) if topic in ppt else None

        jm = namedtuple("jm", "member_id group_instance_id metadata")
        kmembers = [
            jm(m, None, ConsumerProtocolSubscription(version=0, topics=topics, user_data=b"")) for m in ids
        ]
        cls = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}[strategy]
        start_w, start_c = time.perf_counter(), time.process_time()
        raw = cls.assign(Cluster(), kmembers)
        n = sum(len(ps) for a in raw.values() for _, ps in a.assigned_partitions)
    return {"wall": time.perf_counter() - start_w, "cpu": time.process_time() - start_c, "partitions": n}


def _measure(impl: str, strategy: str, case: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", impl, strategy, case],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the 10k case")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(*args.child)))
        return 0
    cases = ["10k x 500"] if args.quick else list(CASES)
    print(f"{'case':<12} {'strategy':<11} {'ours cpu s':>11} {'kafka-python cpu s':>19} {'ratio':>7}")
    for case in cases:
        for strategy in ("range", "roundrobin", "failover"):
            ours = _measure("ours", strategy, case)
            theirs = _measure("kafka-python", strategy, case) if strategy != "failover" else None
            ratio = f"{theirs['cpu'] / ours['cpu']:.1f}x" if theirs else "-"
            their_text = f"{theirs['cpu']:.2f}" if theirs else "-"
            print(f"{case:<12} {strategy:<11} {ours['cpu']:>11.2f} {their_text:>19} {ratio:>7}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
