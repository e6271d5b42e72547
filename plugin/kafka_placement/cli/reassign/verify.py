"""``reassign verify``: where a plan stands, in ``kafka-reassign-partitions --verify``'s words, and the
throttles removed once nothing is moving any more.

Exit 0: every partition of the plan has its target list and every named log dir holds its replica;
exit 1: something is still moving or differs. Throttles (which live on the cluster, so they survive a
crash of ``apply``) are cleared as Kafka's tool clears them — every broker of the cluster and the
plan's topics — only when no reassignment of the cluster is in flight and no log-dir move of the plan
is running, unless ``--preserve-throttles``.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from kafka_placement.cli.reassign.common import (
    admin_client,
    load_plan,
    partition_name,
    replica_set_differs,
)
from kafka_placement.replicas.reassignment_json import as_assignment, log_dir_moves
from kafka_placement.vocabulary import TopicPartition


def _replica(tp: TopicPartition, broker: int) -> str:
    # Java's TopicPartitionReplica.toString(): "%d-%s-%d" (broker, topic, partition)
    return f"{broker}-{tp.topic}-{tp.partition}"


def log_dir_lines(
    dir_moves: Mapping[tuple[TopicPartition, int], str], here: Mapping[tuple[TopicPartition, int], Any]
) -> tuple[list[str], bool]:
    """Kafka's replicaMoveStatesToString lines and whether any move is still active."""
    lines: list[str] = []
    active = False
    for (tp, broker), target in sorted(dir_moves.items(), key=lambda x: (x[0][1], x[0][0])):
        info = here.get((tp, broker))
        name = f"{tp.topic}-{tp.partition}"
        if info is None:
            lines.append(f"Partition {name} cannot be found in any live log directory on broker {broker}.")
            active = True  # Kafka counts a missing replica as not done
        elif info.current is None:
            lines.append(
                f"Partition {name} is not found in any live log dir on broker {broker}. "
                "There is likely an offline log directory on the broker."
            )
            active = True
        elif info.future is not None:
            active = True
            if info.future == target:
                lines.append(f"Reassignment of replica {_replica(tp, broker)} is still in progress.")
            else:
                lines.append(
                    f"Partition {name} on broker {broker} is being moved to log dir "
                    f"{info.future} instead of {target}."
                )
        elif info.current == target:
            lines.append(f"Reassignment of replica {_replica(tp, broker)} completed successfully.")
        else:
            active = True
            lines.append(
                f"Partition {name} on broker {broker} is not being moved from log dir "
                f"{info.current} to {target}."
            )
    return lines, active


def clear_all_throttles(admin: Any, target_brokers: set[int], topics: set[str]) -> list[int]:
    """Kafka's clearAllThrottles, with its two report lines; the brokers that could not be reached
    (down or restarting: their throttles stay, named on a third line)."""
    from kafka_placement.clients.kafka_python import admin as kp_admin
    from kafka_placement.clients.kafka_python import reassignment as kp

    brokers = {b.id for b in kp.retrying(admin, lambda: kp_admin.brokers(admin))} | target_brokers
    print(
        f"Clearing broker-level throttles on broker{'' if len(brokers) == 1 else 's'} "
        f"{','.join(map(str, sorted(brokers)))}"
    )
    plural = "" if len(topics) == 1 else "s"
    print(f"Clearing topic-level throttles on topic{plural} {','.join(sorted(topics))}")
    skipped = kp.clear_throttles(admin, brokers, topics)
    if skipped:
        print(
            f"Could not reach broker(s) {','.join(map(str, skipped))}: their throttles stay; run verify "
            "again once they are back."
        )
    return skipped


def run_verify(args: argparse.Namespace) -> int:
    from kafka_placement.clients.kafka_python import admin as kp_admin
    from kafka_placement.clients.kafka_python import reassignment as kp

    plan_moves = load_plan(args.plan)
    if not plan_moves:
        print("the plan moves nothing: nothing to verify")
        return 0
    target = as_assignment(plan_moves)
    dir_moves = log_dir_moves(plan_moves)
    admin = admin_client(args)
    try:
        in_flight = kp.ongoing(admin)
        snap = kp.retrying(
            admin,
            lambda: kp_admin.settled_snapshot(
                admin, target, moving=in_flight, settle_s=kp_admin.SETTLE_S / 2
            ),
        )
        print("Status of partition reassignment:")
        differs = False
        for tp in sorted(target):
            expected = target[tp]
            if tp in in_flight:
                print(f"Reassignment of partition {partition_name(tp)} is still in progress.")
                continue
            state = snap.partitions.get(tp)
            actual = list(state.replicas) if state else []
            if actual == expected:
                print(f"Reassignment of partition {partition_name(tp)} is completed.")
            else:
                differs = True
                print(replica_set_differs(tp, actual, expected))
        dirs_active = False
        if dir_moves:
            here = kp.replica_dirs(admin, {tp.topic for tp, _ in dir_moves})
            lines, dirs_active = log_dir_lines(dir_moves, here)
            print("\n".join(lines))
        left_throttled: list[int] = []
        if not in_flight and not dirs_active and not args.preserve_throttles:
            left_throttled = clear_all_throttles(
                admin, {b for r in target.values() for b in r}, {tp.topic for tp in target}
            )
        elif in_flight:
            others = sorted(set(in_flight) - set(target))
            if others:
                print(
                    f"{len(others)} other partition(s) of the cluster are being reassigned; throttles stay."
                )
        not_preferred = [
            tp
            for tp in target
            if snap.partitions.get(tp) is not None
            and tp not in in_flight
            and snap.partitions[tp].leader != target[tp][0]
        ]
        if not_preferred:
            print(f"{len(not_preferred)} partition(s) not led by their preferred replica")
    finally:
        admin.close()
    plan_in_flight = any(tp in in_flight for tp in target)
    return 0 if not plan_in_flight and not differs and not dirs_active and not left_throttled else 1
