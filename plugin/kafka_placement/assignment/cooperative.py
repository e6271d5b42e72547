"""The cooperative-sticky assignor (KIP-429) on top of the sticky target.

The target is the sticky assignment. A partition that the target gives to member B while another
member still owns it (lists it in ``Member.owned``, whatever its generation or subscription) is left
out of B's assignment in this round: the owner is not assigned it, so it revokes it, and the follow-up
rebalance hands it to B once nobody owns it. So no partition ever has two owners, and the second
round reaches the balance of the sticky target.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from kafka_placement.assignment._sticky_core import (
    build_problem,
    build_racks,
    collect_claims,
    gc_paused,
    materialize,
    validate_inputs,
)
from kafka_placement.assignment.sticky import sticky_owner_array
from kafka_placement.vocabulary import Member, TopicPartition

__all__ = ["assign_cooperative_sticky"]


def assign_cooperative_sticky(
    partitions_per_topic: Mapping[str, int],
    members: Mapping[str, Member],
    *,
    partition_racks: Mapping[TopicPartition, Iterable[str]] | None = None,
) -> dict[str, list[TopicPartition]]:
    """Cooperative-sticky assignment: the sticky target minus partitions still owned by someone else."""
    with gc_paused():
        validate_inputs(partitions_per_topic, members)
        problem = build_problem(partitions_per_topic, members)
        owner = sticky_owner_array(problem, build_racks(problem, partition_racks))
        claims = collect_claims(problem)
        if claims.gid.size:
            # a partition is withheld when any claimant differs from its target owner
            foreign = owner[claims.gid] != claims.member
            withheld = np.unique(claims.gid[foreign])
            owner[withheld] = -1
        return materialize(problem, owner)
