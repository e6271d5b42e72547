"""Replica reassignment after adding brokers: our planner vs ``kafka-reassign-partitions --generate``.

Main cases: one topic, 10,000 partitions, RF 3, on 30 brokers in 3 racks (placed by AdminUtils,
as a ZooKeeper-era cluster would have it, or by KRaft's StripedReplicaPlacer), then 3 brokers are
added (30 → 33, one per rack) or removed (30 → 27, the last broker of each rack). For each change and
current placement it prints, side by side in one run:

* our plan: wall time (target < 1 s), replicas moved, the lower bound, leader changes, and the
  resulting spreads (replicas/leaders per broker, co-replica pairs);
* ``--generate`` from scratch, which ignores the current assignment: AdminUtils (the tool up to
  Kafka 4.0; random start, several seeds) and StripedReplicaPlacer (the tool since 4.1, new Random),
  both exact ports of the Java classes — replicas moved and their spreads;
* our balanced placer from scratch, for reference.

Then adding one broker to a small cluster (5→6 and 12→13 brokers, no racks).

Usage: .venv/bin/python benchmarks/bench_replicas.py [--partitions 10000] [--brokers 30] [--add 3]
       [--racks 3] [--rf 3] [--seeds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from kafka_placement.replicas import (
    Broker,
    JavaRandom,
    MockRandom,
    UsableBroker,
    assign_replicas_to_brokers,
    place_striped,
)
from kafka_placement.replicas.balanced import place_balanced
from kafka_placement.replicas.placement_quality import count_moves, placement_metrics
from kafka_placement.replicas.planner import plan_reassignment
from kafka_placement.vocabulary import TopicPartition

Assignment = dict[TopicPartition, list[int]]


def _topic(replica_lists: dict[int, list[int]] | list[list[int]]) -> Assignment:
    items = replica_lists.items() if isinstance(replica_lists, dict) else enumerate(replica_lists)
    return {TopicPartition("t", p): list(r) for p, r in items}


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def _spreads(assignment: Assignment, brokers: list[Broker]) -> str:
    m = placement_metrics({tp.partition: r for tp, r in assignment.items()}, brokers)
    return (
        f"replicas/broker spread {m.replica_spread:>3}, leaders {m.leader_spread:>3}, "
        f"pairs {m.pair_spread:>3}, under-diverse {len(m.under_diverse)}"
    )


def _uneven_racks() -> None:
    """KAFKA-19507: racks of 1, 5 and 5 brokers, 1,100 partitions. Replicas on the lone-rack broker
    (average 1,100*rf/11) and the broker spread, for the three placers."""
    brokers = [Broker(i, "A" if i == 0 else "B" if i <= 5 else "C") for i in range(11)]
    usable = [UsableBroker(b.id, b.rack) for b in brokers]
    print("\nuneven racks 1/5/5 (KAFKA-19507), 1100 partitions: replicas on the lone broker / spread")
    for rf in (2, 3):
        results = {
            "AdminUtils": _topic(assign_replicas_to_brokers(brokers, 1100, rf, seed=1)),
            "StripedReplicaPlacer": _topic(place_striped(usable, 1100, rf, JavaRandom(1))),
            "balanced (ours)": _topic(place_balanced(brokers, 1100, rf)),
        }
        cells = []
        for label, assignment in results.items():
            m = placement_metrics({tp.partition: r for tp, r in assignment.items()}, brokers)
            cells.append(f"{label} {m.replicas_per_broker[0]:>4}/{m.replica_spread:<4}")
        print(f"  RF {rf} (average {1100 * rf // 11}):  " + "   ".join(cells))


def _other_changes(old: list[Broker], partitions: int, rf: int) -> None:
    """More cluster changes on the same topic (AdminUtils current placement): plan time, moves vs
    bound, leader changes vs bound, resulting spreads."""
    current = _topic(assign_replicas_to_brokers(old, partitions, rf, seed=1))
    n = len(old)
    two_racks = [Broker(b.id, f"az{b.id % 2}") for b in old]
    cases: list[tuple[str, Assignment, list[Broker]]] = [
        ("decommission broker 7", current, [b for b in old if b.id != 7]),
        ("replace broker 7 (same rack)", current, [b for b in old if b.id != 7] + [Broker(n, old[7].rack)]),
        ("add a 4th rack with 3 brokers", current, old + [Broker(n + k, "rack-new") for k in range(3)]),
        (
            "RF 3 on 2 racks, +2 brokers",
            _topic(assign_replicas_to_brokers(two_racks, partitions, rf, seed=1)),
            [*two_racks, Broker(n, "az0"), Broker(n + 1, "az1")],
        ),
    ]
    print("\nother changes (AdminUtils current placement):")
    for label, cur, target in cases:
        plan, seconds = _timed(lambda cur=cur, target=target: plan_reassignment(cur, target))
        lb = plan.lower_bound
        print(
            f"  {label:<32} {seconds * 1000:6.0f} ms  moved {plan.moves.replicas_added:>6} (bound "
            f"{lb.replica_moves:>6}, ratio {plan.moves.replicas_added / max(1, lb.replica_moves):.3f})  "
            f"leader changes {plan.moves.leader_changes} (bound {lb.leader_changes})"
        )
        print(f"  {'':<32} {_spreads(plan.target, target)}")


def _java_speed(brokers: list[Broker], partitions: int, rf: int) -> None:
    """Our ports vs the Java classes (JPype, same JVM warm-up discipline: best of 5), same inputs."""
    print(f"\nplacement speed, {partitions} partitions x RF {rf} on {len(brokers)} brokers (best of 5):")
    try:
        from kafka_placement.conformance.bridge import reference

        ref = reference()
    except Exception as exc:  # no JVM / jars: say so, do not fail the benchmark
        print(f"  Java reference unavailable ({type(exc).__name__}: {exc}); Python only")
        ref = None
    pairs = [(b.id, b.rack) for b in brokers]
    usable = [UsableBroker(b.id, b.rack) for b in brokers]
    cases: list[tuple[str, Callable[[], Any], Callable[[], Any] | None]] = [
        (
            "AdminUtils (fixed start 0)",
            lambda: assign_replicas_to_brokers(brokers, partitions, rf, 0),
            (lambda: ref.assign_replicas_to_brokers(pairs, partitions, rf, 0)) if ref else None,
        ),
        (
            "StripedReplicaPlacer (MockRandom 17)",
            lambda: place_striped(usable, partitions, rf, MockRandom()),
            (lambda: ref.place_striped([(b.id, b.rack, False) for b in brokers], partitions, rf, 17))
            if ref
            else None,
        ),
    ]
    for label, ours, java in cases:
        ours_s = min(_timed(ours)[1] for _ in range(5))
        if java is None:
            print(f"  {label:<38} ours {ours_s * 1000:7.1f} ms")
            continue
        same = ours() == java()
        java_s = min(_timed(java)[1] for _ in range(5))
        print(
            f"  {label:<38} ours {ours_s * 1000:7.1f} ms  Java (incl. JPype conversion) "
            f"{java_s * 1000:7.1f} ms  ratio ours/Java {ours_s / java_s:5.2f}  identical: {same}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--brokers", type=int, default=30)
    parser.add_argument("--add", type=int, default=3)
    parser.add_argument("--racks", type=int, default=3)
    parser.add_argument("--rf", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=5, help="random --generate runs averaged")
    args = parser.parse_args(argv)

    def rack(i: int) -> str | None:
        return f"rack{i % args.racks}" if args.racks else None

    old = [Broker(i, rack(i)) for i in range(args.brokers)]
    added = old + [Broker(args.brokers + k, rack(args.brokers + k)) for k in range(args.add)]
    removed = old[: args.brokers - args.add]
    p, rf = args.partitions, args.rf
    total = p * rf
    currents = {
        "AdminUtils (ZK-era create)": _topic(assign_replicas_to_brokers(old, p, rf, seed=42)),
        "StripedReplicaPlacer (KRaft create)": _topic(
            place_striped([UsableBroker(b.id, b.rack) for b in old], p, rf, JavaRandom(42))
        ),
    }
    for change, new in ((f"+{args.add}", added), (f"-{args.add}", removed)):
        print(
            f"\n{p} partitions x RF {rf} on {args.brokers} brokers / {args.racks} racks, "
            f"{change} brokers -> {len(new)}; {total} replicas"
        )
        for label, current in currents.items():
            _compare(label, current, new, p, rf, args.seeds)

    _uneven_racks()
    _other_changes(old, p, rf)
    _java_speed(old, p, rf)
    print(
        "\nOne broker added, small cases (no racks, AdminUtils current placement, "
        "60 partitions per broker pair):"
    )
    for before, after in ((5, 6), (12, 13)):
        parts = before * after * 2
        current = _topic(assign_replicas_to_brokers(range(before), parts, 3, seed=1))
        plan = plan_reassignment(current, [Broker(i) for i in range(after)])
        gen = statistics.mean(
            count_moves(
                current, _topic(assign_replicas_to_brokers(range(after), parts, 3, seed=s))
            ).replicas_added
            for s in range(args.seeds)
        )
        print(
            f"  {before}->{after}: ours {plan.moves.replicas_added / (parts * 3):6.1%} "
            f"(bound {plan.lower_bound.replica_moves / (parts * 3):6.1%}), "
            f"--generate {gen / (parts * 3):6.1%}"
        )
    return 0


def _compare(label: str, current: Assignment, new: list[Broker], p: int, rf: int, seeds: int) -> None:
    """Our plan vs --generate (both tools' placers) vs balanced from scratch, for one change."""
    total = p * rf
    print(f"\ncurrent placement: {label}")
    plan, seconds = _timed(lambda: plan_reassignment(current, new))
    lb = plan.lower_bound
    print(
        f"  ours (planner)      {seconds * 1000:8.0f} ms  moved {plan.moves.replicas_added:>6} "
        f"({plan.moves.replicas_added / total:6.1%})  lower bound {lb.replica_moves:>6}  "
        f"ratio {plan.moves.replicas_added / max(1, lb.replica_moves):.3f}  leader changes "
        f"{plan.moves.leader_changes} (bound {lb.leader_changes})  target < 1 s: "
        f"{'yes' if seconds < 1 else 'NO'}"
    )
    print(f"                      {_spreads(plan.target, new)}")
    moved: list[int] = []
    last: Assignment = {}
    gen_seconds = []
    for seed in range(seeds):
        generated, t = _timed(lambda seed=seed: _topic(assign_replicas_to_brokers(new, p, rf, seed=seed)))
        gen_seconds.append(t)
        moved.append(count_moves(current, generated).replicas_added)
        last = generated
    mean = statistics.mean(moved)
    print(
        f"  --generate <=4.0 (AdminUtils, {seeds} seeds) moved {mean:>8.0f} "
        f"({mean / total:6.1%})  = {mean / max(1, plan.moves.replicas_added):.2f}x ours  "
        f"[{min(moved)}..{max(moved)}]"
    )
    print(f"                      {_spreads(last, new)}")
    moved = []
    for seed in range(seeds):
        usable = [UsableBroker(b.id, b.rack) for b in new]
        striped = _topic(place_striped(usable, p, rf, JavaRandom(seed)))
        moved.append(count_moves(current, striped).replicas_added)
    mean = statistics.mean(moved)
    print(
        f"  --generate >=4.1 (StripedReplicaPlacer, {seeds} seeds) moved {mean:>8.0f} "
        f"({mean / total:6.1%})  = {mean / max(1, plan.moves.replicas_added):.2f}x ours"
    )
    print(f"                      {_spreads(striped, new)}")
    fresh, t = _timed(lambda: _topic(place_balanced(new, p, rf)))
    fresh_moves = count_moves(current, fresh).replicas_added
    print(f"  balanced from scratch {t * 1000:6.0f} ms  moved {fresh_moves:>6}  {_spreads(fresh, new)}")


if __name__ == "__main__":
    sys.exit(main())
