"""The HTML report draws one bar per holding and one marker per fault; the summary is written beside it."""

from __future__ import annotations

import json
from pathlib import Path

from kafka_placement.soak.events import Ack, Consumed, Fault, Ownership
from kafka_placement.soak.report import write_report
from kafka_placement.soak.verdict import SoakLogs


def test_report_has_a_bar_per_holding_and_a_line_per_fault(tmp_path: Path) -> None:
    logs = SoakLogs()
    logs.add(
        [
            Ack("p", 0, None, None, 0, 0, 1.0),
            Consumed("g", "a", 0, 0, "p", 0, 2.0),
            Ownership("g", "a", 1, (0, 1), 0.5, 5.0),
            Ownership("g", "b", 1, (0, 1), 6.0, None),
            Ownership("h", "c", 1, (0,), 0.5, None),
            Fault("member-kill", "a", 4.0),
            Fault("member-kill-undone", "a", 8.0),
        ]
    )
    html = write_report({"verdict": "held", "faults": []}, logs, tmp_path).read_text()
    assert html.count("<rect") == 3 and html.count("<line") == 2 and "Soak: held" in html
    assert json.loads((tmp_path / "summary.json").read_text())["verdict"] == "held"


def test_the_reassignment_in_flight_is_a_band_from_its_start_to_its_end(tmp_path: Path) -> None:
    logs = SoakLogs()
    logs.add(
        [
            Ack("p", 0, None, None, 0, 0, 0.0),
            Ack("p", 1, None, None, 0, 1, 100.0),
            Ownership("g", "a", 1, (0,), 0.0, None),
        ]
    )
    move = {
        "started_t": 20.0,
        "completed_t": 60.0,
        "completed": True,
        "partitions_moved": 4,
        "drained_broker": 1,
    }
    html = write_report({"verdict": "held", "faults": [], "reassignment": move}, logs, tmp_path).read_text()
    band = next(line for line in html.splitlines() if "reassignment: 4 partitions off broker 1" in line)
    # x = 110 + (t - t0) / span * (1100 - 110 - 10): 20 s of a 100-s run starts at 306, 40 s is 392 wide
    assert 'x="306.0"' in band and 'width="392.0"' in band and "not completed" not in band


def test_a_group_coordinator_outage_is_a_band(tmp_path: Path) -> None:
    logs = SoakLogs()
    logs.add(
        [
            Ack("p", 0, None, None, 0, 0, 0.0),
            Ack("p", 1, None, None, 0, 1, 100.0),
            Ownership("g", "a", 1, (0,), 0.0, None),
        ]
    )
    summary = {"verdict": "held", "faults": [], "coordinator_outages": {"g": [[50.0, 75.0, 25.0]], "h": []}}
    html = write_report(summary, logs, tmp_path).read_text()
    band = next(line for line in html.splitlines() if "coordinator of g offline 25 s" in line)
    assert 'x="600.0"' in band and 'width="245.0"' in band  # 50 s of a 100-s run, 25 s wide
