"""``kafka-placement demo`` argument checks (no cluster needed) and its progress helper."""

from __future__ import annotations

import io

import pytest

from kafka_placement.cli import main
from kafka_placement.cli.demo import Progress


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


def test_progress_plain_output_reports_quarters() -> None:
    stream = io.StringIO()
    bar = Progress("produce", 100, stream)
    for i in range(0, 101, 5):
        bar.update(i)
    bar.finish()
    lines = stream.getvalue().splitlines()
    assert lines[:5] == [f"  produce: {p}% ({p}/100)" for p in (0, 25, 50, 75, 100)]
    assert lines[5].startswith("  produce: done in ")


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_redraws_one_line_on_a_terminal() -> None:
    stream = _Tty()
    bar = Progress("x", 4, stream, width=4)
    bar.update(1)
    bar.update(3)
    bar.finish("ok")
    text = stream.getvalue()
    assert text.count("\n") == 1
    assert "\r  x [#---]  25.0% 1/4" in text and "\r  x [###-]  75.0% 3/4" in text
    assert text.endswith(" — ok\n")
