"""Checks of an assignment against KIP-54's definitions (used by tests, benchmarks and conformance runs).

Independent of how the assignment was computed: they only read the input and the result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kafka_placement.vocabulary import Member, TopicPartition


def problems(
    partitions_per_topic: Mapping[str, int],
    members: Mapping[str, Member],
    result: Mapping[str, Sequence[TopicPartition]],
) -> list[str]:
    """Every way ``result`` is not a valid, KIP-54-balanced sticky assignment (empty list = none).

    Valid: every member present and nothing else; each list sorted; only existing partitions of
    subscribed topics; no partition twice; every partition of a subscribed topic assigned.
    Balanced (KIP-54): sizes differ by at most one, or no member A with two or more fewer partitions
    than member B subscribes to the topic of any partition B holds.
    """
    found: list[str] = []
    if set(result) != set(members):
        found.append(f"members {sorted(set(members) ^ set(result))} missing or extra")
        return found
    seen: dict[TopicPartition, str] = {}
    for member_id, tps in result.items():
        if list(tps) != sorted(tps):
            found.append(f"{member_id}: list not sorted")
        subscribed = set(members[member_id].topics)
        for tp in tps:
            if tp.topic not in subscribed:
                found.append(f"{member_id}: got {tp} of a topic it does not subscribe to")
            if not 0 <= tp.partition < partitions_per_topic.get(tp.topic, 0):
                found.append(f"{member_id}: got {tp} which does not exist")
            if tp in seen:
                found.append(f"{tp} assigned to both {seen[tp]} and {member_id}")
            seen[tp] = member_id
    wanted = {t for m in members.values() for t in m.topics}
    for topic in sorted(wanted):
        for p in range(partitions_per_topic.get(topic, 0)):
            if TopicPartition(topic, p) not in seen:
                found.append(f"{TopicPartition(topic, p)} subscribed but unassigned")
    found.extend(balance_problems(members, result))
    return found


def balance_problems(
    members: Mapping[str, Member], result: Mapping[str, Sequence[TopicPartition]]
) -> list[str]:
    """KIP-54 balance: pairs (A, B) with |A| <= |B| - 2 where A could take one of B's partitions."""
    found: list[str] = []
    sizes = {m: len(v) for m, v in result.items()}
    if not sizes or max(sizes.values()) - min(sizes.values()) <= 1:
        return found
    held_topics = {m: {tp.topic for tp in v} for m, v in result.items()}
    for b, b_topics in held_topics.items():
        for a, member in members.items():
            if sizes[a] <= sizes[b] - 2:
                common = b_topics.intersection(member.topics)
                if common:
                    found.append(
                        f"unbalanced: {a} ({sizes[a]}) could take a partition of {sorted(common)[0]} "
                        f"from {b} ({sizes[b]})"
                    )
    return found


def kept(
    previous: Mapping[str, Sequence[TopicPartition]], result: Mapping[str, Sequence[TopicPartition]]
) -> int:
    """How many partitions stay with the member that had them in ``previous``."""
    return sum(len(set(previous.get(m, ())).intersection(v)) for m, v in result.items())
