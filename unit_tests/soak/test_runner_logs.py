"""Reading the run's logs: a killed member's torn last line is skipped; an ownership written at acquisition
and again at release is one holding."""

from __future__ import annotations

from pathlib import Path

from kafka_placement.soak.events import Ownership, dump_event
from kafka_placement.soak.runner import read_logs


def test_torn_last_line_and_acquire_release_pairs(tmp_path: Path) -> None:
    held = Ownership("g", "a", 1, (0,), 1.0, None)
    released = Ownership("g", "a", 1, (0,), 1.0, 3.0)
    again = Ownership("g", "a", 2, (0, 1), 3.0, None)
    lines = [dump_event(held), dump_event(released), dump_event(again), '{"ev": "consumed", "gro']
    (tmp_path / "member-a.jsonl").write_text("\n".join(lines))
    (tmp_path / "runner.jsonl").write_text("")
    logs = read_logs(tmp_path)
    assert sorted(logs.ownerships, key=lambda o: o.generation) == [released, again]
    assert logs.consumed == []
