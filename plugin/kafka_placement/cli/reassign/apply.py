"""``reassign apply``: execute a plan the way ``kafka-reassign-partitions --execute`` does, then wait.

1. Refuse while any partition of the cluster is being reassigned, naming them, unless ``--additional``
   (Kafka's text). 2. Save the current lists of the plan's partitions (the rollback file). 3. With
   ``--throttle``: the replication rate on every broker taking part and the moving replicas listed on
   their topics; ``--replica-alter-log-dirs-throttle``: the log-dir rate on brokers with dir moves.
4. Submit; start the log-dir moves the plan names. 5. Wait with progress (partitions done / total,
   bytes still to copy, elapsed, rate) until done or ``--timeout`` (exit 1, naming what is in flight;
   the throttles stay, ``verify`` clears them). 6. Elect preferred leaders, check the replica lists,
   clear the throttles (unless ``--preserve-throttles`` or other moves are still in flight).

``--one-replica-at-a-time`` (stepwise.py) replaces 4–5 by rounds of one-replica steps; the steps both
share (throttles, log-dir moves, progress, finishing) are in execution.py.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kafka_placement.cli.files import check_writable_file, unused_path
from kafka_placement.cli.reassign.common import (
    admin_client,
    check_timeout,
    load_plan,
    partition_name,
    partition_names,
    with_log_dirs,
)
from kafka_placement.cli.reassign.execution import (
    ProgressLine,
    dirs_still_moving,
    finish,
    set_throttles,
    start_dir_moves,
    wait_dirs,
)
from kafka_placement.cli.reassign.stepwise import StepwiseMove, apply_stepwise
from kafka_placement.errors import InvalidArgumentError, ReassignmentInProgressError
from kafka_placement.replicas.reassignment_json import (
    PartitionMove,
    as_assignment,
    check_against_cluster,
    format_reassignment,
    log_dir_moves,
)
from kafka_placement.replicas.throttles import (
    Movement,
    movement_map,
    parse_rate,
)
from kafka_placement.vocabulary import TopicPartition

#: Kafka's ReassignPartitionsCommand text, then the partitions in flight.
CANNOT_EXECUTE = (
    "Cannot execute because there is an existing partition assignment.  Use --additional to override "
    "this and create a new partition assignment in addition to the existing one. The --additional flag "
    "can also be used to change the throttle by resubmitting the current reassignment."
)


def default_rollback_path(plan: str) -> str:
    """``PLAN.rollback-<UTC time>.json``, never overwriting an earlier one (a second ``--additional``
    run must not replace the lists saved before the first)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return unused_path(str(Path(plan).with_suffix("")) + f".rollback-{stamp}")


def _submit_and_move_dirs(
    admin: Any,
    target: Mapping[TopicPartition, Sequence[int]],
    dir_moves: Mapping[tuple[TopicPartition, int], str],
    here: Mapping[tuple[TopicPartition, int], Any],
    timeout_s: float,
) -> None:
    """Submit ``target``, then the log-dir moves whose replica is not in its dir yet (``here``: where
    the replicas were just before the submit)."""
    from kafka_placement.clients.kafka_python import reassignment as kp

    kp.submit(admin, target)
    plural = "" if len(target) == 1 else "s"
    print(
        f"Successfully started partition reassignment{plural} for "
        f"{','.join(partition_name(tp) for tp in sorted(target))}"
    )
    if dir_moves:
        pending = start_dir_moves(admin, dir_moves, here, timeout_s)
        for (tp, broker), log_dir in sorted(pending.items(), key=lambda x: (x[0][1], x[0][0])):
            print(
                f"Successfully started moving log directory to {log_dir} for replica "
                f"{tp.topic}-{tp.partition} with broker {broker}"
            )


def run_apply(args: argparse.Namespace) -> int:
    from kafka_placement.clients.kafka_python import admin as kp_admin
    from kafka_placement.clients.kafka_python import reassignment as kp

    # everything the user typed is checked before we connect
    plan_moves: list[PartitionMove] = load_plan(args.plan)
    rate = parse_rate(args.throttle, "--throttle") if args.throttle is not None else None
    log_dir_rate = (
        parse_rate(args.replica_alter_log_dirs_throttle, "--replica-alter-log-dirs-throttle")
        if args.replica_alter_log_dirs_throttle is not None
        else None
    )
    timeout_s = check_timeout(args.timeout)
    if args.one_replica_at_a_time and args.no_wait:
        raise InvalidArgumentError(
            "--one-replica-at-a-time submits each step after the one before completes: it cannot --no-wait"
        )
    if not plan_moves:
        print("the plan moves nothing: nothing to apply")
        return 0
    rollback = args.rollback or default_rollback_path(args.plan)
    check_writable_file(rollback, "--rollback")
    target = as_assignment(plan_moves)
    dir_moves = log_dir_moves(plan_moves)

    admin = admin_client(args)
    try:
        in_flight = kp.ongoing(admin)
        if in_flight and not args.additional:
            raise ReassignmentInProgressError(f"{CANNOT_EXECUTE} In flight: {partition_names(in_flight)}")
        if args.one_replica_at_a_time and set(in_flight) & set(target):
            raise ReassignmentInProgressError(
                "--one-replica-at-a-time cannot take over partitions already being reassigned: "
                f"{partition_names(set(in_flight) & set(target))}. Wait until they complete (`reassign "
                "verify`) or cancel them, then apply again: the steps start from the lists found then."
            )
        topics = sorted({tp.topic for tp in target})
        snap = kp.retrying(admin, lambda: kp_admin.snapshot(admin, topics))
        check_against_cluster(plan_moves, snap.partitions_per_topic(), [b.id for b in snap.brokers])
        current = {tp: list(snap.partitions[tp].replicas) for tp in target}
        here = kp.replica_dirs(admin, {tp.topic for tp in target})
        known = {r: d.current for r, d in here.items() if d.current}
        Path(rollback).write_text(format_reassignment(with_log_dirs(current, known)) + "\n")
        print(f"Current partition replica assignment saved to {rollback} (use it as --plan to roll back)")
        if args.one_replica_at_a_time:
            racks = {b.id: b.rack for b in snap.brokers}
            move = StepwiseMove(target, current, in_flight, dir_moves, racks)
            return apply_stepwise(admin, args, move, rate, log_dir_rate, timeout_s)
        moves = movement_map(target, current, {tp: o for tp, o in in_flight.items()})
        set_throttles(admin, rate, log_dir_rate, moves, dir_moves)
        _submit_and_move_dirs(admin, target, dir_moves, here, timeout_s)
        if args.no_wait:
            return 0
        throttled = rate is not None or log_dir_rate is not None
        return _wait_and_finish(admin, args, target, moves, dir_moves, timeout_s, throttled=throttled)
    finally:
        admin.close()


def _wait_and_finish(
    admin: Any,
    args: argparse.Namespace,
    target: Mapping[TopicPartition, Sequence[int]],
    moves: Mapping[TopicPartition, Movement],
    dir_moves: Mapping[tuple[TopicPartition, int], str],
    timeout_s: float,
    *,
    throttled: bool,
) -> int:
    from kafka_placement.clients.kafka_python import reassignment as kp

    started = time.monotonic()
    line = ProgressLine(len(target), sys.stderr)
    last = kp.wait(admin, sorted(target), moves, timeout_s=timeout_s, on_status=line)
    budget = timeout_s - (time.monotonic() - started)
    dirs_left = wait_dirs(admin, dir_moves, budget) if not last.in_flight else set()
    if last.in_flight or dirs_left:
        line.progress.close()
        what = (
            f"{len(last.in_flight)} partition(s) still being reassigned: {partition_names(last.in_flight)}"
            if last.in_flight
            else dirs_still_moving(dirs_left)
        )
        print(
            f"Timed out after {timeout_s:g}s: {what}. The move goes on in the cluster"
            + ("; throttles stay until `reassign verify` sees it complete" if throttled else "")
            + "; `reassign cancel --plan` stops it.",
            file=sys.stderr,
        )
        return 1
    line.progress.finish()
    return finish(admin, args, target, started)
