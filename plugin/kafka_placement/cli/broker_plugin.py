"""``kafka-placement broker-plugin``: the failover assignor for the consumer group protocol (KIP-848).

Writes ``kafka-placement-broker-<version>.jar`` into ``--out`` — our ``FailoverServerAssignor`` and
``RackPriorityReplicaSelector``, compiled against the published plugin API jars of the Kafka version
you name (fetched from Maven Central with ``mvn`` once; needs a JDK 17+) — and prints the broker
settings and a member's client settings. Put the jar on every broker's class path (``/opt/kafka/libs``
in the official image) and restart the brokers: ``group.consumer.assignors`` is read at start.

Kafka's own assignors stay first in ``group.consumer.assignors``, so groups that name none keep
``uniform``; only members with ``group.remote.assignor=failover`` get ours. A member's priority rides in
``client.rack`` as ``<rack>#priority=<n>`` (``#priority=<n>`` without a rack); the replica selector
reads the rack before ``#``, so fetch-from-follower keeps working.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafka_placement.java_build import add_jar_options


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "broker-plugin",
        help="build the broker-side failover assignor jar for a Kafka version and print its settings",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_jar_options(parser, "the brokers' Apache Kafka version (4.0.0 or newer), e.g. 4.4.0")
    parser.add_argument(
        "--priority",
        type=int,
        default=None,
        metavar="N",
        help="show the client settings of a member with this priority (default: a placeholder)",
    )
    parser.add_argument("--rack", default=None, help="and this real rack (for fetch-from-follower)")
    parser.add_argument(
        "--session-timeout-ms",
        type=int,
        default=None,
        metavar="MS",
        help="also print settings that lower the consumer-protocol session timeout "
        "(Kafka's default and minimum: 45000) for faster failover",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from kafka_placement.assignment.rack_priority import encode_rack_priority
    from kafka_placement.broker_plugin.build import build_jar
    from kafka_placement.broker_plugin.kafka_version import check_kafka_version
    from kafka_placement.broker_plugin.settings import (
        CONTROLLER_GROUP_LIMITS,
        broker_settings,
        member_settings,
        properties_text,
    )
    from kafka_placement.cli.files import check_writable_dir
    from kafka_placement.errors import InvalidArgumentError
    from kafka_placement.java_build import deliver_jar

    version = check_kafka_version(args.kafka_version)
    if args.priority is not None:
        member = member_settings(args.priority, args.rack)
    else:
        if args.rack is not None:
            encode_rack_priority(args.rack, 0)  # the same rack check as with a priority
        member = member_settings(0, args.rack)
        member["client.rack"] = f"{args.rack or ''}#priority=<n>"
    if args.session_timeout_ms is not None and not 1 <= args.session_timeout_ms <= 3_600_000:
        raise InvalidArgumentError(
            f"--session-timeout-ms must be in [1, 3600000], got {args.session_timeout_ms}"
        )
    check_writable_dir(args.out, "--out")

    target = deliver_jar(
        "broker-plugin", "its plugin API jars", version, args.out, "kafka-placement-broker", build_jar
    )

    print(f"# kafka-placement broker plugin for Apache Kafka {version}: {target}")
    print("# on every broker: put the jar on the class path (e.g. /opt/kafka/libs/), add these lines to")
    print("# server.properties and restart (group.consumer.assignors is read at start)")
    brokers = broker_settings(session_timeout_ms=args.session_timeout_ms)
    print(properties_text(brokers), end="")
    limits = {k: v for k, v in brokers.items() if k in CONTROLLER_GROUP_LIMITS}
    if limits:
        print("# on every KRaft controller too (it checks groups' own consumer.session.timeout.ms)")
        print(properties_text(limits), end="")
    print("# a failover member (Java consumer .properties, librdkafka / confluent-kafka config):")
    print(properties_text(member), end="")
    return 0
