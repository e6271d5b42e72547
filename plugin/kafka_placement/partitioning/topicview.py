"""What a partitioner may know about one topic, client-independent: adapters build it from metadata."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.java import INT_MAX

#: Partitions one :class:`TopicView` may list (far above any real topic; bounds the memory of a view).
MAX_VIEW_PARTITIONS = 1_000_000


def _partition_ids(values: Iterable[int], what: str) -> list[int]:
    """Partition ids of a topic: ints in [0, 2**31-1] (Java int)."""
    ids = list(values)
    for p in ids:
        if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p <= INT_MAX:
            raise InvalidArgumentError(f"{what} must be partition ids in [0, 2147483647], got {p!r:.40}")
    return ids


@dataclass(frozen=True)
class TopicView:
    """``partitions``: every partition id (sorted); ``available``: those with a known leader (sorted, a
    subset); ``leader_racks``: partition → rack of its current leader (missing/None = unknown)."""

    topic: str
    partitions: tuple[int, ...]
    available: tuple[int, ...]
    leader_racks: Mapping[int, str | None] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        topic: str,
        partitions: Iterable[int],
        available: Iterable[int] | None = None,
        leader_racks: Mapping[int, str | None] | None = None,
    ) -> TopicView:
        parts = tuple(sorted(set(_partition_ids(partitions, "partitions"))))
        avail = parts if available is None else tuple(sorted(set(_partition_ids(available, "available"))))
        if not parts:
            raise InvalidArgumentError(f"topic {topic!r} has no partitions (num_partitions must be >= 1)")
        extra = set(avail) - set(parts)
        if extra:
            raise InvalidArgumentError(
                f"available partitions {sorted(extra)} of topic {topic!r} "
                f"are not among its partitions {list(parts)}"
            )
        return cls(topic, parts, avail, dict(leader_racks or {}))

    @classmethod
    def of_count(cls, topic: str, num_partitions: int) -> TopicView:
        """All ``num_partitions`` partitions, all available (at most :data:`MAX_VIEW_PARTITIONS`: a view
        lists its partitions; hash a key against any count with ``partition_key`` instead)."""
        if (
            isinstance(num_partitions, bool)
            or not isinstance(num_partitions, int)
            or not 1 <= num_partitions <= MAX_VIEW_PARTITIONS
        ):
            raise InvalidArgumentError(
                f"num_partitions of a topic view must be an int in [1, {MAX_VIEW_PARTITIONS:,}], "
                f"got {num_partitions!r:.40}"
            )
        parts = tuple(range(num_partitions))
        return cls(topic, parts, parts, {})

    @property
    def num_partitions(self) -> int:
        return len(self.partitions)
