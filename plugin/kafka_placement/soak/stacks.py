"""The stacks of member processes that stopped consuming, taken while they are still stuck.

A member that owns partitions and consumes nothing leaves no trace of why in its logs when it is stuck
inside a client library: in a 30-minute run (seed 38, docs/reliability.md) three confluent members went
silent at the same second and stayed so for 13 minutes, their librdkafka logging nothing more while the
others logged every later broker kill; librdkafka 2.16.0 has an open lock-order inversion between a
broker thread and its main thread during a broker failure (librdkafka issue #5476, pull request #5304)
that would look exactly so. Only the threads' stacks, taken before the member is closed, tell.

So when the drain stalls, each Python member of a group with records left gets two dumps into the
soak's work directory (copied into ``--report``):

- its Python threads, written by the member itself to its stderr (``faulthandler``, registered for
  :data:`DUMP_SIGNAL` by the member process: safe even with every thread blocked in C);
- its native threads (``gdb -batch -p PID -ex 'thread apply all bt'``) when gdb is installed: which lock
  a librdkafka thread waits for. librdkafka's wheel is stripped, so internal functions show as
  addresses; the exported ones and libc's lock calls still name themselves.

Java members are left out (their threads are ``jstack``'s matter; none of them stalled so far).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

__all__ = ["DUMP_SIGNAL", "GDB_TIMEOUT_S", "JAVA_DUMP_SIGNAL", "StackDump", "dump_stacks"]

#: The signal a member process dumps its Python threads on (see member_process.main)
DUMP_SIGNAL = signal.SIGUSR1
#: What a JVM member gets instead: HotSpot prints its threads on SIGQUIT and goes on; SIGUSR1, which it
#: does not handle, ended both Java members of the secured soak of session 32 (seed 49) at its drain.
JAVA_DUMP_SIGNAL = signal.SIGQUIT
#: Bound on one gdb attach (a member with ~40 threads takes about a second)
GDB_TIMEOUT_S = 60.0


class _Process(Protocol):
    pid: int
    args: Any

    def poll(self) -> int | None: ...


@dataclass(frozen=True)
class StackDump:
    """What was taken of one member: ``python`` (its threads went to its stderr), ``native`` (the file
    gdb's answer went to, or why there is none)."""

    member: str
    python: bool
    native: str

    def summary(self) -> dict[str, object]:
        return {"member": self.member, "python": self.python, "native": self.native}


def dump_stacks(
    procs: Mapping[str, _Process],
    members: Iterable[str],
    workdir: Path,
    *,
    gdb: str | None = None,
    timeout_s: float = GDB_TIMEOUT_S,
) -> list[StackDump]:
    """Dump the stacks of each of ``members`` (names in ``procs``) whose process still runs. ``gdb``: the
    debugger's path (default: found on PATH; none → Python stacks only)."""
    debugger = gdb if gdb is not None else shutil.which("gdb")
    dumps = []
    for name in members:
        proc = procs.get(name)
        if proc is None or proc.poll() is not None:
            continue
        java = _is_java(proc)
        try:
            os.kill(proc.pid, JAVA_DUMP_SIGNAL if java else DUMP_SIGNAL)
            python = not java
        except OSError:  # it ended meanwhile
            continue
        dumps.append(StackDump(name, python, _native(name, proc.pid, workdir, debugger, timeout_s)))
    return dumps


def _is_java(proc: _Process) -> bool:
    args = getattr(proc, "args", None)
    first = args[0] if isinstance(args, (list, tuple)) and args else str(args or "").split(" ")[0]
    return Path(str(first)).name == "java"


def _native(name: str, pid: int, workdir: Path, debugger: str | None, timeout_s: float) -> str:
    if debugger is None:
        return "gdb is not installed"
    out = workdir / f"member-{name}.stacks"
    command = [debugger, "-batch", "-nx", "-p", str(pid), "-ex", "thread apply all bt"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return f"gdb did not answer within {timeout_s:.0f} s"
    except OSError as exc:
        return f"gdb could not run: {exc}"
    out.write_text(done.stdout + ("\n--- gdb's stderr\n" + done.stderr if done.stderr else ""))
    return out.name if done.returncode == 0 else f"{out.name} (gdb exit {done.returncode})"
