"""``kafka-placement audit``: replica placement of a live cluster through the admin API.

Racks come from describe_cluster, replicas/leaders/ISR from describe_topics (kafka-python's
KafkaAdminClient by default, or confluent-kafka's AdminClient with ``--client confluent``).
Reports replicas and leaders per broker and rack (max−min), rack diversity, co-replica pair spread
and findings: partitions short of rack diversity, spreads above what the racks allow, offline or
non-preferred leaders, under-replicated partitions.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kafka_placement.cli.connection_options import add_connection_arguments, settings_from_args
from kafka_placement.clients.connection import ConnectionSettings, check_connection, translate_error
from kafka_placement.errors import KafkaPlacementError, NotAuthorizedError
from kafka_placement.replicas.placement_audit import AuditReport, ClusterSnapshot, audit


def _topics(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return list(dict.fromkeys(t.strip() for v in values for t in v.split(",") if t.strip()))


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="audit replica placement of a live cluster (racks, spreads, leaders, findings)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_connection_arguments(parser, required=False)
    parser.add_argument(
        "--topic", action="append", metavar="TOPIC", help="topic(s) to audit (repeatable, comma lists)"
    )
    parser.add_argument("--client", choices=("kafka-python", "confluent"), default="kafka-python")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--fail-on-findings", action="store_true", help="exit 1 when there are findings")
    parser.set_defaults(handler=run)


def take_snapshot(settings: ConnectionSettings, topics: list[str] | None, client: str) -> ClusterSnapshot:
    """Read the cluster with the chosen client library (imports happen here, not at CLI start)."""
    try:
        if client == "confluent":
            from confluent_kafka.admin import AdminClient

            from kafka_placement.clients.confluent import admin as confluent_admin

            return confluent_admin.snapshot(AdminClient(settings.confluent()), topics)
        from kafka_placement.clients.kafka_python import admin as kp_admin

        admin = kp_admin.open_admin(settings.kafka_python(), client_id="kafka-placement-audit")
        try:
            return kp_admin.snapshot(admin, topics)
        finally:
            admin.close()
    except NotAuthorizedError as exc:
        who = f" as user {settings.credentials()[0]!r}" if settings.sasl else ""
        raise NotAuthorizedError(
            f"{exc}{who} on {settings.bootstrap_servers}; ask for the ACL "
            "(kafka-acls.sh --add --allow-principal User:<you> --operation Describe --topic <topic>) "
            "or audit with a principal that has it"
        ) from None
    except Exception as exc:
        if isinstance(exc, KafkaPlacementError):
            raise
        operation = "describe the topics" if topics else "describe the cluster"
        raise translate_error(exc, settings, operation) from None


def format_report(report: AuditReport) -> str:
    lines = ["brokers: " + ", ".join(f"{b.id}({b.rack})" for b in report.brokers)]
    header = (
        f"{'topic':<28} {'parts':>5} {'rf':>2} {'repl min-max':>12} {'best':>4} {'lead min-max':>12} "
        f"{'racks/part':>10} {'pairs±':>6}"
    )
    lines.append(header)
    for t in report.topics:
        m = t.metrics
        rep = m.replicas_per_broker
        led = m.leaders_per_broker
        diversity = ",".join(f"{k}:{v}" for k, v in sorted(m.rack_diversity.items()))
        lines.append(
            f"{t.topic[:28]:<28} {t.partitions:>5} {t.replication_factor:>2} "
            f"{min(rep.values(), default=0):>5}-{max(rep.values(), default=0):<6} "
            f"{'' if t.best_replica_spread is None else t.best_replica_spread:>4} "
            f"{min(led.values(), default=0):>5}-{max(led.values(), default=0):<6} "
            f"{diversity:>10} {m.pair_spread:>6}"
        )
    c = report.cluster
    lines.append(
        f"cluster: replicas/broker spread {c.replica_spread}, leaders/broker spread {c.leader_spread}, "
        f"replicas/rack spread {c.rack_replica_spread}, leaders/rack spread {c.rack_leader_spread}"
    )
    findings = report.findings
    lines.append(f"findings: {len(findings)}")
    lines.extend(f"  - {f}" for f in findings)
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    check_connection(settings)
    snapshot = take_snapshot(settings, _topics(args.topic), args.client)
    report = audit(snapshot, _topics(args.topic))
    if args.json:
        print(json.dumps(report.summary(), indent=2, sort_keys=True))
    else:
        print(format_report(report))
    sys.stdout.flush()
    return 1 if args.fail_on_findings and report.findings else 0
