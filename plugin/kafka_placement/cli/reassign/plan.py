"""``reassign plan``: the minimal-movement plan for a live cluster (``--bootstrap-server``) or a saved
assignment (``--current FILE``).

The plan JSON always goes somewhere: to ``--output`` (the summary then goes to stdout) or to stdout
(the summary then goes to stderr, so ``> plan.json`` captures a valid plan). A plan that moves nothing
is ``{"version":1,"partitions":[]}``, which ``apply``/``verify``/``cancel`` accept as nothing to do.
Whenever something moves, the current lists of the changed partitions are saved for a rollback: to
``--rollback``, else beside ``--output`` (``PLAN.rollback.json``), else to
``reassign-rollback-<UTC time>.json`` in the working directory.

Log dirs: replicas that stay on their broker keep the dir ``--current`` gives them; new replicas get
``"any"`` (the broker picks), as in Kafka's JSON. The rollback file names the dirs the replicas are in
now (live: ``DescribeLogDirs``; offline: ``--current``'s, else ``"any"``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from kafka_placement.cli.files import check_writable_file, unused_path
from kafka_placement.cli.reassign.common import admin_client, load_plan, with_log_dirs
from kafka_placement.errors import InvalidArgumentError, InvalidBrokerError
from kafka_placement.java import INT_MAX
from kafka_placement.replicas.planner import Plan, plan_reassignment
from kafka_placement.replicas.reassignment_json import (
    ANY_LOG_DIR,
    as_assignment,
    format_reassignment,
)
from kafka_placement.vocabulary import Broker, TopicPartition

#: (topic-partition, broker) → the log dir that replica is in.
ReplicaDirs = Mapping[tuple[TopicPartition, int], str]


def topics_of(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return list(dict.fromkeys(t.strip() for v in values for t in v.split(",") if t.strip()))


def parse_brokers(text: str) -> tuple[list[int], dict[int, str | None]]:
    """``"0,1,2"`` or ``"0:rack1,1:rack3"`` → (ids in order, explicit racks)."""
    ids: list[int] = []
    racks: dict[int, str | None] = {}
    for item in (v.strip() for v in text.split(",")):
        if not item:
            continue
        ident, _, rack = item.partition(":")
        try:
            broker_id = int(ident)
        except ValueError:
            raise InvalidBrokerError(f"--brokers expects id or id:rack items, got {item[:100]!r}") from None
        if broker_id < 0:
            raise InvalidBrokerError(f"broker id must be >= 0, got {broker_id} in --brokers")
        if broker_id > INT_MAX:
            raise InvalidBrokerError(f"broker id must be in [0, {INT_MAX}], got {broker_id} in --brokers")
        if broker_id in racks or broker_id in ids:
            raise InvalidBrokerError(f"Broker list contains duplicate entries: {broker_id}")
        ids.append(broker_id)
        if rack:
            racks[broker_id] = rack
    if not ids:
        raise InvalidBrokerError(f"--brokers names no broker: {text!r}")
    return ids, racks


def _target_brokers(args: argparse.Namespace, cluster_brokers: list[Broker]) -> list[Broker]:
    known = {b.id: b.rack for b in cluster_brokers}
    if args.brokers:
        ids, racks = parse_brokers(args.brokers)
        for b in ids:
            if b not in racks and b not in known and cluster_brokers:
                raise InvalidBrokerError(f"Unknown broker id {b} (cluster brokers: {sorted(known)})")
        brokers = [Broker(b, racks.get(b, known.get(b))) for b in ids]
    elif cluster_brokers:
        brokers = list(cluster_brokers)
    else:
        raise InvalidArgumentError("offline planning (--current) needs --brokers id:rack,...")
    if any(b.rack is not None for b in brokers) and any(b.rack is None for b in brokers):
        # AdminUtils' rule (AdminOperationException): racks for all brokers or for none
        missing = sorted(b.id for b in brokers if b.rack is None)
        raise InvalidBrokerError(
            "Not all brokers have rack information for replica rack aware assignment. "
            f"(no rack for broker(s) {missing}; give id:rack for every broker in --brokers)"
        )
    if args.remove_brokers:
        drop, _ = parse_brokers(args.remove_brokers)
        missing = sorted(set(drop) - {b.id for b in brokers})
        if missing:
            raise InvalidBrokerError(f"--remove-brokers names unknown broker(s) {missing}")
        brokers = [b for b in brokers if b.id not in set(drop)]
    return brokers


def build_plan_with_dirs(args: argparse.Namespace) -> tuple[Plan, dict[tuple[TopicPartition, int], str]]:
    """The plan, and the log dir of every current replica where it is known."""
    topics = topics_of(args.topic)
    cluster_brokers: list[Broker] = []
    sizes: dict[TopicPartition, int] | None = None
    dirs: dict[tuple[TopicPartition, int], str] = {}
    if args.current:
        moves = load_plan(args.current)
        if topics is not None:
            moves = [m for m in moves if m.topic in topics]
        current = as_assignment(moves)
        for m in moves:
            for b, d in zip(m.replicas, m.log_dirs or (), strict=False):
                if d != ANY_LOG_DIR:
                    dirs[(m.topic_partition, b)] = d
    elif args.bootstrap_servers is not None or args.command_config:
        from kafka_placement.clients.kafka_python import admin as kp_admin
        from kafka_placement.clients.kafka_python import reassignment as kp_reassign

        admin = admin_client(args)
        try:
            snap = kp_admin.snapshot(admin, topics)
            chosen = topics if topics is not None else snap.topics()
            if getattr(args, "with_sizes", False):
                sizes = kp_admin.partition_sizes(admin, chosen)
            try:
                dirs = {r: d.current for r, d in kp_reassign.replica_dirs(admin, chosen).items() if d.current}
            except Exception as exc:  # the rollback then says "any"; the plan itself does not need dirs
                print(
                    f'warning: log dirs not readable ({type(exc).__name__}); rollback uses "any"',
                    file=sys.stderr,
                )
        finally:
            admin.close()
        current = snap.assignment(topics)
        cluster_brokers = list(snap.brokers)
    else:
        raise InvalidArgumentError("reassign plan needs --bootstrap-servers or --current FILE")
    if not current:
        raise InvalidArgumentError("no partitions to plan (no topics matched)")
    brokers = _target_brokers(args, cluster_brokers)
    return plan_reassignment(current, brokers, scope=args.scope, sizes=sizes), dirs


def build_plan(args: argparse.Namespace) -> Plan:
    return build_plan_with_dirs(args)[0]


def default_rollback_path(output: str | None) -> str:
    if output:
        return str(Path(output).with_suffix("")) + ".rollback.json"
    return unused_path(f"reassign-rollback-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}")


def run_plan(args: argparse.Namespace) -> int:
    for option, path in (("--output", args.output), ("--rollback", args.rollback)):
        if path:
            check_writable_file(path, option)
    plan, dirs = build_plan_with_dirs(args)
    changed = plan.changed
    # staying replicas keep the dirs --current gives; a live plan leaves the choice to the broker
    text = format_reassignment(with_log_dirs(changed, dirs if args.current else {}))
    rollback = None
    if changed:
        rollback = args.rollback or default_rollback_path(args.output)
        check_writable_file(rollback, "--rollback")
        Path(rollback).write_text(
            format_reassignment(with_log_dirs({tp: plan.current[tp] for tp in changed}, dirs)) + "\n"
        )
    if args.output:
        Path(args.output).write_text(text + "\n")
    report = sys.stdout if args.output else sys.stderr
    summary = plan.summary()
    summary["rollback"] = rollback
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=True), file=report)
    else:
        moves, bound = summary["moves"], summary["lower_bound"]
        print(
            f"plan: {summary['partitions_changed']}/{summary['partitions']} partitions change; "
            f"replicas moved {moves['replicas_added']} (lower bound {bound['replica_moves']}, "
            f"ratio {summary['replica_moves_vs_bound']}); leader changes {moves['leader_changes']} "
            f"(lower bound {bound['leader_changes']})"
            + (f"; bytes to copy {moves['bytes_moved']}" if moves["bytes_moved"] is not None else ""),
            file=report,
        )
        for warning in plan.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        if rollback:
            print(
                f"rollback (current lists of the {len(changed)} changed partitions): {rollback}", file=report
            )
        else:
            print("nothing moves: the plan is empty", file=report)
    if not args.output:
        print(text)
    return 0
