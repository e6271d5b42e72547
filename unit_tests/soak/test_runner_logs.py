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


def test_a_member_process_that_ends_on_its_own_is_logged_stopped_once(tmp_path: Path) -> None:
    import subprocess
    import sys

    from kafka_placement.soak.events import Event, Life
    from kafka_placement.soak.runner import Members

    events: list[Event] = []
    members = Members(tmp_path, "t", {}, 6000, "px", events.append)
    crashed = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"], stdin=subprocess.PIPE,
                               text=True)
    crashed.wait(30)
    members.procs["kp-high"] = crashed
    members.watch()
    members.watch()  # logged once
    assert [(name, code) for name, _t, code in members.exits] == [("kp-high", 3)]
    assert [(e.member, e.up) for e in events if isinstance(e, Life)] == [("kp-high", False)]
    members.close_all(timeout_s=5)
    assert [(e.member, e.up) for e in events if isinstance(e, Life)] == [("kp-high", False)]
