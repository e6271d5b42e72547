"""soak/members.py: a member process that ended on its own is logged stopped once and started again a
little later (unless something else started it, or the run is closing); a crashed member is neither paused
nor resumed, and the fault that would have done it is logged skipped (seed 40: a paused-then-resumed dead
member was counted as running and its standby's right takeover as standby consumption)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafka_placement.soak import members as members_module
from kafka_placement.soak.events import Event, Fault, Life
from kafka_placement.soak.faults import FaultInjector
from kafka_placement.soak.members import Members
from kafka_placement.soak.restarts import Restarts
from kafka_placement.soak.schedule import PlannedFault

#: a member process that runs until it reads a line or its stdin closes (close_all, a replacement)
WAITS = [sys.executable, "-c", "import sys; sys.stdin.readline()"]


def _members(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, events: list[Event]) -> Members:
    monkeypatch.setattr(members_module, "RESPAWN_AFTER_S", 0.0)
    members = Members(tmp_path, "t", {}, 6000, "px", events.append)
    monkeypatch.setattr(members, "_command", lambda name: WAITS)
    return members


def _crash(members: Members, name: str) -> subprocess.Popen[str]:
    crashed = subprocess.Popen(
        [sys.executable, "-c", "raise SystemExit(3)"], stdin=subprocess.PIPE, text=True
    )
    crashed.wait(30)
    members.procs[name] = crashed
    return crashed


def _lives(events: list[Event]) -> list[tuple[str, bool]]:
    return [(e.member, e.up) for e in events if isinstance(e, Life)]


def test_a_crashed_member_is_logged_stopped_and_started_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[Event] = []
    members = _members(tmp_path, monkeypatch, events)
    crashed = _crash(members, "kp-high")
    try:
        members.watch()
        assert [(name, code) for name, _t, code in members.exits] == [("kp-high", 3)]
        assert members.procs["kp-high"] is not crashed and members.procs["kp-high"].poll() is None
        assert [name for name, _t in members.respawns] == ["kp-high"]
        assert _lives(events) == [("kp-high", False), ("kp-high", True)]
        members.watch()  # nothing more: the crash is logged once, the member started once
        assert len(members.respawns) == 1 and len(_lives(events)) == 2
    finally:
        members.close_all(timeout_s=10)
    assert _lives(events)[-1] == ("kp-high", False)


def test_a_member_started_by_something_else_or_after_the_close_is_not_started_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[Event] = []
    members = _members(tmp_path, monkeypatch, events)
    monkeypatch.setattr(members_module, "RESPAWN_AFTER_S", 60.0)
    _crash(members, "kp-high")
    members.watch()
    members.spawn("kp-high")  # a member fault's undo, before the respawn was due
    started = members.procs["kp-high"]
    monkeypatch.setattr(members_module, "RESPAWN_AFTER_S", 0.0)
    members._respawn_at = {name: (pid, 0.0) for name, (pid, _at) in members._respawn_at.items()}
    members.watch()
    assert members.procs["kp-high"] is started and members.respawns == []
    members.close_all(timeout_s=10)
    _crash(members, "kp-low")
    members.watch()
    assert members.procs["kp-low"].poll() is not None and members.respawns == []  # closing: not again


def test_a_crashed_member_is_neither_paused_nor_resumed_and_the_fault_is_logged_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[Event] = []
    members = _members(tmp_path, monkeypatch, events)
    monkeypatch.setattr(members_module, "RESPAWN_AFTER_S", 60.0)
    _crash(members, "kp-high")
    assert members.signal("kp-high", signal.SIGCONT, up=True) is False
    assert _lives(events) == [("kp-high", False)]  # the crash, logged by the signal's own look; no "up"
    injector = FaultInjector(None, members, None, "t", events.append, Restarts(None, events.append))
    for kind in ("member-pause", "member-kill"):
        assert injector.apply(PlannedFault(0.0, kind, "kp-high", 0.1)) is False
    assert [e.kind for e in events if isinstance(e, Fault)] == ["member-pause-skipped", "member-kill-skipped"]
    assert _lives(events) == [("kp-high", False)]
    members.close_all(timeout_s=10)


def test_a_running_member_is_paused_and_resumed_each_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[Event] = []
    members = _members(tmp_path, monkeypatch, events)
    members.spawn("kp-high")
    try:
        injector = FaultInjector(None, members, None, "t", events.append, Restarts(None, events.append))
        started = time.monotonic()
        assert injector.apply(PlannedFault(0.0, "member-pause", "kp-high", 0.2)) is True
        assert time.monotonic() - started >= 0.2
        assert [e.kind for e in events if isinstance(e, Fault)] == ["member-pause", "member-pause-undone"]
        assert _lives(events) == [("kp-high", True), ("kp-high", False), ("kp-high", True)]
        assert members.procs["kp-high"].poll() is None
    finally:
        members.close_all(timeout_s=10)
