"""soak/stacks.py: the stacks of a stuck member process, taken from a real process blocked in C."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafka_placement.soak.stacks import dump_stacks

# a member stand-in: registers the dump signal as member_process.main does, then blocks a thread in C
_STUCK = """
import faulthandler, sys, threading, time
from kafka_placement.soak.stacks import DUMP_SIGNAL
faulthandler.register(DUMP_SIGNAL, all_threads=True)
lock = threading.Lock(); lock.acquire()
def blocked_in_c():
    lock.acquire()
threading.Thread(target=blocked_in_c, name="stuck", daemon=True).start()
print("ready", flush=True)
time.sleep(60)
"""


def _stuck_process(tmp_path: Path) -> tuple[subprocess.Popen[str], Path]:
    stderr = tmp_path / "member-m.stderr"
    with stderr.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-c", _STUCK], stdout=subprocess.PIPE, stderr=err, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc, stderr


def test_a_stuck_member_dumps_its_python_threads_and_gdb_its_native_ones(tmp_path: Path) -> None:
    proc, stderr = _stuck_process(tmp_path)
    try:
        dumps = dump_stacks({"m": proc, "gone": proc}, ["m"], tmp_path)
        deadline = time.monotonic() + 10
        while "blocked_in_c" not in stderr.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait(10)
    assert [d.member for d in dumps] == ["m"] and dumps[0].python
    text = stderr.read_text()
    assert "blocked_in_c" in text and "Thread" in text  # faulthandler: every thread, the blocked one too
    if shutil.which("gdb") is None:
        assert dumps[0].native == "gdb is not installed"
    else:
        native = (tmp_path / "member-m.stacks").read_text()
        assert dumps[0].native.startswith("member-m.stacks")
        # the blocked thread waits in libc's lock, named even without the interpreter's symbols
        assert "Thread 2" in native or "ptrace" in native, native[:2000]


def test_members_not_running_are_left_alone_and_a_missing_debugger_is_said(tmp_path: Path) -> None:
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait(10)
    proc, _stderr = _stuck_process(tmp_path)
    try:
        dumps = dump_stacks(
            {"ended": ended, "m": proc}, ["ended", "m", "unknown"], tmp_path, gdb="/nonexistent/gdb"
        )
    finally:
        proc.kill()
        proc.wait(10)
    assert [(d.member, d.python) for d in dumps] == [("m", True)]
    assert dumps[0].native.startswith("gdb could not run")
    assert not (tmp_path / "member-m.stacks").exists()


def test_a_java_member_gets_sigquit_not_the_python_signal(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """SIGUSR1 ends a JVM (seed 49: both Java members died at the drain); HotSpot dumps its threads on
    SIGQUIT and goes on."""
    import signal
    from types import SimpleNamespace

    from kafka_placement.soak import stacks

    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(stacks.os, "kill", lambda pid, sig: sent.append((pid, sig)))
    procs = {
        "jv-high": SimpleNamespace(pid=101, args=["/usr/bin/java", "-cp", "x", "Main"], poll=lambda: None),
        "kp-high": SimpleNamespace(pid=102, args=[sys.executable, "-m", "member"], poll=lambda: None),
    }
    dumps = stacks.dump_stacks(procs, ["jv-high", "kp-high"], tmp_path, gdb="/nonexistent-gdb", timeout_s=1)
    assert sent == [(101, signal.SIGQUIT), (102, stacks.DUMP_SIGNAL)]
    assert [(d.member, d.python) for d in dumps] == [("jv-high", False), ("kp-high", True)]
