"""``python -m kafka_placement.testing up|down|status|env|start-broker`` — kept as an alias of
``kafka-placement cluster ...`` (see :mod:`kafka_placement.cli.cluster`)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from kafka_placement.cli import main as cli_main

    return cli_main(["cluster", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
