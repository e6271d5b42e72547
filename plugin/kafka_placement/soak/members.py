"""The soak's groups and their member processes: which members each group has (client, strategy,
priority), and :class:`Members`, which spawns, signals and closes them, logging each start and end as a
:class:`~kafka_placement.soak.events.Life`."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafka_placement.soak.events import Event, Life

__all__ = ["FAILOVER_GROUPS", "GROUPS", "Members", "active_members"]

#: group → [(member, client, strategy, priority)]
GROUPS: dict[str, list[tuple[str, str, str, int]]] = {
    "fo-kp": [("kp-high", "kafka-python", "failover", 30), ("kp-low", "kafka-python", "failover", 10)],
    "fo-cf": [("cf-high", "confluent", "failover", 30), ("cf-low", "confluent", "failover", 10)],
    "coop": [("coop-a", "confluent", "cooperative-sticky", 0),
             ("coop-b", "confluent", "cooperative-sticky", 0)],
}
FAILOVER_GROUPS = ("fo-kp", "fo-cf")


def active_members() -> list[str]:
    """Each failover group's active member: its highest priority (our failover assignor gives it every
    partition while it runs). The schedule kills or pauses each at least once, so every run times a
    failover of every failover group."""
    return [max(GROUPS[group], key=lambda member: member[3])[0] for group in FAILOVER_GROUPS]


class Members:
    """The member processes (by name): spawn, kill, pause, resume, close; each logged as :class:`Life`."""

    def __init__(self, workdir: Path, topic: str, connection: dict[str, dict[str, Any]], session_ms: int,
                 prefix: str, write: Callable[[Event], None]) -> None:
        self.workdir, self.topic, self.connection, self.session_ms = workdir, topic, connection, session_ms
        self.prefix, self.write = prefix, write
        self.procs: dict[str, subprocess.Popen[str]] = {}
        #: members whose process ended without being told to (a crash): (name, time, exit code)
        self.exits: list[tuple[str, float, int]] = []
        self._accounted: set[int] = set()  # pids whose end is already logged (killed, closed, crashed)
        self._crashed: set[int] = set()
        self._lock = threading.Lock()
        self.specs = {name: (group, client, strategy, prio)
                      for group, members in GROUPS.items() for name, client, strategy, prio in members}

    def group_id(self, group: str) -> str:
        return f"{self.prefix}-{group}"

    def log_path(self, name: str) -> Path:
        return self.workdir / f"member-{name}.jsonl"

    def spawn(self, name: str) -> None:
        group, client, strategy, priority = self.specs[name]
        config = {"client": client, "strategy": strategy, "priority": priority, "group": self.group_id(group),
                  "name": name, "topic": self.topic, "session_timeout_ms": self.session_ms,
                  "connection": self.connection[client], "log": str(self.log_path(name))}
        path = self.workdir / f"member-{name}.json"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # holds the connection secrets
        with os.fdopen(fd, "w") as f:
            json.dump(config, f)
        replaced = self.procs.get(name)
        if replaced is not None and replaced.stdin is not None:
            # a killed member's process is replaced: its pipe would be left to the garbage collector
            # (pytest reported it as an unclosed file after the soak's live test)
            with contextlib.suppress(OSError):
                replaced.stdin.close()
        stderr = open(self.workdir / f"member-{name}.stderr", "a")  # noqa: SIM115 - the child owns it
        self.procs[name] = subprocess.Popen(
            [sys.executable, "-m", "kafka_placement.soak.member_process", str(path)],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=stderr, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        stderr.close()
        self.write(Life(self.group_id(group), name, True, time.time()))

    def watch(self) -> None:
        """Log as stopped any member process that ended on its own (checked by :meth:`watch_until`),
        so the checkers do not count a crashed member as holding its partitions."""
        with self._lock:
            for name, proc in self.procs.items():
                code = proc.poll()
                if code is not None and proc.pid not in self._accounted:
                    self._accounted.add(proc.pid)
                    self._crashed.add(proc.pid)
                    now = time.time()
                    self.exits.append((name, now, code))
                    self.write(Life(self.group_id(self.specs[name][0]), name, False, now))

    def watch_until(self, stop: threading.Event) -> None:
        while not stop.wait(1.0):
            self.watch()

    def signal(self, name: str, sig: signal.Signals, up: bool) -> None:
        proc = self.procs[name]
        if sig == signal.SIGKILL:
            with self._lock:
                self._accounted.add(proc.pid)
        if proc.poll() is None:
            os.kill(proc.pid, sig)
        self.write(Life(self.group_id(self.specs[name][0]), name, up, time.time()))
        if sig == signal.SIGKILL:
            proc.wait(10)

    def close_all(self, timeout_s: float = 30.0) -> None:
        self.watch()
        with self._lock:
            self._accounted.update(proc.pid for proc in self.procs.values())
        for proc in self.procs.values():
            if proc.poll() is None and proc.stdin is not None:
                try:
                    proc.stdin.write("close\n")
                    proc.stdin.flush()
                except OSError:
                    pass
        deadline = time.monotonic() + timeout_s
        for name, proc in self.procs.items():
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
            if proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()
            if proc.pid not in self._crashed:
                self.write(Life(self.group_id(self.specs[name][0]), name, False, time.time()))
