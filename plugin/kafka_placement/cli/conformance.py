"""``kafka-placement conformance``: differential runs against Kafka's own Java classes.

Prints one line per algorithm, ``<algorithm>: scenarios=<N> mismatches=<M>``, then the first
mismatching scenarios (replayable from ``--seed`` and the printed index). Exit status: 0 when every
algorithm ran with no mismatch, 1 on any mismatch or when one of ours could not be imported,
2 when the Java reference is unavailable (run ``scripts/fetch-java-reference.sh``).
"""

from __future__ import annotations

import argparse
import sys
import time

ALGORITHM_HELP = (
    "murmur2, partition-for-key, librdkafka, range, range-rack, roundrobin, sticky, sticky-equal, "
    "cooperative-sticky, cooperative-sticky-equal, adminutils, adminutils-random, striped"
)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an int >= 1, got {text!r}") from None
    if not 1 <= value <= MAX_SCENARIOS:
        raise argparse.ArgumentTypeError(f"expected an int in [1, {MAX_SCENARIOS:,}], got {value}")
    return value


#: Scenarios per algorithm at most (10,000 take about a minute each; this bounds a typo's cost).
MAX_SCENARIOS = 1_000_000


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "conformance",
        help="compare our algorithms with Apache Kafka's Java classes on random scenarios",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--scenarios",
        type=_positive,
        default=1000,
        metavar="N",
        help="scenarios per algorithm (default 1000)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the scenario streams (default 0)")
    parser.add_argument(
        "--only",
        action="append",
        metavar="ALGO",
        help=f"run only this algorithm (repeatable; comma lists allowed): {ALGORITHM_HELP}",
    )
    parser.add_argument("--examples", type=int, default=3, metavar="K", help="mismatches shown per algorithm")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from kafka_placement.conformance.jars import JavaReferenceUnavailable
    from kafka_placement.conformance.runner import ALGORITHMS, RULES, run_algorithm
    from kafka_placement.errors import InvalidArgumentError

    selected: list[str] = []
    for item in args.only or []:
        selected += [name.strip() for name in item.split(",") if name.strip()]
    unknown = [name for name in selected if name not in ALGORITHMS]
    if unknown:
        raise InvalidArgumentError(f"unknown algorithm(s) {', '.join(unknown)}; allowed: {ALGORITHM_HELP}")
    algorithms = selected or list(ALGORITHMS)

    from kafka_placement.conformance.bridge import reference

    try:
        ref = reference()
    except JavaReferenceUnavailable as exc:
        print(f"kafka-placement conformance: Java reference unavailable: {exc}", file=sys.stderr)
        return 2

    last = [time.monotonic()]

    def progress(algorithm: str, done: int, total: int) -> None:
        now = time.monotonic()
        if not args.quiet and (now - last[0] >= 5 or done == total) and total >= 500:
            print(f"  [{algorithm}] {done}/{total}", file=sys.stderr, flush=True)
            last[0] = now

    failed = False
    started = time.monotonic()
    for algorithm in algorithms:
        result = run_algorithm(algorithm, args.scenarios, args.seed, ref=ref, progress=progress)
        print(result.line(), flush=True)
        if result.kinds:
            kinds = ", ".join(
                f"{kind}: {n}" for kind, n in sorted(result.kinds.items(), key=lambda kv: -kv[1])
            )
            print(f"  kinds: {kinds}", flush=True)
        rule = RULES.get(algorithm)
        if rule is not None:
            print(f"  rule: {rule}", flush=True)
        if result.agreements:
            outcomes = ", ".join(
                f"{label}: {n}" for label, n in sorted(result.agreements.items(), key=lambda kv: -kv[1])
            )
            print(f"  outcomes: {outcomes}", flush=True)
        for example in result.examples[: args.examples]:
            print(f"  mismatch (seed {args.seed}) {example}", flush=True)
        if result.reference_anomalies:
            print(
                f"  note: {result.reference_anomalies} scenarios where Java's own result broke an "
                "invariant and ours did not (not counted as mismatches)",
                flush=True,
            )
        failed = failed or not result.ok
    if not args.quiet:
        print(
            f"conformance: {len(algorithms)} algorithms in {time.monotonic() - started:.1f}s", file=sys.stderr
        )
    return 1 if failed else 0
