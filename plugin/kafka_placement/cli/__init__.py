"""The ``kafka-placement`` command.

One module per subcommand (``plan``, ``audit``, ``reassign``, ``demo``, ``conformance``); each
exposes ``register(subparsers)`` that adds its parser and sets ``handler`` to a function
``(argparse.Namespace) -> int``. Heavy imports (Spark, JPype, clients) happen inside handlers so
``kafka-placement --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from kafka_placement import __version__
from kafka_placement.errors import KafkaPlacementError

SUBCOMMAND_MODULES = ("plan", "audit", "reassign", "demo", "conformance", "cluster")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kafka-placement",
        description="Decide and prove where Kafka records, partitions and replicas go.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in SUBCOMMAND_MODULES:
        module = importlib.import_module(f"kafka_placement.cli.{name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except KafkaPlacementError as exc:
        print(f"kafka-placement {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"kafka-placement {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
