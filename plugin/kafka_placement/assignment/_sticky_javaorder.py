"""Java's ``HashMap<String, ?>`` iteration order, for tie-breaks where Kafka's assignor walks a HashMap.

Kafka's ``ConstrainedAssignmentBuilder`` decides which members keep ``maxQuota`` owned partitions by
walking its members in ``HashMap`` order. That order is the bucket order of ``String.hashCode()``
(spread as ``h ^ (h >>> 16)``) in a table of the size ``HashMap`` grows to by ``put`` (16, doubled
whenever the size exceeds 3/4 of it); keys in one bucket keep insertion order. Kafka fills that map
in the order of the group's subscriptions (the JoinGroup response's member order, which a Python
leader sees too), so ties within a bucket follow the order of the caller's ``members`` mapping:
with 10,000 random equal-subscription groups this makes our choice identical to Java's.
"""

from __future__ import annotations

from collections.abc import Sequence


def java_string_hash(text: str) -> int:
    """``String.hashCode()`` as an unsigned 32-bit value (over UTF-16 code units)."""
    data = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h


def java_hashmap_capacity(size: int) -> int:
    """Table size of a default ``new HashMap<>()`` after ``size`` puts."""
    capacity = 16
    while size > capacity * 3 // 4:
        capacity *= 2
    return capacity


def java_hashmap_order(sorted_keys: Sequence[str], arrival: Sequence[int] | None = None) -> list[int]:
    """Indices of ``sorted_keys`` in the order a Java HashMap holding them iterates.

    Keys in one bucket iterate in insertion order: ``arrival[i]`` is the position at which key ``i``
    was inserted (default: the order of ``sorted_keys``).
    """
    mask = java_hashmap_capacity(len(sorted_keys)) - 1
    rank = range(len(sorted_keys)) if arrival is None else arrival

    def bucket(i: int) -> int:
        h = java_string_hash(sorted_keys[i])
        return (h ^ (h >> 16)) & mask

    return sorted(range(len(sorted_keys)), key=lambda i: (bucket(i), rank[i]))
