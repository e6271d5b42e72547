"""The two waits of a soak that look at the logs while they grow: until every group owns every partition
(before the load starts) and the drain (after it: until every group consumed every acknowledged
record). Each folds the new events of a :class:`~kafka_placement.soak.logtail.LogTail` into running
counts (:class:`Coverage`, :class:`Consumption`: sans-I/O), so a look costs what was written since the
last one, not the whole run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from kafka_placement.errors import ClusterError
from kafka_placement.soak.events import Ack, Consumed, Event, Ownership, RecordId
from kafka_placement.soak.logtail import LogTail

__all__ = ["Consumption", "Coverage", "DrainOutcome", "drain", "wait_owned"]


class Coverage:
    """Which partitions each group's open holdings cover (``group_of``: member → its group)."""

    def __init__(self, group_of: Mapping[str, str]) -> None:
        self._group_of = group_of
        # (member, generation, acquired) → the holding while it is open; a release removes it
        self._open: dict[tuple[str, int, float], Ownership] = {}

    def add(self, events: Iterable[Event]) -> None:
        for event in events:
            if isinstance(event, Ownership):
                key = (event.member, event.generation, event.acquired)
                if event.released is None:
                    self._open[key] = event
                else:
                    self._open.pop(key, None)

    def covered(self) -> dict[str, set[int]]:
        out: dict[str, set[int]] = {group: set() for group in sorted(set(self._group_of.values()))}
        for own in self._open.values():
            out[self._group_of[own.member]].update(own.partitions)
        return out


class Consumption:
    """The acknowledged records and, per group, how many of them it consumed so far (a member may log a
    record before the producer's acknowledgement is logged: either order counts once)."""

    def __init__(self, groups: Iterable[str]) -> None:
        self.acked: set[RecordId] = set()
        self.seen: dict[str, set[RecordId]] = {group: set() for group in groups}
        self._matched: dict[str, int] = dict.fromkeys(self.seen, 0)  # group → |acked ∩ seen|

    def add(self, events: Iterable[Event]) -> None:
        for event in events:
            if isinstance(event, Ack):
                if event.record not in self.acked:
                    self.acked.add(event.record)
                    for group, got in self.seen.items():
                        self._matched[group] += event.record in got
            elif isinstance(event, Consumed):
                got = self.seen.setdefault(event.group, set())
                self._matched.setdefault(event.group, 0)
                if event.record not in got:
                    got.add(event.record)
                    self._matched[event.group] += event.record in self.acked

    def unconsumed(self) -> dict[str, int]:
        return {group: len(self.acked) - self._matched[group] for group in self.seen}

    def progress(self) -> int:
        """Acknowledged records consumed, summed over the groups (grows while any group consumes)."""
        return sum(self._matched.values())


def wait_owned(
    tail: LogTail, group_of: Mapping[str, str], partitions: int, timeout_s: float, pause_s: float = 1.0
) -> None:
    """Until every group's open holdings cover all ``partitions``; :class:`ClusterError` after
    ``timeout_s`` naming how many each group had."""
    coverage = Coverage(group_of)
    deadline = time.monotonic() + timeout_s
    while True:
        coverage.add(tail.poll())
        covered = coverage.covered()
        if all(len(parts) == partitions for parts in covered.values()):
            return
        if time.monotonic() > deadline:
            counts = {g: len(p) for g, p in covered.items()}
            raise ClusterError(
                f"soak groups did not own all {partitions} partitions within {timeout_s:.0f}s: {counts}"
            )
        time.sleep(pause_s)


@dataclass(frozen=True)
class DrainOutcome:
    seconds: float
    ended: str  # "consumed", "stalled" (no progress for stall_s) or "bound" (drain_s passed)
    unconsumed: dict[str, int]  # group → acknowledged records it has not consumed
    #: the stacks taken of the members left with records (:mod:`~kafka_placement.soak.stacks`)
    stacks: tuple[dict[str, object], ...] = ()

    def summary(self) -> dict[str, object]:
        out: dict[str, object] = {"seconds": self.seconds, "ended": self.ended, "unconsumed": self.unconsumed}
        if self.stacks:
            out["stacks"] = list(self.stacks)
        return out


def drain(
    tail: LogTail,
    groups: Iterable[str],
    *,
    bound_s: float,
    stall_s: float,
    note: Callable[[str], None],
    short: Callable[[str], str] = str,
    pause_s: float = 2.0,
) -> DrainOutcome:
    """Until each group consumed every acknowledged record, or no group consumed one more of them for
    ``stall_s``, or ``bound_s`` passed (the verdict then says what is lost). ``short`` names a group in
    the progress notes."""
    consumption = Consumption(groups)
    started = time.monotonic()
    last_progress, last_count = started, -1
    while True:
        consumption.add(tail.poll())
        unconsumed = consumption.unconsumed()
        now = time.monotonic()
        count = consumption.progress()
        if count > last_count:
            last_progress, last_count = now, count
        ended = (
            "consumed"
            if not any(unconsumed.values())
            else "stalled"
            if now - last_progress > stall_s
            else "bound"
            if now - started > bound_s
            else None
        )
        if ended is not None:
            return DrainOutcome(round(now - started, 1), ended, unconsumed)
        note("draining: " + ", ".join(f"{short(g)} {n}" for g, n in unconsumed.items() if n) + " to consume")
        time.sleep(pause_s)
