"""``kafka-placement reassign plan|apply|verify``: minimal-movement reassignment.

plan    current assignment (live via --bootstrap-server [--command-config FILE], or --current FILE)
        + target brokers (--brokers ids, or id:rack pairs; default: every broker of the cluster)
        → the plan (kafka-reassign-partitions JSON, changed partitions only) and its cost against
        the lower bound; --rollback FILE saves the current lists of the changed partitions.
apply   submit a plan with AlterPartitionReassignments (kafka-python), print progress from
        ListPartitionReassignments until done, elect preferred leaders, verify.
verify  compare a plan with describe_topics; exit 1 while anything differs or is still moving.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kafka_placement.cli.connection_options import add_connection_arguments, settings_from_args
from kafka_placement.cli.files import check_writable_file
from kafka_placement.clients.connection import check_connection, translate_error
from kafka_placement.errors import InvalidArgumentError, InvalidBrokerError
from kafka_placement.replicas.planner import Plan, plan_reassignment
from kafka_placement.replicas.reassignment_json import (
    as_assignment,
    check_against_cluster,
    format_reassignment,
    parse_reassignment,
)
from kafka_placement.vocabulary import Broker, TopicPartition


def _topics(values: list[str] | None) -> list[str] | None:
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
            raise InvalidBrokerError(f"--brokers expects id or id:rack items, got {item!r}") from None
        if broker_id < 0:
            raise InvalidBrokerError(f"broker id must be >= 0, got {broker_id} in --brokers")
        if broker_id in racks or broker_id in ids:
            raise InvalidBrokerError(f"Broker list contains duplicate entries: {broker_id}")
        ids.append(broker_id)
        if rack:
            racks[broker_id] = rack
    if not ids:
        raise InvalidBrokerError(f"--brokers names no broker: {text!r}")
    return ids, racks


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "reassign",
        help="plan/apply/verify minimal-movement replica reassignments",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    plan = sub.add_parser("plan", help="compute a plan and its lower bound")
    add_connection_arguments(plan, help_suffix=" (read the current assignment and racks from this cluster)")
    plan.add_argument("--current", metavar="FILE", help="current assignment as reassignment JSON (offline)")
    plan.add_argument("--topic", action="append", metavar="TOPIC", help="topics to plan (default: all)")
    plan.add_argument("--brokers", help="target brokers: ids (racks from the cluster) or id:rack pairs")
    plan.add_argument("--remove-brokers", help="brokers to drain (comma-separated ids)")
    plan.add_argument(
        "--scope", choices=("topic", "cluster"), default="topic",
        help="balance each topic on its own (default) or all partitions of a replication factor together",
    )
    plan.add_argument("--output", metavar="FILE", help="write the plan JSON here (default: stdout)")
    plan.add_argument("--rollback", metavar="FILE", help="write the current lists of the changed partitions")
    plan.add_argument("--json", action="store_true", help="print the plan summary as JSON")
    plan.add_argument(
        "--with-sizes", action="store_true",
        help="read partition sizes (describe_log_dirs) and report the bytes the plan copies",
    )
    plan.set_defaults(handler=run_plan)
    apply = sub.add_parser("apply", help="submit a plan and wait for it with progress")
    add_connection_arguments(apply, timeout=False)
    apply.add_argument("--plan", required=True, metavar="FILE", help="reassignment JSON to execute")
    apply.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for completion")
    apply.add_argument("--no-elect-leaders", action="store_true", help="skip preferred leader election")
    apply.set_defaults(handler=run_apply)
    verify = sub.add_parser("verify", help="check a plan against the cluster")
    add_connection_arguments(verify)
    verify.add_argument("--plan", required=True, metavar="FILE")
    verify.set_defaults(handler=run_verify)


def _admin(args: argparse.Namespace) -> Any:
    """The admin client of every reassign action: settings from the command line, a bounded pre-flight
    check first (clear one-line failures), then kafka-python's KafkaAdminClient."""
    from kafka import KafkaAdminClient

    settings = settings_from_args(args)
    check_connection(settings)
    try:
        return KafkaAdminClient(client_id="kafka-placement-reassign", **settings.kafka_python())
    except Exception as exc:
        raise translate_error(exc, settings, "connect the admin client") from None


def build_plan(args: argparse.Namespace) -> Plan:
    topics = _topics(args.topic)
    cluster_brokers: list[Broker] = []
    sizes: dict[TopicPartition, int] | None = None
    if args.current:
        moves = parse_reassignment(Path(args.current).read_text())
        current = as_assignment(moves)
        if topics is not None:
            current = {tp: r for tp, r in current.items() if tp.topic in topics}
    elif args.bootstrap_servers or args.command_config:
        from kafka_placement.clients.kafka_python import admin as kp_admin

        admin = _admin(args)
        try:
            snap = kp_admin.snapshot(admin, topics)
            if getattr(args, "with_sizes", False):
                sizes = kp_admin.partition_sizes(admin, topics if topics is not None else snap.topics())
        finally:
            admin.close()
        current = snap.assignment(topics)
        cluster_brokers = list(snap.brokers)
    else:
        raise InvalidArgumentError("reassign plan needs --bootstrap-servers or --current FILE")
    if not current:
        raise InvalidArgumentError("no partitions to plan (no topics matched)")
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
    return plan_reassignment(current, brokers, scope=args.scope, sizes=sizes)


def _progress(done: int, total: int, elapsed: float) -> None:
    print(f"reassigning: {done}/{total} partitions complete ({elapsed:.1f}s)", file=sys.stderr, flush=True)


def run_plan(args: argparse.Namespace) -> int:
    for option, path in (("--output", args.output), ("--rollback", args.rollback)):
        if path:
            check_writable_file(path, option)
    plan = build_plan(args)
    text = format_reassignment(plan.changed)
    if args.output:
        Path(args.output).write_text(text + "\n")
    if args.rollback:
        Path(args.rollback).write_text(
            format_reassignment({tp: plan.current[tp] for tp in plan.changed}) + "\n"
        )
    summary = plan.summary()
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=True))
    else:
        moves, bound = summary["moves"], summary["lower_bound"]
        print(
            f"plan: {summary['partitions_changed']}/{summary['partitions']} partitions change; "
            f"replicas moved {moves['replicas_added']} (lower bound {bound['replica_moves']}, "
            f"ratio {summary['replica_moves_vs_bound']}); leader changes {moves['leader_changes']} "
            f"(lower bound {bound['leader_changes']})"
            + (f"; bytes to copy {moves['bytes_moved']}" if moves["bytes_moved"] is not None else ""),
            file=sys.stderr if not args.output else sys.stdout,
        )
        for warning in plan.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        if not args.output:
            print(text)
    return 0


def _load_plan(path: str) -> dict[TopicPartition, list[int]]:
    return as_assignment(parse_reassignment(Path(path).read_text()))


def run_apply(args: argparse.Namespace) -> int:
    from kafka_placement.clients.kafka_python import admin as kp_admin

    target = _load_plan(args.plan)
    admin = _admin(args)
    try:
        snap = kp_admin.snapshot(admin, sorted({tp.topic for tp in target}))
        check_against_cluster(
            parse_reassignment(Path(args.plan).read_text()),
            snap.partitions_per_topic(),
            [b.id for b in snap.brokers],
        )
        result = kp_admin.apply_reassignment(
            admin, target, progress=_progress, timeout_s=args.timeout,
            elect_preferred_leaders=not args.no_elect_leaders,
        )
    finally:
        admin.close()
    print(
        f"apply: {result.submitted} partitions, completed={result.completed}, "
        f"mismatches={len(result.mismatches)}, "
        f"not led by preferred replica={len(result.not_preferred_leaders)}, "
        f"{result.seconds:.1f}s"
    )
    for tp, (expected, actual) in sorted(result.mismatches.items()):
        print(f"  {tp.topic}-{tp.partition}: expected {expected}, cluster has {actual}")
    return 0 if result.ok else 1


def run_verify(args: argparse.Namespace) -> int:
    from kafka import TopicPartition as KafkaTopicPartition

    from kafka_placement.clients.kafka_python import admin as kp_admin

    target = _load_plan(args.plan)
    admin = _admin(args)
    try:
        ongoing = admin.list_partition_reassignments(
            [KafkaTopicPartition(tp.topic, tp.partition) for tp in target]
        )
        mismatches, not_preferred = kp_admin.verify(admin, target)
    finally:
        admin.close()
    for tp in sorted(target):
        if any(k.topic == tp.topic and k.partition == tp.partition for k in ongoing):
            print(f"Reassignment of partition {tp.topic}-{tp.partition} is still in progress.")
        elif tp in mismatches:
            expected, actual = mismatches[tp]
            print(f"Partition {tp.topic}-{tp.partition}: replica set is {actual} rather than {expected}.")
        else:
            print(f"Reassignment of partition {tp.topic}-{tp.partition} is completed.")
    if not_preferred:
        print(f"{len(not_preferred)} partition(s) not led by their preferred replica")
    return 0 if not ongoing and not mismatches else 1
