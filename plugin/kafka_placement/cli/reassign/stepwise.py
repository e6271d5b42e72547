"""``reassign apply --one-replica-at-a-time``: each partition's move in steps that add one replica.

The steps come from ``replicas/reassignment_steps.py``. Round k submits every partition's k-th step
(partitions move side by side; each one holds at most one replica more than before while its step
runs), waits for the round with the same progress as a plain apply (steps done / total, the round's
bytes left, rate), then the next. The throttles are the plain apply's, set once: followers copy from
the leader, which stays an original replica until the step that completes the partition (Kafka hands
leadership over only when a step completes, and the old leader is replaced last), so the original
replicas are every source and the new ones every destination. Log-dir moves start after the last
round (every replica then exists). The rollback file written
before the first round holds the original lists. Interrupted (``--timeout``, a crash, Ctrl-C), the
round in flight goes on in the cluster; once it completes, the same command continues from the lists
it finds (finished partitions have no steps left) and writes a new rollback file, never over the first.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_placement.cli.reassign.common import partition_name, partition_names
from kafka_placement.cli.reassign.execution import (
    ProgressLine,
    dirs_still_moving,
    finish,
    set_throttles,
    start_dir_moves,
    wait_dirs,
)
from kafka_placement.replicas.reassignment_steps import one_replica_steps
from kafka_placement.replicas.throttles import OngoingReassignment, movement_map
from kafka_placement.vocabulary import TopicPartition


@dataclass(frozen=True)
class StepwiseMove:
    """What ``apply`` read before the first round."""

    target: Mapping[TopicPartition, Sequence[int]]
    current: Mapping[TopicPartition, Sequence[int]]
    in_flight: Mapping[TopicPartition, OngoingReassignment]  # other partitions' moves (--additional)
    dir_moves: Mapping[tuple[TopicPartition, int], str]
    racks: Mapping[int, str | None]


def rounds_of(move: StepwiseMove) -> list[dict[TopicPartition, tuple[int, ...]]]:
    """Round k: every partition's k-th step (partitions already at their target have none)."""
    steps = {tp: one_replica_steps(move.current[tp], r, move.racks) for tp, r in sorted(move.target.items())}
    depth = max((len(s) for s in steps.values()), default=0)
    return [{tp: s[k] for tp, s in steps.items() if len(s) > k} for k in range(depth)]


def apply_stepwise(
    admin: Any,
    args: argparse.Namespace,
    move: StepwiseMove,
    rate: int | None,
    log_dir_rate: int | None,
    timeout_s: float,
) -> int:
    from kafka_placement.clients.kafka_python import reassignment as kp

    rounds = rounds_of(move)
    total = sum(len(batch) for batch in rounds)
    set_throttles(
        admin, rate, log_dir_rate, movement_map(move.target, move.current, move.in_flight), move.dir_moves
    )
    print(
        f"Moving one replica of a partition at a time: {total} step(s) in {len(rounds)} round(s) "
        f"for {len(move.target)} partition(s)"
    )
    started = time.monotonic()
    line = ProgressLine(total, sys.stderr, unit="step")
    done = 0
    lists = {tp: list(r) for tp, r in move.current.items()}
    for k, batch in enumerate(rounds, 1):
        moves = movement_map(batch, lists)  # this round's copies: its bytes left
        lists.update({tp: list(r) for tp, r in batch.items()})
        kp.submit(admin, batch)
        print(
            f"Round {k}/{len(rounds)}: started partition reassignment{'' if len(batch) == 1 else 's'} for "
            f"{','.join(partition_name(tp) for tp in sorted(batch))}"
        )
        line.next_round(done)
        left_s = timeout_s - (time.monotonic() - started)
        last = kp.wait(admin, sorted(batch), moves, timeout_s=max(0.0, left_s), on_status=line)
        if last.in_flight:
            line.progress.close()
            print(
                f"Timed out after {timeout_s:g}s in round {k}/{len(rounds)}: {len(last.in_flight)} "
                f"partition(s) still being reassigned: {partition_names(last.in_flight)}. The round goes "
                "on in the cluster"
                + (
                    "; throttles stay until `reassign verify` sees it complete"
                    if rate is not None or log_dir_rate is not None
                    else ""
                )
                + "; once it completes, the same command continues with the steps left (the first "
                "rollback file holds the original lists); `reassign cancel --plan` stops it.",
                file=sys.stderr,
            )
            return 1
        done += len(batch)
    if move.dir_moves:
        here = kp.replica_dirs(admin, {tp.topic for tp in move.target})
        start_dir_moves(admin, move.dir_moves, here, max(1.0, timeout_s - (time.monotonic() - started)))
        left = wait_dirs(admin, move.dir_moves, timeout_s - (time.monotonic() - started))
        if left:
            line.progress.close()
            print(
                f"Timed out after {timeout_s:g}s: {dirs_still_moving(left)}; `reassign verify --plan` "
                "reports them.",
                file=sys.stderr,
            )
            return 1
    line.progress.finish()
    return finish(admin, args, move.target, started)
