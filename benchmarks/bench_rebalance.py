"""Load-aware rebalancing: our planner against Cruise Control's documented greedy (the baseline,
rebalance_baseline.py) and the lower bound on bytes copied, side by side in one run.

Models (rebalance_models.uneven_model): RF 3 in 3 racks, replicas drawn with lognormal broker
weights (disk max/mean ≈ 1.5), sizes lognormal (median 500 MB, σ 1.5), bytes in Zipf-skewed
(exponent 0.5) and independent of sizes. Printed per case: plan time, peak RSS, the worst band
violation reached per goal, bytes moved against the baseline and the lower bound. Plan time is
printed as wall time and as this process's CPU time, with the load average before and after: on a
shared machine the wall time grows with the load, the CPU time much less.

With ``--topic-replicas THRESHOLD`` each case is planned once more with Cruise Control's
TopicReplicaDistributionGoal added (that ``topic.replica.count.balance.threshold``; its default gaps),
printing each topic's replicas per broker (min..max) before and after, the limits, and the load bands.

Usage: .venv/bin/python benchmarks/bench_rebalance.py [--cases small,large] [--no-baseline-large]
       [--topic-replicas 1.1] [--no-baseline]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from kafka_placement.replicas.loads import Goals, broker_loads, plan_rebalance
from kafka_placement.replicas.loads.model import RESOURCES, LoadModel
from kafka_placement.replicas.loads.topic_replica_distribution import TopicReplicaDistribution, replica_counts
from rebalance_baseline import baseline_plan
from rebalance_models import uneven_model

CASES = {"small": (30, 10_000), "large": (200, 333_334)}


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def copied(model: object, target: np.ndarray) -> float:
    m = model
    before, after = m.replicas, target  # type: ignore[attr-defined]
    new = (after[:, :, None] != before[:, None, :]).all(axis=2) & (after >= 0)
    return float((new.sum(axis=1) * m.size).sum())  # type: ignore[attr-defined]


def spread(model: LoadModel, replicas: np.ndarray) -> list[str]:
    counts = replica_counts(model, replicas)
    return [f"{c.min()}..{c.max()}" for c in counts]


def topic_goal_case(model: LoadModel, threshold: float) -> None:
    """The plan with the topic goal added, every load band still a goal."""
    goal = TopicReplicaDistribution(threshold=threshold)
    start, cpu = time.perf_counter(), time.process_time()
    plan = plan_rebalance(model, Goals(placement=(goal,)))
    took, cpu = time.perf_counter() - start, time.process_time() - cpu
    status = plan.goal_status()
    topic = status["topic_replicas"]
    lower, upper = goal.limits(model, np.zeros(model.num_brokers, dtype=bool))
    print(
        f"with topic_replicas (threshold {threshold:g}: limits per broker "
        f"{int(lower.min())}..{int(upper.max())} replicas of a topic): {took:.1f} s ({cpu:.1f} s CPU), "
        f"bytes moved {plan.bytes_moved / 1e12:.3f} TB ({plan.bytes_moved / plan.lower_bound.bytes:.3f}× "
        f"the disk bound), replica moves {sum(1 for m in plan.moves if m.kind != 'leader'):,}, "
        f"leader changes {plan.leader_changes:,}"
    )
    before, after = spread(model, model.replicas), spread(model, plan.replicas)
    shown = min(len(before), 12)
    print(f"          per topic, replicas per broker before: {', '.join(before[:shown])}")
    print(f"          per topic, replicas per broker after:  {', '.join(after[:shown])}")
    print(
        f"          topics outside their limits {topic['topics_outside_before']} → "
        f"{topic['topics_outside_after']} (of {len(model.topics)}); widest spread "
        f"{topic['widest_spread_before']} → {topic['widest_spread_after']}"
    )
    print(
        "          load bands held: "
        + ", ".join(
            f"{r} {'yes' if status[r]['met'] else 'NO'} ({status[r]['worst_after']:.4f})" for r in RESOURCES
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default="small,large")
    parser.add_argument(  # since the baseline was made fast (~50 s CPU at 200 × 1M) it runs on both
        "--no-baseline-large", action="store_true", help="skip the baseline on the large case"
    )
    parser.add_argument("--no-baseline", action="store_true", help="skip the baseline on every case")
    parser.add_argument(
        "--topic-replicas", type=float, metavar="THRESHOLD", help="also plan with the topic replica goal"
    )
    args = parser.parse_args()
    for case in args.cases.split(","):
        brokers, partitions = CASES[case]
        model = uneven_model(brokers, partitions)
        loads = broker_loads(model)
        print(
            f"== {brokers} brokers × {partitions * 3:,} replicas ({partitions:,} partitions RF 3); "
            f"disk max/mean {loads[:, 0].max() / loads[:, 0].mean():.2f}; load average "
            f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
        )
        start, cpu = time.perf_counter(), time.process_time()
        plan = plan_rebalance(model, Goals())
        took, cpu = time.perf_counter() - start, time.process_time() - cpu
        worst = plan.worst(plan.after)
        bound = plan.lower_bound.bytes
        print(
            f"ours:     {took:7.1f} s ({cpu:.1f} s CPU; load average {os.getloadavg()[0]:.1f} after), "
            f"peak RSS {rss_mb():,.0f} MB, "
            f"bytes moved {plan.bytes_moved / 1e12:.3f} TB "
            f"({plan.bytes_moved / bound:.3f}× the lower bound {bound / 1e12:.3f} TB), "
            f"leader changes {plan.leader_changes:,}"
        )
        print(
            "          worst violation after (share of the mean outside the ±10% band): "
            + ", ".join(f"{r} {w:.4f}" for r, w in zip(RESOURCES, worst, strict=True))
        )
        if args.topic_replicas is not None:
            topic_goal_case(model, args.topic_replicas)
        if args.no_baseline or (case == "large" and args.no_baseline_large):
            print("baseline: skipped")
            continue
        start, cpu = time.perf_counter(), time.process_time()
        target = baseline_plan(model, Goals())
        took, cpu = time.perf_counter() - start, time.process_time() - cpu
        after = broker_loads(model, target)
        moved = copied(model, target)
        base_worst = plan.worst(after)
        print(
            f"baseline: {took:7.1f} s ({cpu:.1f} s CPU; load average {os.getloadavg()[0]:.1f} after), "
            f"peak RSS so far {rss_mb():,.0f} MB, "
            f"bytes moved {moved / 1e12:.3f} TB ({moved / bound:.3f}× the bound; "
            f"ours/baseline {plan.bytes_moved / moved:.3f})"
        )
        print(
            "          worst violation after: "
            + ", ".join(f"{r} {w:.4f}" for r, w in zip(RESOURCES, base_worst, strict=True))
        )


if __name__ == "__main__":
    main()
