"""Loads estimated from what the Admin API reports (sans-I/O; the client adapter gathers it).

* **size**: the largest non-future replica's ``DescribeLogDirs`` size (the leader's local log: what a
  new replica copies). Local bytes only: tiered segments are not counted.
* **records/s in**: ``(latest − forTimestamp(now − W)) / W``. ``forTimestamp`` looks records up by
  their timestamp: producer CreateTime unless the topic logs LogAppendTime, so producers with skewed
  clocks or back-dated records skew it; no record since ``now − W`` → 0.
* **bytes per record**: ``size / (latest − earliestLocal)`` — compaction removes records but not
  offsets, so on compacted topics this underestimates; segments deleted by retention take bytes and
  offsets together, so it holds there.
* **bytes in** = records/s × bytes per record; **bytes out** = the consumer groups' committed-offset
  growth over a sample interval × bytes per record, plus the followers' fetches ((RF − 1) × bytes in).
  Consumers that commit rarely, or not at all, are under- or un-counted; a group's partition counts
  only if both reads saw a committed offset for it (see :func:`committed_growth`; those that went
  backwards or vanished are named by :func:`committed_regressions`). The interval is the
  one measured between the two reads, not the one asked for: reading the offsets of a large cluster
  can outlast the requested sample.
* **capacity (disk)**: the sum of the broker's log dirs' ``totalBytes`` (DescribeLogDirs v4+;
  unknown on older brokers); network capacities are not reported by Kafka: give them in a loads file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from kafka_placement.replicas.loads.model import PartitionSpec

Partition = TypeVar("Partition")


@dataclass(frozen=True)
class PartitionObservation:
    """What the adapter read about one partition (offsets from its leader)."""

    topic: str
    partition: int
    replicas: tuple[int, ...]
    sizes: Mapping[int, int]
    latest: int
    earliest_local: int
    window_start: int | None
    committed_growth: int = 0


def committed_growth(
    first: Mapping[tuple[str, Partition], int], second: Mapping[tuple[str, Partition], int]
) -> dict[Partition, int]:
    """Σ over groups of each partition's committed-offset growth between two reads of
    ``(group, partition) → committed offset``. A pair counts only if both reads hold it: a group's
    first commit between the reads has no starting point (its whole offset is not traffic of the
    sample). Each pair's growth is clamped at 0: an offset reset backwards is no negative traffic
    and must not cancel another group's reading of the same partition."""
    growth: dict[Partition, int] = {}
    for key, after in second.items():
        before = first.get(key)
        if before is not None:
            partition = key[1]
            growth[partition] = growth.get(partition, 0) + max(0, after - before)
    return growth


def committed_regressions(
    first: Mapping[tuple[str, Partition], int], second: Mapping[tuple[str, Partition], int]
) -> list[tuple[str, Partition]]:
    """The ``(group, partition)`` pairs of the first read whose committed offset went backwards or
    is missing in the second (in the first read's order): :func:`committed_growth` counts them as no
    traffic. An offset reset or deletion does this, and so does a coordinator just moved that answers
    from before its latest commits until its high watermark catches up: the user is told, not left
    with a silent undercount."""
    return [key for key, before in first.items() if second.get(key, -1) < before]


def estimate_partitions(
    observations: Iterable[PartitionObservation], window_s: float, sample_s: float
) -> tuple[list[PartitionSpec], list[str]]:
    """Partition loads from observations, and notes on what was missing. ``sample_s``: the time
    between the two reads of the committed offsets (0: consumers not sampled)."""
    specs: list[PartitionSpec] = []
    no_size: list[str] = []
    for o in observations:
        size = max(o.sizes.values(), default=0)
        if not o.sizes:
            no_size.append(f"{o.topic}-{o.partition}")
        records = max(0, o.latest - o.earliest_local)
        per_record = size / records if records else 0.0
        start = o.latest if o.window_start is None or o.window_start < 0 else o.window_start
        bytes_in = max(0, o.latest - start) / window_s * per_record if window_s > 0 else 0.0
        consumed = o.committed_growth * per_record / sample_s if sample_s > 0 else 0.0
        bytes_out = consumed + (len(o.replicas) - 1) * bytes_in
        specs.append(
            PartitionSpec(
                o.topic, o.partition, o.replicas, float(size), round(bytes_in, 3), round(bytes_out, 3)
            )
        )
    notes = []
    if no_size:
        notes.append(f"no log-dir size for {len(no_size)} partitions (e.g. {no_size[:5]}): size 0")
    return specs, notes
