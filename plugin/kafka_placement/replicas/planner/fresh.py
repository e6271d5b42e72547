"""Fallback: a fresh balanced placement matched to the current partitions for the largest overlap.

Used when the incremental steps could not meet a quota: the goals are met, the moves are higher
(the plan carries a warning that says so).
"""

from __future__ import annotations

from itertools import combinations

from kafka_placement.replicas.balanced import place_balanced
from kafka_placement.vocabulary import Broker


def matched_fresh(
    brokers: list[Broker], old: list[list[int]], rf: int, surviving: set[int]
) -> list[list[int]]:
    """A balanced placement from scratch, its replica sets matched to the current partitions by
    largest overlap (exact sets first, then sets sharing ``rf-1`` brokers, …)."""
    fresh = [sorted(r) for r in place_balanced(brokers, len(old), rf)]
    free = set(range(len(fresh)))
    result: list[list[int] | None] = [None] * len(old)
    for k in range(rf, 0, -1):
        index: dict[tuple[int, ...], list[int]] = {}
        for i in sorted(free):
            for sub in combinations(fresh[i], k):
                index.setdefault(sub, []).append(i)
        for p, reps in enumerate(old):
            if result[p] is not None:
                continue
            for sub in combinations(sorted(b for b in reps if b in surviving), k):
                candidates = index.get(sub, [])
                while candidates and candidates[-1] not in free:
                    candidates.pop()
                if candidates:
                    i = candidates.pop()
                    free.discard(i)
                    result[p] = fresh[i]
                    break
    leftovers = sorted(free)
    return [r if r is not None else fresh[leftovers.pop()] for r in result]
