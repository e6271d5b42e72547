"""Reading the soak's JSON-lines logs as they grow: each file is read from where the last read stopped,
and only complete lines (ending in a newline) are parsed; a line still being written waits for its
newline. The drain and the start-up wait look at the logs every 1-2 s: reading every file whole each time
made a 30-minute run's checking grow with the square of its length.

Every writer ends each line with a newline, so a last line without one is one a process was killed
while writing (or is still writing): it is never parsed. A member restarted after a kill appends to
the same file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kafka_placement.soak.events import Event, Ownership, parse_event
from kafka_placement.soak.verdict import SoakLogs

__all__ = ["LogTail", "latest_ownerships", "read_logs"]


class _FileTail:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0  # bytes of the file consumed (through the last newline read)

    def read(self) -> list[Event]:
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            chunk = f.read()
        end = chunk.rfind(b"\n")
        if end < 0:
            return []
        self.offset += end + 1
        return [parse_event(line) for line in chunk[:end].decode().split("\n") if line]


class LogTail:
    """Every ``*.jsonl`` file under ``workdir`` (files appear as members start), read incrementally:
    :meth:`poll` returns the events written since the last call and keeps all of them in :attr:`logs`,
    each file's events in the order they were written."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.logs = SoakLogs()
        self._files: dict[Path, _FileTail] = {}

    def poll(self) -> list[Event]:
        new: list[Event] = []
        for path in sorted(self.workdir.glob("*.jsonl")):
            tail = self._files.get(path)
            if tail is None:
                tail = self._files[path] = _FileTail(path)
            new.extend(tail.read())
        self.logs.add(new)
        return new

    def judged(self) -> SoakLogs:
        """Everything read so far, an ownership written at acquisition and again at release counted once
        (:func:`latest_ownerships`)."""
        self.poll()
        logs = self.logs
        return SoakLogs(
            acks=logs.acks,
            ownerships=latest_ownerships(logs.ownerships),
            consumed=logs.consumed,
            committed=logs.committed,
            lives=logs.lives,
            faults=logs.faults,
            healths=logs.healths,
            sessions_lost=logs.sessions_lost,
        )


def latest_ownerships(ownerships: list[Ownership]) -> list[Ownership]:
    """A member writes each holding when it acquires it and again, with ``released``, when it lets it go:
    keep the latest line of each (member, generation, acquired)."""
    latest: dict[tuple[str, int, float], Any] = {}
    for own in ownerships:
        key = (own.member, own.generation, own.acquired)
        if key not in latest or own.released is not None:
            latest[key] = own
    return list(latest.values())


def read_logs(workdir: Path) -> SoakLogs:
    """Every log under ``workdir``, read once (see :class:`LogTail`)."""
    return LogTail(workdir).judged()
