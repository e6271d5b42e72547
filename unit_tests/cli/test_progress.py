"""cli/progress.py: the one progress display of every subcommand."""

from __future__ import annotations

import io

from kafka_placement.cli.progress import Progress


def test_plain_output_reports_quarters_then_done() -> None:
    stream = io.StringIO()
    bar = Progress("produce", 100, stream)
    for i in range(0, 101, 5):
        bar.update(i)
    bar.finish()
    lines = stream.getvalue().splitlines()
    assert lines[:5] == [f"  produce: {p}% ({p}/100)" for p in (0, 25, 50, 75, 100)]
    assert lines[5].startswith("  produce: done (100/100) in ")
    assert len(lines) == 6


def test_quiet_when_not_a_terminal_and_quarters_are_off() -> None:
    stream = io.StringIO()
    bar = Progress("reassigning", 8, stream, plain_quarters=False)
    for i in range(9):
        bar.update(i, note="3.0 MB left")
    assert stream.getvalue() == ""
    bar.finish("ok")
    assert stream.getvalue().startswith("  reassigning: done (8/8) in ")
    assert stream.getvalue().endswith(" — ok\n")


def test_a_note_rides_on_the_plain_line() -> None:
    stream = io.StringIO()
    Progress("moving", 4, stream).update(1, note="1.0 MB left")
    assert stream.getvalue() == "  moving: 25% (1/4, 1.0 MB left)\n"


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_one_live_line_with_count_rate_and_note() -> None:
    stream = _Tty()
    bar = Progress("moving", 4, stream, unit="part", min_interval_s=0)
    bar.update(1, note="2.0 MB left")
    bar.update(3, note="1.0 MB left")
    bar.finish("ok")
    text = stream.getvalue()
    assert "\r" in text
    assert "3/4" in text and "1.0 MB left" in text and "part/s" in text
    assert text.count("\n") == 1 and text.endswith(" — ok\n")


def test_update_is_clamped_and_close_stops_drawing() -> None:
    stream = _Tty()
    bar = Progress("x", 2, stream)
    bar.update(-5)
    bar.update(99)
    assert bar.done == 2
    bar.close()
    before = stream.getvalue()
    bar.update(1)
    assert stream.getvalue() == before
