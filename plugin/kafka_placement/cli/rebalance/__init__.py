"""``kafka-placement rebalance plan|loads``: load-aware rebalancing (even disk, bytes in/out and
leaders with the fewest bytes copied).

plan    the load model (--loads FILE, or read live with --bootstrap-server) → the reassignment JSON
        on stdout (Kafka's format, as ``reassign plan`` prints it: ``reassign apply --throttle`` runs
        it and writes its rollback) and a per-broker before/after table on stderr; ``--json`` puts
        the summary on stdout instead; ``--report DIR`` writes an HTML report with before/after bars.
loads   read the load model from a live cluster through the Admin API → the loads JSON on stdout.

One module per action: plan.py, loads.py; report.py writes the HTML report.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafka_placement.cli.connection_options import add_connection_arguments
from kafka_placement.cli.reassign.common import client_errors
from kafka_placement.cli.rebalance.loads import DEFAULT_SAMPLE_S, DEFAULT_WINDOW_S, run_loads
from kafka_placement.cli.rebalance.plan import run_plan
from kafka_placement.replicas.loads.goals import DEFAULT_BAND, DEFAULT_CAPACITY_THRESHOLD


def _add_window(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--window",
        type=float,
        default=DEFAULT_WINDOW_S,
        metavar="SECONDS",
        help=f"rates over the last SECONDS (ListOffsets by time; default {DEFAULT_WINDOW_S:g})",
    )
    parser.add_argument(
        "--sample",
        type=float,
        default=DEFAULT_SAMPLE_S,
        metavar="SECONDS",
        help="read consumer groups' committed offsets twice this far apart for bytes out "
        f"(default {DEFAULT_SAMPLE_S:g}; 0: no consumer traffic counted)",
    )


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "rebalance",
        help="load-aware rebalancing: even disk, traffic and leaders, fewest bytes moved",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    plan = sub.add_parser("plan", help="plan a load-aware reassignment")
    add_connection_arguments(plan, help_suffix=" (read the load model from this cluster)")
    plan.add_argument(
        "--loads", metavar="FILE", help="the load model as JSON (offline; see docs/rebalance.md)"
    )
    plan.add_argument(
        "--goals",
        default=None,
        help="soft goals, comma-separated: disk, bytes_in, bytes_out, leader_bytes, leaders (default: these "
        "five), topic_replicas (Cruise Control's TopicReplicaDistributionGoal, its default limits)",
    )
    plan.add_argument(
        "--band",
        type=float,
        default=DEFAULT_BAND,
        help=f"each load within mean × (1 ± BAND) (default {DEFAULT_BAND:g})",
    )
    plan.add_argument(
        "--capacity-threshold",
        type=float,
        default=DEFAULT_CAPACITY_THRESHOLD,
        help=f"no resource above this share of its capacity (default {DEFAULT_CAPACITY_THRESHOLD:g})",
    )
    plan.add_argument(
        "--max-bytes-moved",
        metavar="SIZE",
        help="copy at most this many bytes (10GB, 500MiB, 0 = leadership only)",
    )
    plan.add_argument(
        "--remove-brokers", metavar="IDS", help="brokers to empty before removal (comma-separated)"
    )
    plan.add_argument(
        "--add-brokers", metavar="ID[:RACK],…", help="new, empty brokers to fill (not yet in the load model)"
    )
    plan.add_argument("--json", action="store_true", help="print the summary as JSON on stdout instead")
    plan.add_argument("--report", metavar="DIR", help="write report.html (before/after bars per broker) here")
    _add_window(plan)
    plan.set_defaults(handler=client_errors("read the load model")(run_plan))

    loads = sub.add_parser("loads", help="read the load model from a live cluster (JSON on stdout)")
    add_connection_arguments(loads, required=True)
    _add_window(loads)
    loads.set_defaults(handler=client_errors("read the load model")(run_loads))
