"""``kafka-placement client-assignor``: the failover assignor for Java consumers on the classic group
protocol.

Writes ``kafka-placement-client-<version>.jar`` into ``--out`` — ``io.kafkaplacement.client.FailoverAssignor``
(protocol name ``failover``) and ``PriorityAssignor`` (``priority``), compiled against the published
``kafka-clients`` jar of the Kafka client version you name (fetched from Maven Central with ``mvn`` once;
needs a JDK 17+) — and prints a member's consumer settings. Put the jar on the consumer's class path beside
that ``kafka-clients``. Java and kafka-placement's Python failover members share one group: same rule, same
userData.

``--migration-ready``: the member is ready to move its group to the consumer protocol (docs/migration.md); its
``client.rack`` then carries the priority (``<rack>#priority=<n>``), where the broker's failover assignor
reads it.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafka_placement.java_build import add_jar_options


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "client-assignor",
        help="build the Java consumer's failover assignor jar for a Kafka client version and print its "
        "settings",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_jar_options(parser, "the consumers' kafka-clients version (4.0.0 or newer), e.g. 4.4.0")
    parser.add_argument(
        "--priority",
        type=int,
        default=None,
        metavar="N",
        help="show the settings of a member with this priority (default: a placeholder)",
    )
    parser.add_argument("--rack", default=None, help="and this real rack (Kafka's client.rack)")
    parser.add_argument(
        "--migration-ready",
        action="store_true",
        help="the member advertises its priority in client.rack, ready to move to the consumer protocol",
    )
    parser.add_argument(
        "--name",
        choices=("failover", "priority"),
        default="failover",
        help="the protocol name the group's members share (default: failover)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from kafka_placement.broker_plugin.kafka_version import check_kafka_version
    from kafka_placement.broker_plugin.settings import properties_text
    from kafka_placement.cli.files import check_writable_dir
    from kafka_placement.client_assignor.build import NEEDS, build_jar, consumer_settings
    from kafka_placement.java_build import deliver_jar

    version = check_kafka_version(args.kafka_version, needs=NEEDS)
    settings = consumer_settings(
        0 if args.priority is None else args.priority,
        rack=args.rack,
        migration_ready=args.migration_ready,
        protocol_name=args.name,
    )
    if args.priority is None:  # a placeholder where the number goes
        settings["failover.priority"] = "<n>"
        if "client.rack" in settings:
            settings["client.rack"] = f"{args.rack or ''}#priority=<n>"
    check_writable_dir(args.out, "--out")

    target = deliver_jar(
        "client-assignor", "kafka-clients", version, args.out, "kafka-placement-client", build_jar
    )

    print(f"# kafka-placement failover assignor for Apache Kafka clients {version}: {target}")
    print(
        f"# put the jar on the consumer's class path beside kafka-clients {version}; a failover member's "
        "consumer settings:"
    )
    print(properties_text(settings), end="")
    if args.migration_ready and args.rack:
        print(
            "# client.rack carries the priority: for fetch-from-follower the brokers need "
            "replica.selector.class=io.kafkaplacement.broker.RackPriorityReplicaSelector (broker-plugin)"
        )
    return 0
