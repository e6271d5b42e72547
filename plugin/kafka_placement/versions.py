"""The one place that pins the Apache Kafka version.

The offline image, the compose file (via ``python -m kafka_placement.versions``), the harness and
the Java reference classes used by the conformance suite all read it from here.
"""

from __future__ import annotations

import sys

#: Newest 4.x release served by Maven Central when the project was pinned.
KAFKA_VERSION = "4.4.0"
#: Scala binary version of the broker artifact ``org.apache.kafka:kafka_<scala>``.
SCALA_BINARY_VERSION = "2.13"


def main() -> int:
    """Print ``KAFKA_VERSION=…`` lines for shell scripts and compose ``--env-file``."""
    print(f"KAFKA_VERSION={KAFKA_VERSION}")
    print(f"SCALA_BINARY_VERSION={SCALA_BINARY_VERSION}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
