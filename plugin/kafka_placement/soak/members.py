"""The soak's groups and their member processes: which members each group has (client, strategy,
priority), and :class:`Members`, which spawns, signals and closes them, logging each start and end as a
:class:`~kafka_placement.soak.events.Life`.

The quick profile runs :data:`GROUPS` (6 Python processes, what CI has always run); the full profile
:data:`FULL_GROUPS`, which adds every other group we ship: ``fo-cp``, a failover group on the consumer
protocol (the broker plugin assigns; two confluent-kafka members and a Java ``KafkaConsumer``);
``fo-java``, a classic failover group led by a Java ``KafkaConsumer`` with our Java client assignor beside
a kafka-python member; and ``fo-mig``, which moves from the classic to the consumer protocol during the
load (:mod:`~kafka_placement.soak.migration`). They stay out of the quick profile: seven more
processes, two of them JVMs (seconds of startup and ~150 MB each), on the 2-core CI machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from kafka_placement.soak.events import Event, Life
from kafka_placement.soak.java_member import JAVA_CLIENTS, java_command, member_properties

__all__ = [
    "FAILOVER_GROUPS",
    "FULL_GROUPS",
    "GROUPS",
    "Groups",
    "Members",
    "active_members",
    "failover_groups",
]

Groups = dict[str, list[tuple[str, str, str, int]]]

#: group → [(member, client, strategy, priority)]; client ``confluent-consumer`` is a confluent-kafka
#: consumer on the consumer protocol, ``java-consumer`` / ``java-classic`` a Java KafkaConsumer
#: (:mod:`~kafka_placement.soak.java_member`)
GROUPS: Groups = {
    "fo-kp": [("kp-high", "kafka-python", "failover", 30), ("kp-low", "kafka-python", "failover", 10)],
    "fo-cf": [("cf-high", "confluent", "failover", 30), ("cf-low", "confluent", "failover", 10)],
    "coop": [
        ("coop-a", "confluent", "cooperative-sticky", 0),
        ("coop-b", "confluent", "cooperative-sticky", 0),
    ],
}
FULL_GROUPS: Groups = {
    **GROUPS,
    "fo-cp": [
        ("cp-high", "confluent-consumer", "failover", 30),
        ("cp-java", "java-consumer", "failover", 20),
        ("cp-low", "confluent-consumer", "failover", 10),
    ],
    "fo-java": [("jv-high", "java-classic", "failover", 30), ("jv-low", "kafka-python", "failover", 10)],
    # moves to the consumer protocol member by member during the load (soak/migration.py)
    "fo-mig": [("mig-high", "kafka-python", "failover", 30), ("mig-low", "kafka-python", "failover", 10)],
}
FAILOVER_GROUPS = ("fo-kp", "fo-cf")
#: How long after a member process ended on its own it is started again
RESPAWN_AFTER_S = 5.0


def failover_groups(groups: Groups = GROUPS) -> list[str]:
    """The groups whose members run a failover assignor (client side or the broker's)."""
    return [
        g for g, members in groups.items() if all(strategy == "failover" for _n, _c, strategy, _p in members)
    ]


def active_members(groups: Groups = GROUPS) -> list[str]:
    """Each failover group's active member: its highest priority (our failover assignor gives it every
    partition while it runs). The schedule kills or pauses each at least once, so every run times a
    failover of every failover group."""
    return [max(groups[group], key=lambda member: member[3])[0] for group in failover_groups(groups)]


class Members:
    """The member processes (by name): spawn, kill, pause, resume, close; each logged as :class:`Life`."""

    def __init__(
        self,
        workdir: Path,
        topic: str,
        connection: dict[str, dict[str, Any]],
        session_ms: int,
        prefix: str,
        write: Callable[[Event], None],
        groups: Groups = GROUPS,
        java_class_path: str | None = None,
        migration_ready: Collection[str] = (),
    ) -> None:
        self.workdir, self.topic, self.connection, self.session_ms = workdir, topic, connection, session_ms
        self.prefix, self.write = prefix, write
        self.procs: dict[str, subprocess.Popen[str]] = {}
        #: members whose process ended without being told to (a crash): (name, time, exit code)
        self.exits: list[tuple[str, float, int]] = []
        self._accounted: set[int] = set()  # pids whose end is already logged (killed, closed, crashed)
        self._crashed: set[int] = set()
        #: crashed members to start again: name -> (the crashed process's pid, when)
        self._respawn_at: dict[str, tuple[int, float]] = {}
        #: members started again after a crash: (name, time)
        self.respawns: list[tuple[str, float]] = []
        self._closing = False
        # the process table: spawn (faults thread, migration), watch (its own thread), signal, close_all
        self._lock = threading.RLock()
        self.groups = groups
        self.java_class_path = java_class_path  # needed only when a group has a Java member
        #: members whose classic failover assignor is ready for the move to the consumer protocol
        self.migration_ready = frozenset(migration_ready)
        self.specs = {
            name: (group, client, strategy, prio)
            for group, members in groups.items()
            for name, client, strategy, prio in members
        }

    def group_id(self, group: str) -> str:
        return f"{self.prefix}-{group}"

    def log_path(self, name: str) -> Path:
        return self.workdir / f"member-{name}.jsonl"

    def _command(self, name: str) -> list[str]:
        """The member's command line, its settings written first to a private file (0600: secrets)."""
        group, client, strategy, priority = self.specs[name]
        if client in JAVA_CLIENTS:
            if self.java_class_path is None:
                raise ValueError(f"member {name} is a Java member and no class path was given")
            path = self.workdir / f"member-{name}.properties"
            text = member_properties(client, priority, self.connection[client], self.session_ms)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="latin-1") as f:
                f.write(text)
            return java_command(
                self.java_class_path,
                path,
                self.group_id(group),
                name,
                self.topic,
                self.log_path(name),
                self.session_ms,
            )
        config = {
            "client": client,
            "strategy": strategy,
            "priority": priority,
            "group": self.group_id(group),
            "name": name,
            "topic": self.topic,
            "session_timeout_ms": self.session_ms,
            "connection": self.connection[client],
            "log": str(self.log_path(name)),
            "migration_ready": name in self.migration_ready,
        }
        path = self.workdir / f"member-{name}.json"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # holds the connection secrets
        with os.fdopen(fd, "w") as f:
            json.dump(config, f)
        return [sys.executable, "-m", "kafka_placement.soak.member_process", str(path)]

    def spawn(self, name: str) -> None:
        group = self.specs[name][0]
        command = self._command(name)
        with self._lock:
            replaced = self.procs.get(name)
            if replaced is not None and replaced.stdin is not None:
                # a killed member's process is replaced: its pipe would be left to the garbage collector
                # (pytest reported it as an unclosed file after the soak's live test)
                with contextlib.suppress(OSError):
                    replaced.stdin.close()
            stderr = open(self.workdir / f"member-{name}.stderr", "a")  # noqa: SIM115 - the child owns it
            self.procs[name] = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                text=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
            stderr.close()
            self.write(Life(self.group_id(group), name, True, time.time()))

    def switch(self, name: str, client: str, timeout_s: float = 30.0) -> float:
        """Close ``name`` (it commits and leaves its group) and start it again as ``client``: one step
        of a rolling protocol migration. The seconds its close took (a kill after ``timeout_s``)."""
        proc = self.procs[name]
        with self._lock:
            self._accounted.add(proc.pid)
        started = time.monotonic()
        self._ask_to_close(proc)
        self._reap(name, proc, timeout_s)
        closed_s = time.monotonic() - started
        group, _old, strategy, priority = self.specs[name]
        self.specs[name] = (group, client, strategy, priority)
        self.spawn(name)
        return closed_s

    def watch(self) -> None:
        """Log as stopped any member process that ended on its own (checked by :meth:`watch_until`),
        so the checkers do not count a crashed member as holding its partitions; start it again
        :data:`RESPAWN_AFTER_S` later, as a deployment's supervisor would (seed 40: librdkafka crashed
        one member and its group ran without it for the last 13 minutes) — unless something else
        started it meanwhile (a member fault's undo) or the run is closing."""
        with self._lock:
            now = time.time()
            for name, proc in list(self.procs.items()):
                code = proc.poll()
                if code is not None and proc.pid not in self._accounted:
                    self._accounted.add(proc.pid)
                    self._crashed.add(proc.pid)
                    self.exits.append((name, now, code))
                    self.write(Life(self.group_id(self.specs[name][0]), name, False, now))
                    self._respawn_at[name] = (proc.pid, now + RESPAWN_AFTER_S)
            for name, (pid, at) in list(self._respawn_at.items()):
                if at > now:
                    continue
                del self._respawn_at[name]
                if not self._closing and self.procs[name].pid == pid:
                    self.spawn(name)
                    self.respawns.append((name, time.time()))

    def watch_until(self, stop: threading.Event) -> None:
        while not stop.wait(1.0):
            self.watch()

    def running(self, name: str) -> bool:
        """Whether the member's process runs (a crash not logged yet is logged first)."""
        with self._lock:
            self.watch()
            return self.procs[name].poll() is None

    def signal(self, name: str, sig: signal.Signals, up: bool) -> bool:
        """Send ``sig`` to the member's process and log it ``up`` or not. False, and nothing logged,
        when the process already ended on its own: seed 40 paused and resumed a crashed member, and
        the resume's ``up`` made the checkers count it as running (its standby's right takeover then
        looked like standby consumption); :meth:`watch` logs the crash and starts it again."""
        with self._lock:
            self.watch()  # a crash not logged yet is logged now, before anything else of this member
            proc = self.procs[name]
            if proc.poll() is not None:
                return False
            if sig == signal.SIGKILL:
                self._accounted.add(proc.pid)
            os.kill(proc.pid, sig)
            self.write(Life(self.group_id(self.specs[name][0]), name, up, time.time()))
        if sig == signal.SIGKILL:
            proc.wait(10)
        return True

    def close_all(self, timeout_s: float = 30.0) -> None:
        self.watch()
        with self._lock:
            self._closing = True
            self._accounted.update(proc.pid for proc in self.procs.values())
        for proc in self.procs.values():
            self._ask_to_close(proc)
        deadline = time.monotonic() + timeout_s
        for name, proc in self.procs.items():
            self._reap(name, proc, max(0.1, deadline - time.monotonic()))

    @staticmethod
    def _ask_to_close(proc: subprocess.Popen[str]) -> None:
        """A member closes (commits, leaves its group) on ``close`` read from its stdin."""
        if proc.poll() is None and proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.write("close\n")
                proc.stdin.flush()

    def _reap(self, name: str, proc: subprocess.Popen[str], timeout_s: float) -> None:
        """Wait ``timeout_s`` for a member asked to close (then kill it), and log it stopped unless
        :meth:`watch` already logged it as crashed."""
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        if proc.pid not in self._crashed:
            self.write(Life(self.group_id(self.specs[name][0]), name, False, time.time()))
