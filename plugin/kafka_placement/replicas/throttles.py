"""Replication throttles of a reassignment, computed the way ``kafka-reassign-partitions`` does.

Sans-I/O: given the proposed replica lists, the current ones and the reassignments already in flight,
which replicas are *moving* (sources → destinations), which topic throttle lists follow from that
(``leader.replication.throttled.replicas``: every source, ``follower.replication.throttled.replicas``:
every destination that is not a source, each ``"partition:broker"`` in ``TreeSet<String>`` order) and
which brokers take part (they get the byte rates). Semantics of ``ReassignPartitionsCommand``'s
``calculateProposedMoveMap``, ``calculateLeaderThrottles``, ``calculateFollowerThrottles`` and
``calculateReassigningBrokers``; an in-flight reassignment keeps its original sources, so a throttle
resubmitted with ``--additional`` still throttles the replicas that are copying.

Rates are parsed here too (``50MB/s``, ``10MiB``, plain bytes), bounded to Java's ``long``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.java import java_sorted
from kafka_placement.vocabulary import TopicPartition

#: Broker configs (dynamic, per broker id): bytes/s for leaders sending / followers fetching
#: throttled replicas, and for moves between log dirs of one broker.
LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LOG_DIR_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"
BROKER_THROTTLES = (LEADER_RATE, FOLLOWER_RATE, LOG_DIR_RATE)
#: Topic configs: which replicas the rates apply to.
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
TOPIC_THROTTLES = (LEADER_REPLICAS, FOLLOWER_REPLICAS)

JAVA_LONG_MAX = 2**63 - 1


@dataclass(frozen=True)
class OngoingReassignment:
    """A partition being reassigned, as ``ListPartitionReassignments`` reports it: ``replicas`` is the
    union of old and new lists while copying."""

    replicas: tuple[int, ...]
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()

    @property
    def original(self) -> tuple[int, ...]:
        """The replica list before the move (what a cancel restores): ``replicas`` without ``adding``."""
        return tuple(b for b in self.replicas if b not in set(self.adding))


@dataclass(frozen=True)
class Movement:
    """Replicas that copy from (``sources``) and to (``destinations``) for one partition."""

    sources: frozenset[int]
    destinations: frozenset[int]


def _brokers(value: object, tp: TopicPartition) -> frozenset[int]:
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise InvalidArgumentError(
            f"replicas of {tp.topic}-{tp.partition} must be broker ids, got {value!r:.60}"
        )
    ids = list(value)
    if not all(isinstance(b, int) and not isinstance(b, bool) for b in ids):
        raise InvalidArgumentError(
            f"replicas of {tp.topic}-{tp.partition} must be int broker ids, got {ids!r:.60}"
        )
    return frozenset(ids)


def movement_map(
    proposed: Mapping[TopicPartition, Sequence[int]],
    current: Mapping[TopicPartition, Sequence[int]],
    ongoing: Mapping[TopicPartition, OngoingReassignment] | None = None,
) -> dict[TopicPartition, Movement]:
    """Every moving partition: those in flight (sources = their original replicas, destinations = the
    adding ones), overwritten by the proposal (sources taken from the in-flight move where there is
    one, else from ``current``; destinations = proposed − sources)."""
    moves: dict[TopicPartition, Movement] = {}
    for tp, state in (ongoing or {}).items():
        moves[tp] = Movement(frozenset(state.original), frozenset(state.adding))
    for tp, replicas in proposed.items():
        if tp in moves:
            sources = moves[tp].sources
        elif tp in current:
            sources = _brokers(current[tp], tp)
        else:
            raise InvalidArgumentError(
                f"Trying to reassign a topic partition {tp.topic}-{tp.partition} with 0 replicas"
            )
        moves[tp] = Movement(sources, _brokers(replicas, tp) - sources)
    return moves


def _throttle_lists(
    moves: Mapping[TopicPartition, Movement], brokers_of: Callable[[Movement], Iterable[int]]
) -> dict[str, str]:
    # Java builds one TreeSet<String> per topic of the move map, so a topic can map to "".
    components: dict[str, set[str]] = {tp.topic: set() for tp in moves}
    for tp, move in moves.items():
        components[tp.topic].update(f"{tp.partition}:{b}" for b in brokers_of(move))
    return {topic: ",".join(java_sorted(parts)) for topic, parts in components.items()}


def leader_throttles(moves: Mapping[TopicPartition, Movement]) -> dict[str, str]:
    """Topic → ``leader.replication.throttled.replicas``: ``partition:source`` for every source."""
    return _throttle_lists(moves, lambda m: m.sources)


def follower_throttles(moves: Mapping[TopicPartition, Movement]) -> dict[str, str]:
    """Topic → ``follower.replication.throttled.replicas``: ``partition:dest`` for every destination
    that is not also a source."""
    return _throttle_lists(moves, lambda m: m.destinations - m.sources)


def reassigning_brokers(moves: Mapping[TopicPartition, Movement]) -> list[int]:
    """Brokers taking part in any move (sources and destinations), ascending."""
    return sorted({b for m in moves.values() for b in m.sources | m.destinations})


def moving_partitions(
    proposed: Mapping[TopicPartition, Sequence[int]], current: Mapping[TopicPartition, Sequence[int]]
) -> list[TopicPartition]:
    """Partitions whose replica *set* changes (they copy data), in topic, partition order."""
    return sorted(tp for tp, r in proposed.items() if set(r) != set(current.get(tp, ())))


def bytes_to_copy(
    moves: Mapping[TopicPartition, Movement],
    sizes: Mapping[TopicPartition, int],
    copied: Mapping[tuple[TopicPartition, int], int] | None = None,
) -> int:
    """Bytes still to copy: per destination replica, the partition's size minus what that replica
    already holds (``copied[(tp, broker)]``), never below zero."""
    done = copied or {}
    total = 0
    for tp, move in moves.items():
        size = max(0, int(sizes.get(tp, 0)))
        for b in move.destinations - move.sources:
            total += max(0, size - max(0, int(done.get((tp, b), 0))))
    return total


# ---- rates ----------------------------------------------------------------------------------------
_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "k": 10**3,
    "m": 10**6,
    "g": 10**9,
    "t": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
    "ki": 2**10,
    "mi": 2**20,
    "gi": 2**30,
    "ti": 2**40,
}
_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*(?:/\s*s(?:ec)?)?\s*$", re.IGNORECASE)


def parse_rate(text: str, option: str = "--throttle") -> int:
    """``"50MB/s"`` → 50_000_000 bytes/s; ``"10MiB"`` → 10_485_760; ``"1048576"`` → 1048576.

    Decimal units (kB, MB, GB, TB) are powers of 1000, binary ones (KiB, MiB, GiB, TiB) of 1024; an
    optional ``/s``. Allowed: 1 .. 2^63-1 bytes/s (Java ``long``, what the broker config holds)."""
    if not isinstance(text, str):
        raise InvalidArgumentError(f"{option} must be a rate like 50MB/s, got {text!r}")
    match = _RATE.match(text) if len(text) <= 64 else None
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _UNITS:
        raise InvalidArgumentError(
            f"{option} must be a rate in bytes/s like 50MB/s, 10MiB or 1048576 "
            f"(units B, kB, MB, GB, TB, KiB, MiB, GiB, TiB), got {text!r}"
        )
    number = match.group(1)
    whole, _, frac = number.partition(".")
    scale = _UNITS[unit]
    value = int(whole) * scale + (int(frac) * scale // 10 ** len(frac) if frac else 0)
    if not 1 <= value <= JAVA_LONG_MAX:
        raise InvalidArgumentError(
            f"{option} {text!r} is {value} bytes/s; allowed 1 .. {JAVA_LONG_MAX} bytes/s"
        )
    return value


def human_bytes(n: float) -> str:
    """``1536000`` → ``"1.5 MB"`` (decimal units, like the rates users type)."""
    value = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(value) < 1000 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def human_rate(bytes_per_s: float) -> str:
    return f"{human_bytes(bytes_per_s)}/s"
