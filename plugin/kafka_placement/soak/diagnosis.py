"""Why a group did not consume an acknowledged record (sans-I/O): the figures that tell a real loss from
a consumer that was only behind.

The lost-record invariant (:func:`~kafka_placement.soak.invariants.lost_records`) cannot tell "never
delivered" from "not consumed before the run ended": both are "acknowledged, not consumed". This module
answers, per group and partition, from what the runner read back after the drain:

- ``in_topic`` / ``not_in_topic``: whether the record is in the topic (a plain consumer with no group read
  every partition from its start to its high watermark) — a record acknowledged but not in the topic was
  lost by the brokers, one in the topic by the group;
- ``consumed_up_to``: the highest offset the group's members logged for the partition, and ``committed``
  and ``high_watermark``: a group whose position stopped short of the high watermark was behind (or
  stuck); one whose position passed the missing offsets skipped them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from kafka_placement.soak.events import Ack, Consumed, RecordId

__all__ = ["unconsumed_report"]


def unconsumed_report(
    acks: Iterable[Ack],
    consumed: Iterable[Consumed],
    groups: Iterable[str],
    in_topic: Mapping[RecordId, tuple[int, int]],
    committed: Mapping[str, Mapping[int, int]],
    high_watermarks: Mapping[int, int],
    *,
    examples: int = 5,
) -> dict[str, Any]:
    """Per group with unconsumed acknowledged records: how many are in the topic and how many not, and
    per partition holding any of them: the count, the first and last missing offset (as acknowledged;
    ``offset_unknown`` counts those acknowledged without one), the highest offset the group consumed,
    its committed offset and the high watermark; plus up to ``examples`` records as
    ``[producer, sequence, partition, offset]``. Groups that missed nothing are left out."""
    acked = {ack.record: ack for ack in acks}
    seen: dict[str, set[RecordId]] = {group: set() for group in groups}
    consumed_up_to: dict[str, dict[int, int]] = defaultdict(dict)
    for record in consumed:
        if record.group in seen:
            seen[record.group].add(record.record)
            top = consumed_up_to[record.group]
            top[record.partition] = max(record.offset, top.get(record.partition, -1))
    out: dict[str, Any] = {}
    for group, got in seen.items():
        missing = sorted(set(acked) - got)
        if not missing:
            continue
        partitions: dict[int, dict[str, Any]] = {}
        for missed in missing:
            ack = acked[missed]
            row = partitions.setdefault(
                ack.partition, {"missing": 0, "first_offset": None, "last_offset": None, "offset_unknown": 0}
            )
            row["missing"] += 1
            if ack.offset is None:  # librdkafka acknowledges some records without an offset
                row["offset_unknown"] += 1
                continue
            first, last = row["first_offset"], row["last_offset"]
            row["first_offset"] = ack.offset if first is None else min(first, ack.offset)
            row["last_offset"] = ack.offset if last is None else max(last, ack.offset)
        for partition, row in partitions.items():
            row["consumed_up_to"] = consumed_up_to[group].get(partition)
            row["committed"] = committed.get(group, {}).get(partition)
            row["high_watermark"] = high_watermarks.get(partition)
        present = sum(1 for missed in missing if missed in in_topic)
        out[group] = {
            "unconsumed": len(missing),
            "in_topic": present,
            "not_in_topic": len(missing) - present,
            "partitions": {str(p): partitions[p] for p in sorted(partitions)},
            "examples": [[r[0], r[1], acked[r].partition, acked[r].offset] for r in missing[:examples]],
        }
    return out
