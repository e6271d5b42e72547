"""KRaft's ``StripedReplicaPlacer`` (``org.apache.kafka.metadata.placement``, Kafka 4.x), faithfully.

The controller places a new topic's replicas like this:

* brokers are grouped per rack (``None`` = no rack is a rack of its own); each rack keeps a sorted
  list of unfenced and a sorted list of fenced brokers, each with a random start offset;
* racks are sorted (no-rack first, then Java string order) and a random rack offset is drawn;
* for each partition the leader is the next *unfenced* broker, starting at the rack offset and
  moving to the next rack while a rack has none left in this epoch; followers come round-robin over
  the racks starting at the same offset (skipping the leader's rack once), unfenced before fenced;
* after as many partitions as there are unfenced brokers, the rack list and every broker list are
  shuffled and a new epoch starts (each list then advances its offset by one).

Exactness matters because the result is compared with the Java class driven by the same seeded
``Random``: every draw happens in the same order as in Java. That includes the order in which
Java's ``HashMap<Optional<String>, Rack>`` yields its racks (initialisation and shuffles walk
``racks.values()``), which :func:`kafka_placement.java.java_hashmap_order` reproduces — including
a bucket of 11 or more racks sharing one ``hashCode`` that Java turns into a red-black tree. There
Java orders the (not ``Comparable``) ``Optional`` keys by ``System.identityHashCode``, which changes
from run to run: Java itself gives different placements for the same input. We then order them as
their names compare (one of Java's possible outcomes); ``colliding_rack_order`` picks another.

Errors (``InvalidReplicationFactorError``) carry Kafka 4.4's messages (which mention KIP-1066 log
directory cordoning), checked in the placer's order: non-positive replication factor, all brokers
fenced, too few brokers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kafka_placement.errors import InvalidArgumentError, InvalidBrokerError, InvalidReplicationFactorError
from kafka_placement.java import INT_MAX, java_hashmap_order, java_string_key
from kafka_placement.replicas.javarandom import JavaRandomBase
from kafka_placement.replicas.limits import check_placement_work

_SHORT_MIN = -(2**15)
_SHORT_MAX = 2**15 - 1


@dataclass(frozen=True)
class UsableBroker:
    """Kafka's ``UsableBroker(id, rack, fenced)``: a registered broker the controller may use."""

    id: int
    rack: str | None = None
    fenced: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.id, bool) or not isinstance(self.id, int) or not 0 <= self.id <= INT_MAX:
            raise InvalidBrokerError(f"broker id must be an int in [0, 2147483647], got {self.id!r}")
        if self.rack is not None and not isinstance(self.rack, str):
            raise InvalidBrokerError(f"broker rack must be a str or None, got {self.rack!r}")
        if not isinstance(self.fenced, bool):
            raise InvalidBrokerError(f"fenced must be a bool, got {self.fenced!r}")


class _BrokerList:
    """``StripedReplicaPlacer.BrokerList``: a sorted list walked from a moving offset per epoch."""

    __slots__ = ("brokers", "epoch", "index", "offset")

    def __init__(self) -> None:
        self.brokers: list[int] = []
        self.index = 0
        self.offset = 0
        self.epoch = 0

    def initialize(self, rng: JavaRandomBase) -> None:
        if self.brokers:
            self.brokers.sort()
            self.offset = rng.next_int(len(self.brokers))

    def shuffle(self, rng: JavaRandomBase) -> None:
        rng.shuffle(self.brokers)

    def next(self, epoch: int) -> int:
        if not self.brokers:
            return -1
        if self.epoch != epoch:
            self.epoch = epoch
            self.index = 0
            self.offset = (self.offset + 1) % len(self.brokers)
        if self.index >= len(self.brokers):
            return -1
        broker = self.brokers[(self.index + self.offset) % len(self.brokers)]
        self.index += 1
        return broker


class _Rack:
    __slots__ = ("fenced", "unfenced")

    def __init__(self) -> None:
        self.fenced = _BrokerList()
        self.unfenced = _BrokerList()

    def initialize(self, rng: JavaRandomBase) -> None:
        self.fenced.initialize(rng)
        self.unfenced.initialize(rng)

    def shuffle(self, rng: JavaRandomBase) -> None:
        self.fenced.shuffle(rng)
        self.unfenced.shuffle(rng)

    def next(self, epoch: int) -> int:
        result = self.unfenced.next(epoch)
        return result if result >= 0 else self.fenced.next(epoch)


def _check_rf(replication_factor: int) -> None:
    if replication_factor <= 0:
        raise InvalidReplicationFactorError(
            f"Invalid replication factor {replication_factor}: the replication factor must be positive."
        )


def _check_unfenced(num_unfenced: int) -> None:
    if num_unfenced == 0:
        raise InvalidReplicationFactorError(
            "All brokers are currently fenced, or have all their log directories cordoned."
        )


def _check_enough(replication_factor: int, num_total: int) -> None:
    if replication_factor > num_total:
        raise InvalidReplicationFactorError(
            f"The target replication factor of {replication_factor} cannot be reached because only "
            f"{num_total} broker(s) are registered or some brokers have all their log directories cordoned."
        )


class StripedRackList:
    """``StripedReplicaPlacer.RackList``: the placer's state; :meth:`place` gives one partition."""

    def __init__(
        self,
        rng: JavaRandomBase,
        brokers: Iterable[UsableBroker],
        *,
        colliding_rack_order: Sequence[str | None] | None = None,
    ) -> None:
        self._rng = rng
        self._racks: dict[str | None, _Rack] = {}
        insertion: list[str | None] = []
        seen_ids: set[int] = set()
        self.num_total_brokers = 0
        self.num_unfenced_brokers = 0
        for broker in brokers:
            if not isinstance(broker, UsableBroker):
                raise InvalidBrokerError(f"brokers must be UsableBroker instances, got {broker!r}")
            if broker.id in seen_ids:
                raise InvalidBrokerError(f"duplicate broker id {broker.id}; broker ids must be unique")
            seen_ids.add(broker.id)
            rack = self._racks.get(broker.rack)
            if rack is None:
                rack = _Rack()
                self._racks[broker.rack] = rack
                insertion.append(broker.rack)
            if broker.fenced:
                rack.fenced.brokers.append(broker.id)
            else:
                self.num_unfenced_brokers += 1
                rack.unfenced.brokers.append(broker.id)
            self.num_total_brokers += 1
        # Java walks HashMap.values(): reproduce its order, it decides the order of the draws.
        tie = _tree_tie_order(insertion, colliding_rack_order)
        self.value_order: list[str | None] = [
            insertion[i] for i in java_hashmap_order(insertion, tree_order=tie)
        ]
        self._value_order = [self._racks[name] for name in self.value_order]
        for rack in self._value_order:
            rack.initialize(rng)
        self.rack_names: list[str | None] = sorted(
            insertion, key=lambda name: (0, b"") if name is None else (1, java_string_key(name))
        )
        self._epoch = 0
        self._offset = rng.next_int(len(self.rack_names)) if self.rack_names else 0

    def _shuffle(self) -> None:
        self._rng.shuffle(self.rack_names)
        for rack in self._value_order:
            rack.shuffle(self._rng)

    def place(self, replication_factor: int) -> list[int]:
        """One partition's replicas, leader first (``RackList.place``)."""
        _check_rf(replication_factor)
        _check_enough(replication_factor, self.num_total_brokers)
        _check_unfenced(self.num_unfenced_brokers)
        if self._epoch == self.num_unfenced_brokers and self.num_unfenced_brokers > 1:
            self._shuffle()
            self._epoch = 0
        if self._offset == len(self.rack_names):
            self._offset = 0
        names = self.rack_names
        first_rack_index = self._offset
        while True:
            result = self._racks[names[first_rack_index]].unfenced.next(self._epoch)
            if result >= 0:
                brokers = [result]
                break
            first_rack_index += 1
            if first_rack_index == len(names):
                first_rack_index = 0
        rack_index = self._offset
        for _ in range(1, replication_factor):
            result = -1
            while result < 0:
                if rack_index == first_rack_index:
                    first_rack_index = -1
                else:
                    result = self._racks[names[rack_index]].next(self._epoch)
                rack_index += 1
                if rack_index == len(names):
                    rack_index = 0
            brokers.append(result)
        self._epoch += 1
        self._offset += 1
        return brokers


def _tree_tie_order(
    insertion: list[str | None], colliding_rack_order: Sequence[str | None] | None
) -> Callable[[int], object]:
    """The order of racks inside a treeified HashMap bucket (Java: identity hash codes)."""
    if colliding_rack_order is None:
        return lambda i: (0, b"") if insertion[i] is None else (1, java_string_key(insertion[i] or ""))
    rank = {name: k for k, name in enumerate(colliding_rack_order)}
    if len(rank) != len(colliding_rack_order) or any(name not in rank for name in insertion):
        raise InvalidArgumentError(
            "colliding_rack_order must list every rack (None for brokers without rack) exactly once"
        )
    return lambda i: rank[insertion[i]]


def place_striped(
    brokers: Iterable[UsableBroker],
    num_partitions: int,
    replication_factor: int,
    rng: JavaRandomBase,
    *,
    colliding_rack_order: Sequence[str | None] | None = None,
) -> list[list[int]]:
    """``StripedReplicaPlacer(rng).place(...)`` for a new topic: one replica list per partition.

    ``rng`` is a :class:`~kafka_placement.replicas.javarandom.JavaRandom` or ``MockRandom`` (or any
    object with Java's ``next_int(bound)``/``shuffle``); it is consumed exactly as Java consumes
    its ``Random``. ``replication_factor`` is a Java ``short`` in the placement spec.
    ``colliding_rack_order``: the order Java's identity hash codes happened to give racks that share
    a treeified ``HashMap`` bucket (11+ racks with one ``hashCode``); default: by name.
    """
    for name, value in (("num_partitions", num_partitions), ("replication_factor", replication_factor)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidArgumentError(f"{name} must be an int, got {value!r}")
    if not _SHORT_MIN <= replication_factor <= _SHORT_MAX:
        raise InvalidArgumentError(
            f"replication_factor {replication_factor} is out of the Java short range "
            f"[{_SHORT_MIN}, {_SHORT_MAX}]"
        )
    rack_list = StripedRackList(rng, brokers, colliding_rack_order=colliding_rack_order)
    _check_rf(replication_factor)
    _check_unfenced(rack_list.num_unfenced_brokers)
    _check_enough(replication_factor, rack_list.num_total_brokers)
    if num_partitions < 0:  # Java: new ArrayList<>(numPartitions) rejects a negative capacity
        raise InvalidArgumentError(f"Illegal Capacity: {num_partitions}")
    check_placement_work(num_partitions, replication_factor)
    return [rack_list.place(replication_factor) for _ in range(num_partitions)]
