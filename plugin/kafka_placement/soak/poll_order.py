"""Jepsen's consumer invariants over the soak's logs (sans-I/O, beside
:mod:`~kafka_placement.soak.invariants`).

Jepsen's Kafka workload (``jepsen.tests.kafka`` in jepsen-io/jepsen, the checker of its Kafka and
Redpanda analyses) derives each partition's *version order* — which record sits at which offset — from
every acknowledged send and every poll, and reports:

- ``inconsistent-offsets``: one offset of a partition seen holding two different records
  (:func:`inconsistent_offsets`);
- ``nonmonotonic-poll``: a consumer whose next record of a partition is at or before the one it read
  last (:func:`poll_anomalies`);
- ``poll-skip``: a consumer whose next record of a partition jumps over offsets the log holds and it
  has not read (:func:`poll_anomalies`).

Jepsen judges the last two per client process and only between reassignments (a rebalance resets the
position to the committed offset, so it drops its memory of a partition on every subscribe/assign).
Here the unit is one *ownership period*: one member process holding one partition without a break, by
its own ownership log — a holding that continues across an incremental (cooperative) reassignment is
one period; a release and a later acquisition (eager revoke + assign, a kill and a restart) start a new
one, which may legitimately begin again at the committed offset. The first record of a period is
therefore never compared with anything.

The soak's topic is plain (no transactions, no compaction), so its offsets hold no invisible control
records: every offset between two the member read is a record it should have read next. Which offsets
exist comes from the acknowledgements, every group's consumption and the topic read back after the run
(:mod:`~kafka_placement.soak.readback`). The members never seek, and ``auto.offset.reset`` acts only on
a position out of range, which a plain topic with no retention deletion during the run never has.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kafka_placement.soak.events import Ack, Consumed, Ownership, RecordId

__all__ = [
    "InconsistentOffset",
    "PollAnomaly",
    "inconsistent_offsets",
    "log_offsets",
    "ownership_periods",
    "poll_anomalies",
]


Placed = Mapping[RecordId, tuple[int, int]]  # the topic read back: record → (partition, offset)
Periods = dict[tuple[str, str, int], list[tuple[float, float]]]


@dataclass(frozen=True)
class InconsistentOffset:
    partition: int
    offset: int
    records: tuple[RecordId, ...]  # sorted; two or more


@dataclass(frozen=True)
class PollAnomaly:
    """Two records one member read in a row from one partition within one ownership period."""

    kind: str  # "nonmonotonic" (went back or repeated) or "skip" (jumped over ``skipped``)
    group: str
    member: str
    partition: int
    offsets: tuple[int, int]  # (read before, read next)
    t: float  # when the second was read
    skipped: tuple[int, ...] = ()  # offsets in the log strictly between the two (first 20)
    skipped_count: int = 0


def _placements(
    acks: Iterable[Ack], consumed: Iterable[Consumed], readback: Placed | None
) -> Iterable[tuple[int, int, RecordId]]:
    """(partition, offset, record) from every source that names one: the producers' acknowledgements
    (an acknowledgement without an offset names none), the members' reads and the topic read back."""
    for ack in acks:
        if ack.offset is not None:
            yield ack.partition, ack.offset, ack.record
    for read in consumed:
        yield read.partition, read.offset, read.record
    for record, (partition, offset) in (readback or {}).items():
        yield partition, offset, record


def inconsistent_offsets(
    acks: Iterable[Ack], consumed: Iterable[Consumed], readback: Placed | None = None
) -> list[InconsistentOffset]:
    """Every (partition, offset) two sources disagree about, sorted: Jepsen's inconsistent offsets."""
    at: dict[tuple[int, int], set[RecordId]] = defaultdict(set)
    for partition, offset, record in _placements(acks, consumed, readback):
        at[(partition, offset)].add(record)
    return [
        InconsistentOffset(partition, offset, tuple(sorted(records)))
        for (partition, offset), records in sorted(at.items())
        if len(records) > 1
    ]


def log_offsets(
    acks: Iterable[Ack], consumed: Iterable[Consumed], readback: Placed | None = None
) -> dict[int, list[int]]:
    """Per partition, the sorted offsets known to hold a record."""
    known: dict[int, set[int]] = defaultdict(set)
    for partition, offset, _record in _placements(acks, consumed, readback):
        known[partition].add(offset)
    return {partition: sorted(offsets) for partition, offsets in known.items()}


def ownership_periods(ownerships: Iterable[Ownership]) -> Periods:
    """(group, member, partition) → the [start, end) periods it held the partition without a break.

    A member writes a new holding whenever its set of partitions changes; with an incremental
    (cooperative) reassignment the old holding's release and the new one's acquisition carry the same
    instant, and a partition in both was never given up: one period. A holding still open (``released``
    None) ends at infinity."""
    spans: Periods = defaultdict(list)
    for own in sorted(ownerships, key=lambda o: o.acquired):
        end = float("inf") if own.released is None else own.released
        for partition in own.partitions:
            held = spans[(own.group, own.member, partition)]
            if held and held[-1][1] == own.acquired:
                held[-1] = (held[-1][0], end)
            else:
                held.append((own.acquired, end))
    return dict(spans)


def _period_of(periods: Sequence[tuple[float, float]], starts: Sequence[float], t: float) -> int:
    """Index of the period holding ``t``; a read outside every period gets one of its own (odd numbers
    between the periods' even ones), so it is compared with nothing read while the partition was held."""
    i = bisect.bisect_right(starts, t) - 1
    if i >= 0 and t < periods[i][1]:
        return 2 * i
    return 2 * i + 1


def poll_anomalies(
    consumed: Iterable[Consumed], ownerships: Iterable[Ownership], offsets: Mapping[int, Sequence[int]]
) -> list[PollAnomaly]:
    """Jepsen's nonmonotonic polls and poll skips (module docstring). ``consumed`` must list each
    member's reads in the order it made them (the order of its own log); ``offsets`` is
    :func:`log_offsets`. A read that no period of its member holds (none in a correct run) is compared
    only with reads made in the same gap."""
    periods = ownership_periods(ownerships)
    starts = {key: [start for start, _end in spans] for key, spans in periods.items()}
    last: dict[tuple[str, str, int, int], tuple[int, int]] = {}  # slot → (last read, highest read)
    found: list[PollAnomaly] = []
    for record in consumed:
        key = (record.group, record.member, record.partition)
        period = _period_of(periods.get(key, []), starts.get(key, []), record.t)
        slot = (*key, period)
        if slot not in last:
            last[slot] = (record.offset, record.offset)
            continue  # the period's first read: it starts wherever the committed offset says
        before, highest = last[slot]
        last[slot] = (record.offset, max(highest, record.offset))
        if record.offset <= before:
            found.append(
                PollAnomaly(
                    "nonmonotonic",
                    record.group,
                    record.member,
                    record.partition,
                    (before, record.offset),
                    record.t,
                )
            )
            continue
        # offsets this period read already (up to its highest) were not missed: after going back, the
        # way forward again is no skip (the step back is reported once, as nonmonotonic)
        known = offsets.get(record.partition, ())
        lo, hi = bisect.bisect_right(known, max(before, highest)), bisect.bisect_left(known, record.offset)
        if hi > lo:
            skipped = tuple(known[lo : min(hi, lo + 20)])
            found.append(
                PollAnomaly(
                    "skip",
                    record.group,
                    record.member,
                    record.partition,
                    (before, record.offset),
                    record.t,
                    skipped,
                    hi - lo,
                )
            )
    return found
