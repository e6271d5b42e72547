"""One differential check per algorithm: random scenario → Java reference vs ours → mismatch or not.

Exact-equality checks (results and, where Java throws, exception class and message to the
letter): ``murmur2``, ``partition-for-key``, ``librdkafka`` (confluent-kafka's helpers),
``range``, ``range-rack`` (KIP-881), ``roundrobin``, ``sticky-equal`` and
``cooperative-sticky-equal`` (equal subscriptions without racks: Java's constrained builder),
``adminutils`` (fixed start index), ``adminutils-random`` (Java's static Random reseeded),
``striped``.

Quality checks for the sticky family, where many answers are right: ours must be valid, never
less balanced (KIP-54 balance score) and never move more partitions than Java on the same input.
``cooperative-sticky`` runs rebalances on each side until its assignment stops changing (KIP-429:
revoke first, then reassign), checks that no partition has two owners at once in any round, and
compares the final states.

The checks live by area — :mod:`.keys`, :mod:`.groups`, :mod:`.placements` — with their outcome types in
:mod:`.outcome`; this module keeps the registry and the loop.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from kafka_placement.conformance import generators
from kafka_placement.conformance.bridge import JavaReference, reference
from kafka_placement.conformance.groups import (
    check_cooperative_sticky,
    check_cooperative_sticky_equal,
    check_range,
    check_range_rack,
    check_roundrobin,
    check_sticky,
    check_sticky_equal,
    check_sticky_rack_equal,
    check_sticky_rack_fresh,
)
from kafka_placement.conformance.keys import check_librdkafka, check_murmur2, check_partition_for_key
from kafka_placement.conformance.outcome import (
    MAX_KEPT_MISMATCHES,
    Agreement,
    AlgorithmResult,
    Check,
    Mismatch,
    OursUnavailable,
    ReferenceAnomaly,
    mismatch_kind,
)
from kafka_placement.conformance.placements import check_adminutils, check_adminutils_random, check_striped

#: Every algorithm the runner knows, in report order.
ALGORITHMS: tuple[str, ...] = (
    "murmur2",
    "partition-for-key",
    "librdkafka",
    "range",
    "range-rack",
    "roundrobin",
    "sticky",
    "sticky-equal",
    "sticky-rack-equal",
    "sticky-rack-fresh",
    "cooperative-sticky",
    "cooperative-sticky-equal",
    "adminutils",
    "adminutils-random",
    "striped",
)

#: The criterion of each quality-checked algorithm (printed by the CLI with the outcome counts).
RULES: dict[str, str] = {
    "sticky": (
        "ours valid; where Java's result is valid: balance score, partitions moved and (KIP-881) "
        "partitions off their consumer's rack each <= Java's"
    ),
    "sticky-rack-fresh": ("equal to Java where KIP-881 rack-aware logic applies; elsewhere the sticky rule"),
    "cooperative-sticky": (
        "rounds to the fixed point: never two owners; ours valid; where Java's rounds stay valid: "
        "final balance score, moves and unassigned partitions each <= Java's"
    ),
}


CHECKS: dict[str, Check] = {
    "murmur2": check_murmur2,
    "partition-for-key": check_partition_for_key,
    "librdkafka": check_librdkafka,
    "range": check_range,
    "range-rack": check_range_rack,
    "roundrobin": check_roundrobin,
    "sticky": check_sticky,
    "sticky-equal": check_sticky_equal,
    "sticky-rack-equal": check_sticky_rack_equal,
    "sticky-rack-fresh": check_sticky_rack_fresh,
    "cooperative-sticky": check_cooperative_sticky,
    "cooperative-sticky-equal": check_cooperative_sticky_equal,
    "adminutils": check_adminutils,
    "adminutils-random": check_adminutils_random,
    "striped": check_striped,
}


def run_algorithm(
    algorithm: str,
    count: int,
    seed: int,
    *,
    ref: JavaReference | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> AlgorithmResult:
    """``count`` seeded scenarios of one algorithm; scenario ``i`` is replayable alone."""
    check = CHECKS[algorithm]
    ref = ref or reference()
    result = AlgorithmResult(algorithm)
    started = time.monotonic()
    for index in range(count):
        try:
            scenario, detail = check(ref, generators.scenario_rng(seed, algorithm, index))
        except OursUnavailable as exc:
            result.unavailable = str(exc)
            break
        result.scenarios += 1
        if isinstance(detail, Agreement):
            result.agreements[detail] = result.agreements.get(detail, 0) + 1
        elif isinstance(detail, ReferenceAnomaly):
            result.reference_anomalies += 1
            if len(result.anomaly_examples) < MAX_KEPT_MISMATCHES:
                result.anomaly_examples.append(Mismatch(algorithm, index, scenario, detail))
        elif detail is not None:
            result.mismatches += 1
            kind = mismatch_kind(detail)
            result.kinds[kind] = result.kinds.get(kind, 0) + 1
            if len(result.examples) < MAX_KEPT_MISMATCHES:
                result.examples.append(Mismatch(algorithm, index, scenario, detail))
        if progress is not None:
            progress(algorithm, index + 1, count)
    result.seconds = time.monotonic() - started
    return result


def run(
    algorithms: Iterable[str] = ALGORITHMS,
    count: int = 200,
    seed: int = 0,
    *,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[AlgorithmResult]:
    ref = reference()
    return [run_algorithm(a, count, seed, ref=ref, progress=progress) for a in algorithms]


def replay(algorithm: str, seed: int, index: int) -> tuple[Any, str | None]:
    """Re-run one scenario (as printed in a mismatch) for debugging."""
    return CHECKS[algorithm](reference(), generators.scenario_rng(seed, algorithm, index))
