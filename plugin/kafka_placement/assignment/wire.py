"""Subscriptions on the wire ↔ :class:`Member`, per strategy (no Kafka client imported).

Adapters hand over the decoded ``ConsumerProtocolSubscription`` fields; this module cleans them and
lets the strategy's row (:mod:`~kafka_placement.assignment.strategies`) read what that strategy reads,
the way Java's assignors do.

Nothing here raises on hostile member data: unusable fields are dropped with a warning (see
``userdata``), so one broken member can never take the group leader down.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from kafka_placement.assignment.strategies import strategy
from kafka_placement.assignment.userdata import DEFAULT_GENERATION
from kafka_placement.vocabulary import Member, TopicPartition

log = logging.getLogger(__name__)


def clean_topics(topics: object, member_id: str) -> list[str]:
    """The topic names of a member's subscription; anything else is dropped with a warning."""
    if topics is None:
        return []
    try:
        items = list(topics)  # type: ignore[call-overload]
    except TypeError:
        log.warning(
            "member %s sent topics %r that are not a list; treating it as subscribed to nothing",
            member_id,
            topics,
        )
        return []
    clean = [t for t in items if isinstance(t, str)]
    if len(clean) != len(items):
        log.warning("member %s sent non-string topic names; ignoring them", member_id)
    return clean


def _clean_partitions(owned: Iterable[object], member_id: str) -> list[TopicPartition]:
    clean: list[TopicPartition] = []
    for entry in owned:
        if (
            isinstance(entry, tuple)
            and len(entry) == 2
            and isinstance(entry[0], str)
            and isinstance(entry[1], int)
            and not isinstance(entry[1], bool)
        ):
            clean.append(TopicPartition(entry[0], entry[1]))
        else:
            log.warning("member %s claims an unusable partition %r; ignoring it", member_id, entry)
    return clean


def member_from_subscription(
    name: str,
    member_id: str,
    topics: object,
    user_data: object,
    *,
    owned_partitions: Iterable[object] = (),
    generation_id: object = DEFAULT_GENERATION,
    rack_id: object = None,
    group_instance_id: object = None,
    existing: Mapping[str, int] | None = None,
) -> Member:
    """Build the :class:`Member` a strategy sees from one decoded subscription.

    ``owned_partitions``: flat (topic, partition) pairs from ``OwnedPartitions``; ``existing``:
    partition counts of the topics in metadata — claims on partitions that do not exist (deleted
    topics, shrunk metadata, garbage) are dropped here.
    """
    names = clean_topics(topics, member_id)
    rack = rack_id if isinstance(rack_id, str) and rack_id else None
    instance = group_instance_id if isinstance(group_instance_id, str) else None
    data = strategy(name).read_subscription(
        user_data, lambda: _clean_partitions(owned_partitions, member_id), generation_id, member_id
    )
    owned, generation, priority = data.owned, data.generation, data.priority
    if existing is not None and owned:
        kept = [tp for tp in owned if 0 <= tp.partition < existing.get(tp.topic, 0)]
        if len(kept) != len(owned):
            log.info(
                "member %s claimed %d partitions that no longer exist; dropped",
                member_id,
                len(owned) - len(kept),
            )
        owned = kept
    # duplicates in a claim carry no information; keep the first occurrence
    owned = list(dict.fromkeys(owned))
    return Member(
        names,
        owned=owned,
        generation=generation,
        rack=rack,
        priority=priority,
        group_instance_id=instance,
    )


def subscription_user_data(
    name: str,
    *,
    owned: Iterable[TopicPartition] | None = None,
    generation: int | None = DEFAULT_GENERATION,
    priority: int | None = None,
) -> bytes | None:
    """The userData a member of ``strategy`` sends (``None`` = null userData).

    sticky: Java ``StickyAssignor`` V1 of the last assignment (null before the first one; V0 when
    ``generation`` is None);
    cooperative-sticky: the generation INT32; failover: the priority INT32 (null without one).
    """
    return strategy(name).encode_user_data(owned, generation, priority)
