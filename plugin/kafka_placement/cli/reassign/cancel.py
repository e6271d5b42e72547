"""``reassign cancel``: stop reassignments in flight (``kafka-reassign-partitions --cancel``).

``--plan FILE`` cancels the plan's partitions that are still moving, ``--all`` every reassignment of
the cluster. The controller restores each partition's original replica list (the replicas it had
before the move; the copies already made on new brokers are deleted); log-dir moves of the plan that
are still running are sent back to the dir the replica is in. Then we wait (``--timeout``) until the
cluster shows the original lists, and clear the throttles unless ``--preserve-throttles``.
"""

from __future__ import annotations

import argparse
import time

from kafka_placement.cli.reassign.common import (
    admin_client,
    check_timeout,
    load_plan,
    partition_name,
    partition_names,
)
from kafka_placement.cli.reassign.verify import clear_all_throttles
from kafka_placement.errors import ClusterError, InvalidArgumentError
from kafka_placement.replicas.reassignment_json import as_assignment, log_dir_moves


def run_cancel(args: argparse.Namespace) -> int:
    from kafka_placement.clients.kafka_python import admin as kp_admin
    from kafka_placement.clients.kafka_python import reassignment as kp

    if bool(args.plan) == bool(args.all):
        raise InvalidArgumentError("reassign cancel needs exactly one of --plan FILE or --all")
    timeout_s = check_timeout(args.timeout)
    plan_moves = load_plan(args.plan) if args.plan else []
    if args.plan and not plan_moves:
        print("the plan moves nothing: nothing to cancel")
        return 0
    target = as_assignment(plan_moves)
    dir_moves = log_dir_moves(plan_moves)
    admin = admin_client(args)
    try:
        in_flight = kp.ongoing(admin)
        chosen = {tp: o for tp, o in in_flight.items() if args.all or tp in target}
        if chosen:
            kp.cancel(admin, chosen)
            names = ",".join(partition_name(tp) for tp in sorted(chosen))
            plural = "" if len(chosen) == 1 else "s"
            print(f"Successfully cancelled partition reassignment{plural} for: {names}")
        else:
            print("None of the specified partition reassignments are active.")
        if dir_moves:
            here = kp.replica_dirs(admin, {tp.topic for tp, _ in dir_moves})
            back = {
                r: here[r].current
                for r in dir_moves
                if r in here and here[r].future is not None and here[r].current
            }
            if back:
                kp.alter_log_dirs(admin, {r: d for r, d in back.items() if d}, timeout_s=timeout_s)
                for (tp, b), d in sorted(back.items(), key=lambda x: (x[0][1], x[0][0])):
                    print(
                        f"Successfully started moving log directory to {d} for replica "
                        f"{tp.topic}-{tp.partition} with broker {b}"
                    )
            else:
                print("None of the specified partition moves are active.")
        _wait_restored(admin, chosen, timeout_s)
        topics = {tp.topic for tp in target} | {tp.topic for tp in chosen}
        if topics and not args.preserve_throttles:
            brokers = {b for r in target.values() for b in r}
            brokers |= {b for o in chosen.values() for b in o.replicas}
            clear_all_throttles(admin, brokers, topics)
        if chosen:
            chosen_topics = sorted({tp.topic for tp in chosen})
            snap = kp.retrying(admin, lambda: kp_admin.snapshot(admin, chosen_topics))
            for tp in sorted(chosen):
                print(
                    f"{partition_name(tp)}: replicas {','.join(map(str, snap.partitions[tp].replicas))} "
                    f"(restored)"
                )
    finally:
        admin.close()
    return 0


def _wait_restored(admin: object, chosen: dict, timeout_s: float) -> None:  # type: ignore[type-arg]
    """Until none of ``chosen`` is in flight and each shows its original replica set again."""
    from kafka_placement.clients.kafka_python import admin as kp_admin
    from kafka_placement.clients.kafka_python import reassignment as kp

    if not chosen:
        return
    deadline = time.monotonic() + timeout_s
    topics = sorted({tp.topic for tp in chosen})
    while True:
        still = set(kp.ongoing(admin, chosen))
        snap = kp.retrying(admin, lambda: kp_admin.snapshot(admin, topics))
        wrong = {tp for tp, o in chosen.items() if set(snap.partitions[tp].replicas) != set(o.original)}
        if not still and not wrong:
            return
        if time.monotonic() >= deadline:
            raise ClusterError(
                f"cancel sent, but after {timeout_s:g}s these partitions do not show their original replicas "
                f"yet: {partition_names(still | wrong)}"
            )
        time.sleep(0.5)
