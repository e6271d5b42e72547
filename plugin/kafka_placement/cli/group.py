"""``kafka-placement group describe GROUP``: a group's protocol, assignor and members, and whether a
failover group's partitions are on its highest-priority live member.

Classic groups through DescribeGroups (kafka-python; our failover userData decoded: each member's
priority, and whether the leader's assignment userData keeps Kafka from converting the group to the
consumer protocol), consumer-protocol groups through ConsumerGroupDescribe (kafka-python with Kafka's
own message schema read from the kafka-clients jar, fetched from Maven Central once: each member's rack
and the priority in it, subscription, assignment and target assignment; without that jar,
confluent-kafka, which shows no racks, hence no priorities), share groups recognised (failover does
not apply). During a move between the protocols (docs/migration.md) it says who ranks the members (the
classic leader or the broker's assignor), each member's protocol, whose priority the broker could not
see, and how many members are left to move. Exit 0: fine or not a failover group; 1: a failover group
whose partitions are not on its highest-priority live member, or whose priorities are not honoured (a
converted group assigned by another assignor than failover); 2: usage or connection error.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kafka_placement.cli.connection_options import add_connection_arguments, settings_from_args
from kafka_placement.cli.tables import format_table
from kafka_placement.clients.connection import check_connection
from kafka_placement.clients.group_reading import read_group, read_server_assignors
from kafka_placement.groups.description import DescribedGroup, partition_names
from kafka_placement.groups.failover_check import FailoverCheck, check_failover
from kafka_placement.groups.migration import MigrationStatus, migration_status


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "group",
        help="see a consumer group: protocol, assignor, members, failover health",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="group_command", metavar="SUBCOMMAND", required=True)
    describe = commands.add_parser(
        "describe",
        help="describe one group; exit 1 when a failover group is not on its best live member",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    describe.add_argument("group", metavar="GROUP", help="the group id")
    add_connection_arguments(describe, required=True)
    describe.add_argument("--json", action="store_true", help="print the description as JSON")
    judged = describe.add_mutually_exclusive_group()
    judged.add_argument(
        "--failover",
        dest="failover",
        action="store_const",
        const=True,
        default=None,
        help="judge it as a failover group whatever its assignor (e.g. uniform on the consumer protocol)",
    )
    judged.add_argument(
        "--no-failover",
        dest="failover",
        action="store_const",
        const=False,
        help="never judge it as a failover group",
    )
    describe.set_defaults(handler=run_describe)


def _names(group: DescribedGroup) -> dict[str, str]:
    """member id → ``client-id (member-id…)`` for the judgement lines."""
    return {m.member_id: f"{m.client_id or '?'} ({m.member_id[:12]})" for m in group.members}


def format_description(group: DescribedGroup, check: FailoverCheck, migration: MigrationStatus) -> str:
    lines = [
        f"group {group.group_id}: protocol {group.protocol}, state {group.state or '?'}, "
        f"assignor {group.assignor or '?'}"
    ]
    if check.convertible is not None:
        lines.append(
            "conversion to the consumer protocol: "
            + (
                "allowed (no member's assignment userData is non-empty)"
                if check.convertible
                else "refused by Kafka (a member's assignment userData is non-empty, KAFKA-18134)"
            )
        )
    if group.members:
        consumer = group.protocol == "consumer"
        headers = [
            "client id",
            "member id",
            "protocol",
            "host",
            "instance id",
            "rack",
            "priority",
            "assignment",
        ]
        if consumer:
            headers.append("target assignment")
        rows = []
        for m in group.members:
            priority = m.priority if m.priority is not None else m.priority_source
            row = [
                m.client_id,
                m.member_id,
                m.member_protocol or "?",
                m.host,
                m.instance_id or "-",
                m.rack or "-",
                priority,
                ",".join(partition_names(m.assignment)) or "-",
            ]
            if consumer:
                row.append(",".join(partition_names(m.target_assignment or ())) or "-")
            rows.append(row)
        lines.append(format_table(headers, rows))
        for m in group.members:
            lines.extend(f"  member {m.client_id or m.member_id}: {p}" for p in m.problems)
    elif group.protocol in ("classic", "consumer"):
        lines.append("no members")
    names = _names(group)
    if check.applies:
        lines.append(
            "failover: should be active: "
            + (", ".join(names.get(i, i) for i in check.should_be_active) or "cannot tell")
            + "; active: "
            + (", ".join(names.get(i, i) for i in check.active) or "none")
        )
        for t in check.topics:
            verdict = {True: "ok", False: "NOT OK", None: "unknown"}[t.ok]
            owners = ", ".join(names.get(o, o) for o in t.owners) or "nobody"
            should = names.get(t.should_own, t.should_own) if t.should_own else "cannot tell"
            lines.append(
                f"  topic {t.topic}: {verdict}: should own: {should}; owned by: {owners} ({t.reason})"
            )
    lines.append(("failover: " if check.applies else "") + check.reason)
    if migration.stage != "n/a":
        lines.append(f"migration: {migration.stage}; ranked by {migration.ranked_by}; {migration.advice}")
        lines.extend(
            f"  member {names.get(mid, mid)}: priority not visible to the broker: {why}"
            for mid, why in migration.not_ready
        )
        lines.extend(f"  NOT OK: {problem}" for problem in migration.problems)
    lines.extend(f"note: {n}" for n in group.notes)
    return "\n".join(lines)


def run_describe(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    check_connection(settings)
    group = read_group(settings, args.group)
    check = check_failover(group, failover=args.failover)
    offered = read_server_assignors(settings) if check.applies else None
    migration = migration_status(group, failover=args.failover, offered=offered)
    if args.json:
        out = {
            "group_id": group.group_id,
            "protocol": group.protocol,
            "state": group.state,
            "assignor": group.assignor,
            "members": [m.summary() for m in group.members],
            "partitions_per_topic": group.partitions_per_topic,
            "notes": list(group.notes),
            "failover": check.summary(),
            "migration": migration.summary(),
        }
        print(json.dumps(out, indent=2, sort_keys=True))
    else:
        print(format_description(group, check, migration))
    sys.stdout.flush()
    return 1 if check.applies and not (check.ok and migration.honoured) else 0
