"""Randomized differential runs: Kafka's Java classes vs ours, per algorithm.

Default run: a sample of scenarios per algorithm (all 10,000 in CI). ``pytest --full`` runs
10,000 per algorithm (the same as ``kafka-placement conformance --scenarios 10000``). Every
scenario is replayable from the seed and index printed with a mismatch:
``runner.replay(algorithm, seed, index)``.
"""

from __future__ import annotations

import os

import pytest

from kafka_placement.conformance.bridge import JavaReference
from kafka_placement.conformance.runner import ALGORITHMS, AlgorithmResult, run_algorithm

pytestmark = pytest.mark.conformance

FULL = 10_000
#: CI (CI=true) runs the full 10,000 per algorithm on every change (2 min 25 s of CPU for all 15
#: on the 2-core machine); a developer's default run takes a sample.
SAMPLE = int(
    os.environ.get("KAFKA_PLACEMENT_CONFORMANCE_SAMPLE", FULL if os.environ.get("CI") == "true" else 200)
)
SEED = int(os.environ.get("KAFKA_PLACEMENT_CONFORMANCE_SEED", "20261121"))

#: Mismatches found by this suite and not fixed yet (see test_known_mismatches.py for the minimal
#: cases). Listed so the default run stays honest (XFAIL with the reason in the summary) instead
#: of silently shrinking the sample; remove an entry as soon as the owner fixes it.
KNOWN_MISMATCHES: dict[str, str] = {}


def _assert_clean(result: AlgorithmResult) -> None:
    assert result.unavailable is None, f"our implementation is unavailable: {result.unavailable}"
    assert result.scenarios > 0
    details = "\n".join(str(m) for m in result.examples)
    assert result.mismatches == 0, f"{result.line()}\n{details}"


def _params(count: int) -> list[object]:
    params: list[object] = []
    for algorithm in ALGORITHMS:
        marks = []
        if algorithm in KNOWN_MISMATCHES:
            marks.append(pytest.mark.xfail(reason=KNOWN_MISMATCHES[algorithm], strict=False))
        params.append(pytest.param(algorithm, count, marks=marks, id=algorithm))
    return params


@pytest.mark.parametrize(("algorithm", "count"), _params(SAMPLE))
def test_sample_matches_java(java: JavaReference, algorithm: str, count: int) -> None:
    _assert_clean(run_algorithm(algorithm, count, SEED, ref=java))


@pytest.mark.full
@pytest.mark.parametrize(("algorithm", "count"), _params(FULL))
def test_full_run_matches_java(java: JavaReference, algorithm: str, count: int) -> None:
    result = run_algorithm(algorithm, count, SEED, ref=java)
    print(f"\n{result.line()} ({result.seconds:.1f}s, {result.reference_anomalies} Java anomalies)")
    _assert_clean(result)


# ---- the runner catches wrong implementations (a differential check that cannot fail proves nothing)
def test_runner_catches_a_wrong_replica_order(java: JavaReference, monkeypatch: pytest.MonkeyPatch) -> None:
    import kafka_placement.replicas as replicas

    real = replicas.assign_replicas_to_brokers

    def reversed_followers(*args: object, **kwargs: object) -> dict[int, list[int]]:
        return {p: r[:1] + r[1:][::-1] for p, r in real(*args, **kwargs).items()}  # type: ignore[arg-type]

    monkeypatch.setattr(replicas, "assign_replicas_to_brokers", reversed_followers)
    result = run_algorithm("adminutils", 100, SEED, ref=java)
    assert result.mismatches > 10


def test_runner_catches_a_wrong_message(java: JavaReference, monkeypatch: pytest.MonkeyPatch) -> None:
    import kafka_placement.replicas.striped as striped
    from kafka_placement.errors import InvalidReplicationFactorError

    real = striped.place_striped

    def reworded(*args: object, **kwargs: object) -> list[list[int]]:
        try:
            return real(*args, **kwargs)  # type: ignore[arg-type]
        except InvalidReplicationFactorError as exc:
            raise InvalidReplicationFactorError(str(exc) + "!") from None

    monkeypatch.setattr(striped, "place_striped", reworded)
    result = run_algorithm("striped", 400, SEED, ref=java)
    assert result.mismatches > 0
    assert all("exception differs" in m.detail for m in result.examples)


def test_runner_catches_an_unbalanced_sticky(java: JavaReference, monkeypatch: pytest.MonkeyPatch) -> None:
    import kafka_placement.assignment as assignment

    real = assignment.assign

    def greedy(strategy: str, partitions: object, members: object, **kwargs: object) -> object:
        result = real("range", partitions, members, **kwargs)  # type: ignore[arg-type]
        return result

    monkeypatch.setattr(assignment, "assign", greedy)
    result = run_algorithm("sticky", 100, SEED, ref=java)
    assert result.mismatches > 10
