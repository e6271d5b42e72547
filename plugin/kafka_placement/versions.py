"""The one place that pins the Apache Kafka version.

The offline image, the compose file (via ``python -m kafka_placement.versions``), the harness and
the Java reference classes used by the conformance suite all read it from here.
"""

from __future__ import annotations

import re
import sys

#: Newest 4.x release served by Maven Central when the project was pinned.
KAFKA_VERSION = "4.4.0"
#: Scala binary version of the broker artifact ``org.apache.kafka:kafka_<scala>``.
SCALA_BINARY_VERSION = "2.13"
#: The oldest release the embedded cluster, the broker plugin and the Java client assignor run on: 4.0 made
#: the consumer group protocol (KIP-848) and its server-side assignor interface generally available.
OLDEST_KAFKA_VERSION = "4.0.0"
#: The version matrix (``integration_tests/test_version_matrix_live.py``, behind ``--full``): the newest
#: patch of every 4.x minor up to the pin, as Maven Central's ``org.apache.kafka:kafka_2.13`` metadata listed
#: them when checked (4.0.0-4.0.2, 4.1.0-4.1.2, 4.2.0-4.2.2, 4.3.0-4.3.1, 4.4.0).
KAFKA_VERSION_MATRIX = ("4.0.2", "4.1.2", "4.2.2", "4.3.1", KAFKA_VERSION)

#: No leading zeros: ``4.01.0`` names no image tag or Maven version.
_RELEASE = re.compile(r"(0|[1-9]\d{0,3})\.(0|[1-9]\d{0,3})\.(0|[1-9]\d{0,3})")


def supported_kafka_version(version: object) -> str:
    """``version`` if the embedded cluster can run it: a release ``4.MINOR.PATCH`` from
    :data:`OLDEST_KAFKA_VERSION` up to the pin's minor (any patch of it); else an
    :class:`~kafka_placement.errors.UnsupportedKafkaVersionError` naming the value and that range. Newer
    minors are refused rather than tried: their broker settings and group-coordinator API were not checked."""
    from kafka_placement.errors import UnsupportedKafkaVersionError

    pin_major, pin_minor, _ = (int(part) for part in KAFKA_VERSION.split("."))
    allowed = f"{OLDEST_KAFKA_VERSION} to {pin_major}.{pin_minor}.x"
    match = _RELEASE.fullmatch(version) if isinstance(version, str) else None
    if match is None:
        raise UnsupportedKafkaVersionError(
            f"Kafka version must be a release MAJOR.MINOR.PATCH from {allowed}, got {version!r}"
        )
    major, minor, _ = (int(part) for part in match.groups())
    oldest = tuple(int(part) for part in OLDEST_KAFKA_VERSION.split("."))
    if (major, minor) < oldest[:2] or (major, minor) > (pin_major, pin_minor):
        raise UnsupportedKafkaVersionError(
            f"Kafka version {version} is outside the range the embedded cluster runs: {allowed} "
            f"(the pin is {KAFKA_VERSION}, kafka_placement.versions)"
        )
    return match.string


def main() -> int:
    """Print ``KAFKA_VERSION=…`` lines for shell scripts and compose ``--env-file``."""
    print(f"KAFKA_VERSION={KAFKA_VERSION}")
    print(f"SCALA_BINARY_VERSION={SCALA_BINARY_VERSION}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
