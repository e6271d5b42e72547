"""Partition → consumer: Kafka's group assignors as pure functions, plus failover/priority.

``assign(strategy, partitions_per_topic, members, *, partition_racks=None)`` returns
``{member_id: sorted [TopicPartition]}`` with every member present. Strategies by their Kafka
names: ``range``, ``roundrobin``, ``sticky``, ``cooperative-sticky``, and ``failover`` (alias
``priority``). No Kafka client is imported here; adapters live in ``kafka_placement.clients``.

Imports no Kafka client, no Spark and does no I/O (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kafka_placement.assignment.bulk import collector_paused
from kafka_placement.assignment.inputs import (
    check_members,
    check_partition_racks,
    check_partitions_per_topic,
)
from kafka_placement.assignment.strategies import STRATEGY_TABLE, AssignFunction, Strategy, strategy
from kafka_placement.assignment.strategy_names import StrategyName, parse_strategies, strategy_name
from kafka_placement.vocabulary import Member, TopicPartition

__all__ = [
    "STRATEGIES",
    "STRATEGY_TABLE",
    "AssignFunction",
    "Member",
    "Strategy",
    "StrategyName",
    "TopicPartition",
    "assign",
    "parse_strategies",
    "strategy",
    "strategy_function",
    "strategy_name",
]


#: Every strategy name ``assign`` accepts, Kafka names first.
STRATEGIES: tuple[str, ...] = tuple(STRATEGY_TABLE)

_strategy_row = strategy  # ``assign`` has a parameter of that name


def strategy_function(strategy_or_name: StrategyName) -> AssignFunction:
    """The function behind a strategy name; :class:`UnknownStrategyError` names the allowed ones."""
    return strategy(strategy_or_name).assign_function()


def assign(
    strategy: StrategyName,
    partitions_per_topic: Mapping[str, int],
    members: Mapping[str, Member],
    *,
    partition_racks: Mapping[TopicPartition, Iterable[str]] | None = None,
) -> dict[str, list[TopicPartition]]:
    """Assign the partitions of the subscribed topics to ``members`` with ``strategy``.

    ``partitions_per_topic``: partition count of every topic the cluster knows (subscribed topics
    missing here are skipped, as Java skips topics without metadata); ``members``: member id →
    :class:`Member`; ``partition_racks``: replica racks of each partition (KIP-881; used by range
    and sticky when members carry a rack). Returns every member, each list sorted by
    (topic, partition). Zero members → ``{}``.
    """
    row = _strategy_row(strategy)
    function = row.assign_function()
    counts = check_partitions_per_topic(partitions_per_topic)
    checked_members = check_members(members)
    racks = check_partition_racks(partition_racks)
    with collector_paused(sum(counts.values())):
        raw = function(counts, checked_members, partition_racks=racks)
        # every member, in the caller's order; sorting a million already sorted tuples still costs a
        # million comparisons: lists a strategy returns sorted are taken as they are
        if row.sorted_output:
            return {member_id: raw.get(member_id) or [] for member_id in checked_members}
        return {member_id: sorted(raw.get(member_id) or ()) for member_id in checked_members}
