"""The steps both ways of ``reassign apply`` share (all at once: ``apply.py``; one replica at a time:
``stepwise.py``): the throttles, the log-dir moves, the progress line, and finishing (preferred leaders,
the lists checked, the throttles cleared once nothing else is moving)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping, Sequence
from typing import Any

from kafka_placement.cli.progress import Progress
from kafka_placement.cli.reassign.common import partition_names, replica_set_differs
from kafka_placement.replicas.throttles import (
    Movement,
    follower_throttles,
    human_bytes,
    human_rate,
    leader_throttles,
    reassigning_brokers,
)
from kafka_placement.vocabulary import TopicPartition


class ProgressLine:
    """Status → progress display (partitions done, bytes left, copy rate from the bytes-left trend)."""

    def __init__(self, total: int, stream: Any, unit: str = "partition") -> None:
        self.progress = Progress("reassigning", total, stream, unit=unit, plain_quarters=False)
        self._first: tuple[float, int] | None = None
        self.done_before = 0  # steps of earlier rounds (one replica at a time)

    def next_round(self, done_before: int) -> None:
        self.done_before, self._first = done_before, None

    def __call__(self, status: Any) -> None:
        note = ""
        if status.bytes_left is not None:
            note = f"{human_bytes(status.bytes_left)} left"
            if self._first is None:
                self._first = (status.elapsed, status.bytes_left)
            elif status.elapsed > self._first[0]:
                rate = (self._first[1] - status.bytes_left) / (status.elapsed - self._first[0])
                if rate > 0:
                    note += f" at {human_rate(rate)}"
        self.progress.update(self.done_before + status.done, note)


def start_dir_moves(
    admin: Any,
    dir_moves: Mapping[tuple[TopicPartition, int], str],
    here: Mapping[tuple[TopicPartition, int], Any],
    timeout_s: float,
) -> dict[tuple[TopicPartition, int], str]:
    """Start the log-dir moves whose replica is not in its dir yet (``here``: where the replicas are);
    the moves started."""
    from kafka_placement.clients.kafka_python import reassignment as kp

    pending = {r: d for r, d in dir_moves.items() if r not in here or here[r].current != d}
    if pending:
        kp.alter_log_dirs(admin, pending, timeout_s=timeout_s)
    return pending


def dirs_still_moving(left: set[tuple[TopicPartition, int]]) -> str:
    """The timeout message's part naming the log-dir moves still running (the first 20)."""
    return f"{len(left)} log dir move(s) still running: " + ", ".join(
        f"{tp.topic}-{tp.partition} on broker {b}" for tp, b in sorted(left)[:20]
    )


def set_throttles(
    admin: Any,
    rate: int | None,
    log_dir_rate: int | None,
    moves: Mapping[TopicPartition, Movement],
    dir_moves: Mapping[tuple[TopicPartition, int], str],
) -> None:
    from kafka_placement.clients.kafka_python import reassignment as kp

    if rate is None and log_dir_rate is None:
        return
    print(
        "Warning: You must run `kafka-placement reassign verify` periodically, until the reassignment "
        "completes, to ensure the throttle is removed."
    )
    brokers = reassigning_brokers(moves)
    log_dir_brokers = sorted({b for _, b in dir_moves})
    kp.set_throttles(
        admin,
        rate=rate,
        brokers=brokers,
        leader_lists=leader_throttles(moves),
        follower_lists=follower_throttles(moves),
        log_dir_rate=log_dir_rate,
        log_dir_brokers=log_dir_brokers,
    )
    if rate is not None:
        print(
            f"The inter-broker throttle limit was set to {rate} B/s ({human_rate(rate)}) on brokers "
            f"{','.join(map(str, brokers))}"
        )
    if log_dir_rate is not None and log_dir_brokers:
        print(
            f"The replica-alter-dir throttle limit was set to {log_dir_rate} B/s "
            f"({human_rate(log_dir_rate)}) on brokers {','.join(map(str, log_dir_brokers))}"
        )


def finish(
    admin: Any, args: argparse.Namespace, target: Mapping[TopicPartition, Sequence[int]], started: float
) -> int:
    """Every move done: elect preferred leaders, check the lists, clear the throttles, the summary line."""
    from kafka_placement.clients.kafka_python import admin as kp_admin
    from kafka_placement.clients.kafka_python import reassignment as kp

    if not args.no_elect_leaders:
        from kafka_placement.vocabulary import group_by_topic

        admin.elect_leaders(0, group_by_topic(target), raise_errors=False)
    mismatches, not_preferred = kp.retrying(
        admin,
        lambda: kp_admin.verify(
            admin, target, wait_leaders_s=0.0 if args.no_elect_leaders else 10.0, settle_s=kp_admin.SETTLE_S
        ),
    )
    for tp, (expected, actual) in sorted(mismatches.items()):
        print(replica_set_differs(tp, actual, expected))
    cleared = _clear_if_idle(admin, args, target)
    print(
        f"apply: {len(target)} partitions, completed=True, mismatches={len(mismatches)}, "
        f"not led by preferred replica={len(not_preferred)}, {time.monotonic() - started:.1f}s"
        + ("" if cleared is None else f", throttles {cleared}")
    )
    return 0 if not mismatches else 1


def wait_dirs(admin: Any, dir_moves: Mapping[tuple[TopicPartition, int], str], budget_s: float) -> set[Any]:
    """Wait (up to ``budget_s``) until every named log dir holds its replica; what is still moving."""
    from kafka_placement.clients.kafka_python import reassignment as kp

    deadline = time.monotonic() + max(0.0, budget_s)
    while True:
        here = kp.replica_dirs(admin, {tp.topic for tp, _ in dir_moves}) if dir_moves else {}
        left = {r for r, d in dir_moves.items() if r not in here or here[r].current != d or here[r].future}
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.5)


def _clear_if_idle(admin: Any, args: argparse.Namespace, target: Mapping[TopicPartition, Any]) -> str | None:
    """Clear every throttle (Kafka's clearAllThrottles: all brokers, the plan's topics) once no
    reassignment at all is in flight; a description of what happened, None when nothing was set."""
    from kafka_placement.clients.kafka_python import admin as kp_admin
    from kafka_placement.clients.kafka_python import reassignment as kp

    brokers = {b.id for b in kp.retrying(admin, lambda: kp_admin.brokers(admin))}
    brokers |= {b for r in target.values() for b in r}
    topics = {tp.topic for tp in target}
    if not kp.throttles(admin, brokers, topics):
        return None
    if args.preserve_throttles:
        return "preserved (--preserve-throttles)"
    others = kp.ongoing(admin)
    if others:
        return f"kept: other reassignments in flight ({partition_names(others, 5)})"
    skipped = kp.clear_throttles(admin, brokers, topics)
    return f"cleared except on unreachable broker(s) {skipped}: run verify later" if skipped else "cleared"
