"""The load model (sans-I/O): brokers with racks and capacities, partitions with replicas, size and
traffic, held in numpy arrays so a million replicas fit in tens of megabytes.

What a replica carries is declared per goal in :mod:`.load_goals`. ``replicas[0]`` is the preferred
leader: after a reassignment and a preferred-leader election it leads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kafka_placement.errors import InvalidArgumentError, InvalidBrokerError
from kafka_placement.replicas.loads.load_goals import CAPACITY_RESOURCES as CAPACITY_RESOURCES
from kafka_placement.replicas.loads.load_goals import LOAD_GOALS
from kafka_placement.replicas.loads.load_goals import RESOURCES as RESOURCES
from kafka_placement.vocabulary import TopicPartition

#: Columns of the load goals that code about one specific goal names (the disk bound, drain reasons).
DISK, BYTES_IN, BYTES_OUT, LEADER_BYTES_IN, LEADERS = (
    RESOURCES.index(name) for name in ("disk", "bytes_in", "bytes_out", "leader_bytes_in", "leaders")
)
#: Padding of ``replicas`` rows shorter than the widest replica list.
NO_BROKER = -1


@dataclass(frozen=True, eq=False)
class LoadModel:
    """A cluster's brokers and partitions with their loads.

    ``broker_ids[i]``/``racks[i]``/``capacity[i]`` describe broker index ``i`` (capacity in bytes and
    bytes/s for disk, bytes in, bytes out; ``inf`` = unknown). Partition ``p`` is
    ``topics[topic_index[p]]``-``partition[p]``, its replicas are broker *indices*
    ``replicas[p, :rf[p]]`` (preferred leader first, ``NO_BROKER`` beyond ``rf[p]``) and it holds
    ``size[p]`` bytes, takes ``bytes_in[p]`` and serves ``bytes_out[p]`` bytes/s (leader only)."""

    broker_ids: np.ndarray
    racks: tuple[str | None, ...]
    capacity: np.ndarray
    topics: tuple[str, ...]
    topic_index: np.ndarray
    partition: np.ndarray
    replicas: np.ndarray
    rf: np.ndarray
    size: np.ndarray
    bytes_in: np.ndarray
    bytes_out: np.ndarray

    @property
    def num_brokers(self) -> int:
        return len(self.broker_ids)

    @property
    def num_partitions(self) -> int:
        return len(self.size)

    def topic_partition(self, p: int) -> TopicPartition:
        return TopicPartition(self.topics[int(self.topic_index[p])], int(self.partition[p]))

    def broker_index(self) -> dict[int, int]:
        return {int(b): i for i, b in enumerate(self.broker_ids)}

    def replica_ids(self, replicas: np.ndarray, p: int) -> list[int]:
        """Partition ``p``'s replica list as broker ids (from an index matrix like ``replicas``)."""
        return [int(self.broker_ids[b]) for b in replicas[p, : int(self.rf[p])]]

    def rack_index(self) -> tuple[np.ndarray, int]:
        """(rack number per broker index, number of racks); no racks at all → one rack."""
        names = sorted({r for r in self.racks if r is not None})
        if not names:
            return np.zeros(self.num_brokers, dtype=np.int32), 1
        number = {r: i for i, r in enumerate(names)}
        return np.array([number[r or ""] for r in self.racks], dtype=np.int32), len(names)


def broker_loads(model: LoadModel, replicas: np.ndarray | None = None) -> np.ndarray:
    """``[broker index, resource]`` loads of an assignment (default: the model's own)."""
    reps = model.replicas if replicas is None else replicas
    n = model.num_brokers
    loads = np.zeros((n, len(RESOURCES)), dtype=np.float64)
    held = reps >= 0
    rows = np.broadcast_to(np.arange(reps.shape[0])[:, None], reps.shape)[held]
    where = reps[held]
    leaders = reps[:, 0] if reps.shape[0] else None
    for r, goal in enumerate(LOAD_GOALS):
        amount = goal.per_replica(model)[0]
        if not goal.leader_only:
            loads[:, r] = np.bincount(where, weights=amount[rows], minlength=n)
        elif leaders is not None:
            loads[:, r] = np.bincount(leaders, weights=amount, minlength=n)
    return loads


@dataclass(frozen=True)
class BrokerSpec:
    """A broker as the loads file or the admin adapter gives it (capacities ``None`` = unknown)."""

    id: int
    rack: str | None = None
    disk: float | None = None
    bytes_in: float | None = None
    bytes_out: float | None = None


@dataclass(frozen=True)
class PartitionSpec:
    """A partition as the loads file or the admin adapter gives it (broker ids, preferred leader first)."""

    topic: str
    partition: int
    replicas: tuple[int, ...]
    size: float = 0.0
    bytes_in: float = 0.0
    bytes_out: float = 0.0


def _capacities(brokers: Sequence[BrokerSpec]) -> np.ndarray:
    """``[broker, capacity column]`` (``inf``: unknown), the columns of ``CAPACITY_RESOURCES``."""
    values = [[getattr(b, name) for name in CAPACITY_RESOURCES] for b in brokers]
    return np.array(
        [[float("inf") if v is None else float(v) for v in row] for row in values], dtype=np.float64
    ).reshape(len(brokers), len(CAPACITY_RESOURCES))


def build_model(brokers: Sequence[BrokerSpec], partitions: Sequence[PartitionSpec]) -> LoadModel:
    """Check and pack brokers and partitions (:class:`InvalidArgumentError` names the bad value)."""
    if not brokers:
        raise InvalidBrokerError("the load model has no brokers; at least one is needed")
    index: dict[int, int] = {}
    for i, b in enumerate(brokers):
        if b.id in index:
            raise InvalidBrokerError(f"broker id {b.id} is listed twice")
        index[b.id] = i
    racked = [b.rack is not None for b in brokers]
    if any(racked) and not all(racked):
        missing = sorted(b.id for b in brokers if b.rack is None)
        raise InvalidBrokerError(f"racks must be given for all brokers or none; no rack for {missing[:20]}")
    width = max((len(p.replicas) for p in partitions), default=1)
    count = len(partitions)
    replicas = np.full((count, width), NO_BROKER, dtype=np.int32)
    rf = np.zeros(count, dtype=np.int16)
    topic_names: dict[str, int] = {}
    topic_index = np.zeros(count, dtype=np.int32)
    numbers = np.zeros(count, dtype=np.int64)
    seen: set[tuple[str, int]] = set()
    for p, spec in enumerate(partitions):
        key = (spec.topic, spec.partition)
        if key in seen:
            raise InvalidArgumentError(f"partition {spec.topic}-{spec.partition} is listed twice")
        seen.add(key)
        if not spec.replicas:
            raise InvalidArgumentError(f"partition {spec.topic}-{spec.partition} has no replicas")
        if len(set(spec.replicas)) != len(spec.replicas):
            raise InvalidArgumentError(
                f"partition {spec.topic}-{spec.partition} lists a broker twice: {list(spec.replicas)}"
            )
        for j, ident in enumerate(spec.replicas):
            if ident not in index:
                raise InvalidBrokerError(
                    f"partition {spec.topic}-{spec.partition} names broker {ident}, "
                    "which is not among the brokers"
                )
            replicas[p, j] = index[ident]
        rf[p] = len(spec.replicas)
        topic_index[p] = topic_names.setdefault(spec.topic, len(topic_names))
        numbers[p] = spec.partition
    capacity = _capacities(brokers)
    return LoadModel(
        broker_ids=np.array([b.id for b in brokers], dtype=np.int64),
        racks=tuple(b.rack for b in brokers),
        capacity=capacity,
        topics=tuple(topic_names),
        topic_index=topic_index,
        partition=numbers,
        replicas=replicas,
        rf=rf,
        size=np.array([p.size for p in partitions], dtype=np.float64),
        bytes_in=np.array([p.bytes_in for p in partitions], dtype=np.float64),
        bytes_out=np.array([p.bytes_out for p in partitions], dtype=np.float64),
    )


def with_brokers(model: LoadModel, extra: Sequence[BrokerSpec]) -> LoadModel:
    """The model with new, empty brokers added (to be filled by a plan)."""
    known = set(int(b) for b in model.broker_ids)
    for b in extra:
        if b.id in known:
            raise InvalidBrokerError(f"broker {b.id} is already in the load model")
        known.add(b.id)
    if extra and (any(b.rack is None for b in extra) != (model.racks[0] is None)):
        raise InvalidBrokerError("racks must be given for all brokers or none (new brokers included)")
    rows = _capacities(extra)
    return LoadModel(
        broker_ids=np.concatenate([model.broker_ids, np.array([b.id for b in extra], dtype=np.int64)]),
        racks=model.racks + tuple(b.rack for b in extra),
        capacity=np.vstack([model.capacity, rows]),
        topics=model.topics,
        topic_index=model.topic_index,
        partition=model.partition,
        replicas=model.replicas,
        rf=model.rf,
        size=model.size,
        bytes_in=model.bytes_in,
        bytes_out=model.bytes_out,
    )
