"""``kafka-placement reassign plan|apply|verify|cancel``: minimal-movement reassignments, executed as
safely as ``kafka-reassign-partitions``.

plan    current assignment (live via --bootstrap-server [--command-config FILE], or --current FILE)
        + target brokers (--brokers ids, or id:rack pairs; default: every broker of the cluster)
        → the plan (kafka-reassign-partitions JSON, changed partitions only; stdout unless --output)
        and its cost against the lower bound; a rollback file whenever something moves.
apply   refuse while a reassignment is in flight (unless --additional); save a rollback; throttle
        (--throttle 50MB/s, --replica-alter-log-dirs-throttle); submit; start log-dir moves; wait with
        progress until done or --timeout (exit 1); elect preferred leaders; verify; clear throttles.
        --one-replica-at-a-time: each partition in steps of one new replica, in rounds.
verify  Kafka's status lines for every partition and log-dir move of a plan; exit 1 while anything is
        moving or differs; clears the throttles once nothing is moving (unless --preserve-throttles).
cancel  cancel the plan's moves in flight (--plan FILE) or all (--all): the original replica lists
        come back; throttles cleared.

One module per action: plan.py, apply.py, verify.py, cancel.py; common.py holds what they share.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafka_placement.cli.connection_options import add_connection_arguments
from kafka_placement.cli.reassign.apply import run_apply
from kafka_placement.cli.reassign.cancel import run_cancel
from kafka_placement.cli.reassign.common import client_errors
from kafka_placement.cli.reassign.plan import build_plan, parse_brokers, run_plan
from kafka_placement.cli.reassign.verify import run_verify

__all__ = ["build_plan", "parse_brokers", "register"]

DEFAULT_WAIT_S = 3600.0


def _add_throttle_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--preserve-throttles",
        action="store_true",
        help="leave the throttle configs in place (default: removed once nothing is moving)",
    )


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "reassign",
        help="plan/apply/verify/cancel minimal-movement replica reassignments",
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
        "--scope",
        choices=("topic", "cluster"),
        default="topic",
        help="balance each topic on its own (default) or all partitions of a replication factor together",
    )
    plan.add_argument("--output", metavar="FILE", help="write the plan JSON here (default: stdout)")
    plan.add_argument(
        "--rollback",
        metavar="FILE",
        help="where to save the current lists of the changed partitions (default: beside "
        "--output, else reassign-rollback-<time>.json)",
    )
    plan.add_argument("--json", action="store_true", help="print the plan summary as JSON")
    plan.add_argument(
        "--with-sizes",
        action="store_true",
        help="read partition sizes (describe_log_dirs) and report the bytes the plan copies",
    )
    plan.set_defaults(handler=client_errors("read the current assignment")(run_plan))

    apply = sub.add_parser("apply", help="execute a plan (throttled), wait for it with progress")
    add_connection_arguments(apply, timeout=False)
    apply.add_argument("--plan", required=True, metavar="FILE", help="reassignment JSON to execute")
    apply.add_argument(
        "--throttle",
        metavar="RATE",
        help="replication throttle in bytes/s on the brokers taking part (50MB/s, 10MiB, 1048576)",
    )
    apply.add_argument(
        "--replica-alter-log-dirs-throttle",
        metavar="RATE",
        help="throttle for moves between log dirs of one broker (bytes/s, units as --throttle)",
    )
    apply.add_argument(
        "--additional",
        action="store_true",
        help="execute although other reassignments are in flight (or change their throttle)",
    )
    apply.add_argument(
        "--rollback", metavar="FILE", help="save the current lists here (default: PLAN.rollback-<time>.json)"
    )
    apply.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_WAIT_S,
        metavar="SECONDS",
        help=f"stop waiting after this long, exit 1 (default {DEFAULT_WAIT_S:g}); the move goes on",
    )
    apply.add_argument("--no-wait", action="store_true", help="submit and return; `verify` later")
    apply.add_argument(
        "--one-replica-at-a-time",
        action="store_true",
        help="move each partition in steps that add one new replica and drop one old "
        "(no partition holds more than one extra replica at once); steps run in "
        "rounds, each after the last completes",
    )
    apply.add_argument("--no-elect-leaders", action="store_true", help="skip preferred leader election")
    _add_throttle_options(apply)
    apply.set_defaults(handler=client_errors("apply the reassignment")(run_apply))

    verify = sub.add_parser("verify", help="check a plan against the cluster; clear throttles when done")
    add_connection_arguments(verify)
    verify.add_argument("--plan", required=True, metavar="FILE")
    _add_throttle_options(verify)
    verify.set_defaults(handler=client_errors("verify the reassignment")(run_verify))

    cancel = sub.add_parser("cancel", help="cancel reassignments in flight, restoring the original replicas")
    add_connection_arguments(cancel, timeout=False)
    which = cancel.add_mutually_exclusive_group(required=True)
    which.add_argument("--plan", metavar="FILE", help="cancel this plan's partitions that are still moving")
    which.add_argument("--all", action="store_true", help="cancel every reassignment of the cluster")
    cancel.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="wait this long for the original replica lists to be back (default 300)",
    )
    _add_throttle_options(cancel)
    cancel.set_defaults(handler=client_errors("cancel reassignments")(run_cancel))
