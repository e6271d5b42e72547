"""cli/progress.py: the one progress display of every subcommand."""

from __future__ import annotations

import io
import re
import threading
import time

import pytest

from kafka_placement.cli.progress import Activity, Progress, warning


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


def test_an_activity_off_a_terminal_is_a_start_and_an_end_line() -> None:
    stream = io.StringIO()
    with Activity("starting Spark (local[2])", stream) as activity:
        activity.note = "its output: /tmp/x.log"
    lines = stream.getvalue().splitlines()
    assert lines[0] == "  starting Spark (local[2]) …"
    done = r"  starting Spark \(local\[2\]\): done in \d+\.\ds — its output: /tmp/x\.log"
    assert re.fullmatch(done, lines[1])
    assert len(lines) == 2


def test_a_failed_activity_leaves_the_report_to_its_caller() -> None:
    stream = io.StringIO()
    with pytest.raises(RuntimeError), Activity("planning", stream):
        raise RuntimeError("boom")
    assert stream.getvalue() == "  planning …\n"


def test_an_activity_on_a_terminal_redraws_one_line_with_the_polled_note() -> None:
    stream = _Tty()
    polled = threading.Event()

    def poll() -> str:
        polled.set()
        return "stage 3: 2/4 tasks"

    with Activity("planning", stream, poll=poll, interval_s=0.01):
        assert polled.wait(30)
        time.sleep(0.05)
    text = stream.getvalue()
    assert "\r" in text and "stage 3: 2/4 tasks" in text
    assert text.count("\n") == 1 and re.search(r"  planning: done in \d+\.\ds\n$", text)


def test_a_warning_clears_a_live_line_and_stands_on_its_own() -> None:
    stream = _Tty()
    bar = Progress("moving", 4, stream, min_interval_s=0)
    bar.update(2)
    warning("CSV column 'size' holds only digits", stream)
    bar.finish()
    lines = stream.getvalue().split("\n")
    shown = [line.rsplit("\r", 1)[-1] for line in lines]  # what a terminal shows after the redraws
    assert "warning: CSV column 'size' holds only digits" in shown
