"""``kafka-placement demo`` argument checks (no cluster needed)."""

from __future__ import annotations

import pytest

from kafka_placement.cli import main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--records", "1"], "--records must be in [2, 10,000,000], got 1"),
        (["--partitions", "0"], "--partitions must be in [1, 1000], got 0"),
        (
            ["--bootstrap-servers", "127.0.0.1:1"],
            "cannot connect to 127.0.0.1:1 (PLAINTEXT): connection refused",
        ),
    ],
)
def test_bad_arguments_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kafka-placement demo: error: ")
    assert message in err
