"""Read a load model from a live cluster with kafka-python's admin client (the adapter: it only
gathers; :mod:`kafka_placement.replicas.loads.estimate` turns observations into loads).

DescribeCluster (racks), DescribeTopics (replicas), DescribeLogDirs (replica sizes, future replicas
apart; log dirs' totalBytes), ListOffsets (latest, earliest-local, forTimestamp(now − W)),
ListGroups + OffsetFetch twice ``sample_s`` apart (consumer progress)."""

from __future__ import annotations

import time
from typing import Any

from kafka_placement.clients.kafka_python.admin import brokers as live_brokers
from kafka_placement.clients.kafka_python.admin import snapshot
from kafka_placement.clients.kafka_python.group_reads import (
    OFFSET_FETCH_TRIES,
    fetch_group_offsets,
    forget_coordinators,
    list_groups,
)
from kafka_placement.replicas.loads.estimate import (
    PartitionObservation,
    committed_growth,
    committed_regressions,
)
from kafka_placement.replicas.loads.model import BrokerSpec
from kafka_placement.vocabulary import TopicPartition


def _log_dirs(admin: Any, topics: list[str]) -> tuple[dict[tuple[TopicPartition, int], int], dict[int, int]]:
    sizes: dict[tuple[TopicPartition, int], int] = {}
    totals: dict[int, int] = {}
    for answer in admin.describe_log_dirs(topics):
        broker = int(answer["broker"])
        for log_dir in answer.get("log_dirs", []):
            if log_dir.get("error_code", 0):
                continue
            total = int(log_dir.get("total_bytes", -1) or -1)
            if total > 0:
                totals[broker] = totals.get(broker, 0) + total
            for topic in log_dir.get("topics", []):
                for part in topic.get("partitions", []):
                    if part.get("is_future_key"):
                        continue  # a replica being moved between dirs: its copy is not load
                    key = (TopicPartition(topic["name"], int(part["partition_index"])), broker)
                    sizes[key] = int(part.get("partition_size", 0))
    return sizes, totals


def _offsets(admin: Any, partitions: list[TopicPartition], spec: Any) -> dict[TopicPartition, int]:
    from kafka import TopicPartition as KafkaTopicPartition

    if not partitions:
        return {}
    answer = admin.list_partition_offsets(
        {KafkaTopicPartition(tp.topic, tp.partition): spec for tp in partitions}
    )
    return {TopicPartition(k.topic, k.partition): int(v.offset) for k, v in answer.items()}


def offset_groups(listed: list[Any]) -> tuple[list[str], int]:
    """The ListGroups entries whose progress OffsetFetch reads, and how many share groups were left
    out: a share group (KIP-932) commits no offsets (OffsetFetch answers none for it; its members'
    progress is share-partition state), so reading it twice would only cost requests."""
    names, share = [], 0
    for g in listed:
        if not isinstance(g, dict):
            names.append(g[0])
        elif "share" in (str(g.get("group_type") or "").lower(), str(g.get("protocol_type") or "").lower()):
            share += 1
        else:
            names.append(g["group_id"])
    return sorted(names), share


def _committed(
    admin: Any, groups: list[str], skipped: set[str], pause_s: float = 0.5
) -> tuple[dict[tuple[str, TopicPartition], int], float]:
    """Each group's committed offset of each partition, and when the read ended (monotonic s).

    One OffsetFetch per coordinator, retried as a whole while a coordinator answers with a retriable
    error (so every group's read still ends at the same moment). kafka-python raises on the first
    group- or partition-level error of the batch, so after another error, or the last retry, each
    group is read alone, once (a coordinator down for minutes costs one request per group, not
    retries), and the ones that fail are added to ``skipped`` (a group deleted, or turned into another
    type, between ListGroups and the read)."""
    from kafka.errors import KafkaError

    wanted = [g for g in groups if g not in skipped]
    answers: dict[str, Any] = {}
    if wanted:
        try:
            answers = fetch_group_offsets(admin, wanted, pause_s, OFFSET_FETCH_TRIES)
        except KafkaError:
            forget_coordinators(admin, set(wanted))
            for g in wanted:
                try:
                    answers.update(fetch_group_offsets(admin, [g], pause_s, 1))
                except KafkaError:
                    skipped.add(g)
    offsets: dict[tuple[str, TopicPartition], int] = {}
    for group, answer in answers.items():
        for k, v in answer.items():
            if v.offset is not None and v.offset >= 0:
                offsets[(group, TopicPartition(k.topic, k.partition))] = int(v.offset)
    return offsets, time.monotonic()


def regression_note(
    first: dict[tuple[str, TopicPartition], int],
    second: dict[tuple[str, TopicPartition], int],
    skipped: set[str],
) -> str | None:
    """The note for committed offsets that went backwards or vanished between the two reads (groups
    that could not be read at all have their own note), or None."""
    regressed = [(g, tp) for g, tp in committed_regressions(first, second) if g not in skipped]
    if not regressed:
        return None
    examples = ", ".join(f"{g} {tp.topic}-{tp.partition}" for g, tp in regressed[:5])
    return (
        f"{len(regressed)} committed offsets went backwards or vanished between the two reads, counted as "
        f"no bytes out (an offset reset or deletion, or a coordinator that had just moved answering from "
        f"before its latest commits: sample again to tell): e.g. {examples}"
    )


def read_observations(
    admin: Any, window_s: float, sample_s: float
) -> tuple[list[BrokerSpec], list[PartitionObservation], float, list[str]]:
    """Brokers, partition observations, the seconds measured between the two reads of the committed
    offsets (0 if not sampled), and notes."""
    from kafka.admin import OffsetSpec, OffsetTimestamp

    notes: list[str] = []
    snap = snapshot(admin)
    partitions = sorted(snap.partitions)
    topics = snap.topics()
    sizes, totals = _log_dirs(admin, topics) if topics else ({}, {})
    groups, share_groups = offset_groups(list_groups(admin)) if sample_s > 0 else ([], 0)
    skipped: set[str] = set()
    first, first_read = _committed(admin, groups, skipped)
    since = OffsetTimestamp(int((time.time() - window_s) * 1000))
    latest = _offsets(admin, partitions, OffsetSpec.LATEST)
    earliest = _offsets(admin, partitions, OffsetSpec.EARLIEST_LOCAL)
    window = _offsets(admin, partitions, since)
    if groups:
        time.sleep(max(0.0, sample_s - (time.monotonic() - first_read)))
    second, second_read = _committed(admin, groups, skipped)
    # both reads end with the OffsetFetch (after the same FindCoordinator lookups): the time between
    # their ends is the span the offsets grew over, and it exceeds ``sample_s`` when the ListOffsets
    # reads between them took longer
    sampled_s = second_read - first_read if groups else 0.0
    growth = committed_growth(first, second)
    observations = []
    for tp in partitions:
        replicas = snap.partitions[tp].replicas
        observations.append(
            PartitionObservation(
                tp.topic,
                tp.partition,
                tuple(replicas),
                {b: sizes[(tp, b)] for b in replicas if (tp, b) in sizes},
                latest.get(tp, 0),
                earliest.get(tp, 0),
                window.get(tp),
                growth.get(tp, 0),
            )
        )
    brokers = [
        BrokerSpec(b.id, b.rack, float(totals[b.id]) if b.id in totals else None) for b in live_brokers(admin)
    ]
    if len(totals) < len(brokers):
        notes.append(
            "log dirs' totalBytes not reported by every broker (DescribeLogDirs < v4): "
            "their disk capacity is unknown"
        )
    notes.append("network capacities are not reported by Kafka: give them in a loads file to enforce them")
    if share_groups:
        notes.append(f"{share_groups} share groups not counted in bytes out: they commit no offsets")
    if skipped:
        notes.append(
            f"{len(skipped)} groups' committed offsets could not be read, not counted in bytes out "
            f"(e.g. {sorted(skipped)[:5]})"
        )
    if groups:
        notes.append(
            f"bytes out counts {len(groups)} consumer groups' committed-offset growth over {sampled_s:.1f} s"
        )
    regressed = regression_note(first, second, skipped)
    if regressed:
        notes.append(regressed)
    return brokers, observations, sampled_s, notes
