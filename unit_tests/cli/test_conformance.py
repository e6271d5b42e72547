"""``kafka-placement conformance``: output format, exit status, argument errors."""

from __future__ import annotations

import re

import pytest

from kafka_placement.cli import main

pytestmark = pytest.mark.conformance


@pytest.fixture(autouse=True)
def _java_reference_present() -> None:
    from kafka_placement.conformance.jars import JavaReferenceUnavailable, class_path

    try:
        class_path()
    except JavaReferenceUnavailable as exc:
        pytest.skip(str(exc))


def test_one_line_per_algorithm_and_exit_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["conformance", "--scenarios", "40", "--seed", "3", "--only", "murmur2,range", "--only", "striped"]
    )
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out == [
        "murmur2: scenarios=40 mismatches=0",
        "range: scenarios=40 mismatches=0",
        "striped: scenarios=40 mismatches=0",
    ]


def test_every_algorithm_by_default_in_report_order(capsys: pytest.CaptureFixture[str]) -> None:
    from kafka_placement.conformance.runner import ALGORITHMS

    main(["conformance", "--scenarios", "3", "--quiet"])
    lines = [line for line in capsys.readouterr().out.splitlines() if not line.startswith(" ")]
    assert [line.split(":")[0] for line in lines] == list(ALGORITHMS)
    assert all(re.fullmatch(r"[a-z0-9-]+: scenarios=3 mismatches=\d+", line) for line in lines)


def test_unknown_algorithm_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--only", "rangee"]) == 2
    assert "unknown algorithm(s) rangee; allowed: murmur2" in capsys.readouterr().err


def test_scenarios_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["conformance", "--scenarios", "0"])
    assert "expected an int in [1, 1,000,000], got 0" in capsys.readouterr().err


def test_mismatch_gives_exit_one(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A deliberately wrong 'ours' must be caught: the runner is not a test that cannot fail."""
    import kafka_placement.partitioning as partitioning

    monkeypatch.setattr(partitioning, "murmur2", lambda data: 0)
    assert main(["conformance", "--scenarios", "20", "--only", "murmur2", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert re.search(r"^murmur2: scenarios=20 mismatches=(1\d|20)$", out, re.M)
    assert "mismatch (seed 0) murmur2 #" in out
