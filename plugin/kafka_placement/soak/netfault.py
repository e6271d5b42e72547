"""Network partitions of one broker, applied with iptables on loopback (the rules come from
:mod:`~kafka_placement.soak.partition_rules`; this adapter only runs them).

Safety: every rule carries this process's tag; :meth:`NetworkPartitions.heal` deletes the rules found with
that tag (not a list kept in memory, so a rule whose ``-I`` was interrupted half-way is found too), and it
runs after each fault, in the runner's ``finally``, at interpreter exit (``atexit``) and on SIGTERM (the
handler heals, then raises ``SystemExit`` so the rest of the cleanup runs). Rules of a process that no
longer exists (one SIGKILLed mid-fault) are swept when the next one starts. No other rule is touched.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FrameType
from typing import Any

from kafka_placement.soak.partition_rules import (
    IPTABLES,
    PartitionRules,
    cgroup_v2_path,
    partition_rules,
    rule_tag,
    tagged_rule_deletions,
)
from kafka_placement.testing.engine import pid_alive

__all__ = ["NetworkPartitions", "run_iptables"]

Runner = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


def run_iptables(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=30, check=False)


class NetworkPartitions:
    """Cut a broker off with iptables and heal it; see the module doc for the guarantees."""

    def __init__(
        self, run: Runner = run_iptables, pid: int | None = None, proc_root: Path = Path("/proc")
    ) -> None:
        self._run, self._proc_root = run, proc_root
        self._pid = pid if pid is not None else os.getpid()
        self.tag = rule_tag(self._pid)
        self._lock = threading.RLock()  # re-entrant: the SIGTERM handler may run inside heal()
        self._atexit = False

    def unavailable(self) -> str | None:
        """Why partitions cannot be made here (``None`` when they can): not root, no iptables, or
        ``iptables -w -L -n`` failing (no netfilter in this kernel or namespace)."""
        if os.geteuid() != 0:
            return f"iptables needs root (this process runs as uid {os.geteuid()})"
        if shutil.which(IPTABLES[0]) is None:
            return "no iptables on PATH"
        try:
            done = self._run([*IPTABLES, "-L", "-n"])
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"iptables -L failed: {exc}"
        if done.returncode != 0:
            return f"iptables -L exited {done.returncode}: {done.stderr.strip()[:200]}"
        return None

    def sweep_stale(self) -> int:
        """Delete the tagged rules of processes that no longer exist; how many were deleted."""
        return self._delete_where(lambda pid: pid != self._pid and not pid_alive(pid))

    def cut(self, ports: Sequence[int], container_pid: int | None) -> PartitionRules:
        """Isolate the broker listening on ``ports`` whose container's init process is ``container_pid``
        (its cgroup v2 path is read from /proc; ports only when there is none or the cgroup rule is
        refused). The rules added; on a failure every rule of this process is taken back first."""
        path = None
        if container_pid is not None:
            try:
                path = cgroup_v2_path((self._proc_root / str(container_pid) / "cgroup").read_text())
            except OSError:
                path = None
        rules = partition_rules(ports, path, self.tag)
        self._register()
        with self._lock:
            try:
                for argv in rules.add:
                    done = self._run(argv)
                    if done.returncode != 0:
                        if "--path" in argv:  # no cgroup match here: the port rules (added
                            return partition_rules(ports, None, self.tag)  # first) are in force
                        raise OSError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
            except BaseException:
                self.heal()
                raise
        return rules

    def heal(self) -> int:
        """Delete every rule this process added; how many there were."""
        return self._delete_where(lambda pid: pid == self._pid)

    def left(self) -> list[tuple[str, ...]]:
        """The rules of this process still in force (for checks: empty after :meth:`heal`)."""
        return tagged_rule_deletions(self._listing(), lambda pid: pid == self._pid)

    def _listing(self) -> str:
        done = self._run([*IPTABLES, "-S"])
        if done.returncode != 0:
            raise OSError(f"iptables -S exited {done.returncode}: {done.stderr.strip()}")
        return done.stdout

    def _delete_where(self, remove: Callable[[int], bool]) -> int:
        with self._lock:
            deletions = tagged_rule_deletions(self._listing(), remove)
            for argv in deletions:
                self._run(argv)  # one already gone (another heal) is fine: what counts is left()
            return len(deletions)

    def _register(self) -> None:
        if not self._atexit:
            atexit.register(self._heal_quietly)
            self._atexit = True

    def _heal_quietly(self) -> None:
        with suppress(OSError, subprocess.TimeoutExpired):
            self.heal()

    @contextmanager
    def guarded(self) -> Iterator[NetworkPartitions]:
        """Heal on leaving (normally, by an exception, by Ctrl-C) and on SIGTERM while inside; the
        previous SIGTERM handler is back afterwards. Outside the main thread only the ``finally`` and
        ``atexit`` guard (signal handlers can only be set from the main thread)."""
        self._register()
        previous: Any = None
        in_main = threading.current_thread() is threading.main_thread()

        def on_term(signum: int, frame: FrameType | None) -> None:
            self._heal_quietly()
            if callable(previous):
                previous(signum, frame)
            raise SystemExit(128 + signum)

        if in_main:
            previous = signal.signal(signal.SIGTERM, on_term)
        try:
            yield self
        finally:
            try:
                self.heal()
            finally:
                if in_main:  # None: a handler set outside Python, which cannot be put back
                    signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
