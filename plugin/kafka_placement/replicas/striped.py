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
``racks.values()``), which :func:`java_hashmap_order` reproduces.

Errors (``InvalidReplicationFactorError``) carry Kafka 4.4's messages (which mention KIP-1066 log
directory cordoning), checked in the placer's order: non-positive replication factor, all brokers
fenced, too few brokers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kafka_placement.errors import InvalidArgumentError, InvalidBrokerError, InvalidReplicationFactorError
from kafka_placement.replicas.adminutils import java_string_key
from kafka_placement.replicas.javarandom import JavaRandomBase, to_int32

_SHORT_MIN = -(2**15)
_SHORT_MAX = 2**15 - 1


@dataclass(frozen=True)
class UsableBroker:
    """Kafka's ``UsableBroker(id, rack, fenced)``: a registered broker the controller may use."""

    id: int
    rack: str | None = None
    fenced: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.id, bool) or not isinstance(self.id, int) or not 0 <= self.id <= 2**31 - 1:
            raise InvalidBrokerError(f"broker id must be an int in [0, 2147483647], got {self.id!r}")
        if self.rack is not None and not isinstance(self.rack, str):
            raise InvalidBrokerError(f"broker rack must be a str or None, got {self.rack!r}")
        if not isinstance(self.fenced, bool):
            raise InvalidBrokerError(f"fenced must be a bool, got {self.fenced!r}")


def java_string_hash(value: str) -> int:
    """Java ``String.hashCode()``: ``s[0]*31^(n-1) + … + s[n-1]`` over UTF-16 code units, as an int."""
    h = 0
    data = value.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return to_int32(h)


def java_hashmap_order(keys: list[str | None]) -> list[int]:
    """Indices of ``keys`` (distinct, in insertion order) in the order a ``java.util.HashMap`` with
    default settings iterates them, keys hashed as ``Optional<String>`` (empty → 0).

    The table starts at 16 buckets and doubles when the size exceeds 3/4 of it, or when a bucket
    grows past 8 entries while the table is smaller than 64. Resizing keeps each bucket's relative
    order, so iteration is by bucket index, then insertion order. (A bucket that Java would turn into
    a red-black tree — 9+ colliding racks in a table of 64+ buckets — is not modelled.)
    """
    hashes: list[int] = []
    for key in keys:
        h = 0 if key is None else java_string_hash(key) & 0xFFFFFFFF
        hashes.append(h ^ (h >> 16))
    capacity = 16
    buckets: dict[int, int] = {}
    for size, h in enumerate(hashes, start=1):
        bucket = h & (capacity - 1)
        buckets[bucket] = buckets.get(bucket, 0) + 1
        if buckets[bucket] >= 9 and capacity < 64:
            capacity *= 2
            buckets = _rebucket(hashes[:size], capacity)
        if size > capacity * 3 // 4:
            capacity *= 2
            buckets = _rebucket(hashes[:size], capacity)
    return sorted(range(len(keys)), key=lambda i: (hashes[i] & (capacity - 1), i))


def _rebucket(hashes: list[int], capacity: int) -> dict[int, int]:
    counts: dict[int, int] = {}
    for h in hashes:
        counts[h & (capacity - 1)] = counts.get(h & (capacity - 1), 0) + 1
    return counts


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

    def __init__(self, rng: JavaRandomBase, brokers: Iterable[UsableBroker]) -> None:
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
        self._value_order = [self._racks[insertion[i]] for i in java_hashmap_order(insertion)]
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


def place_striped(
    brokers: Iterable[UsableBroker],
    num_partitions: int,
    replication_factor: int,
    rng: JavaRandomBase,
) -> list[list[int]]:
    """``StripedReplicaPlacer(rng).place(...)`` for a new topic: one replica list per partition.

    ``rng`` is a :class:`~kafka_placement.replicas.javarandom.JavaRandom` or ``MockRandom`` (or any
    object with Java's ``next_int(bound)``/``shuffle``); it is consumed exactly as Java consumes
    its ``Random``. ``replication_factor`` is a Java ``short`` in the placement spec.
    """
    for name, value in (("num_partitions", num_partitions), ("replication_factor", replication_factor)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidArgumentError(f"{name} must be an int, got {value!r}")
    if not _SHORT_MIN <= replication_factor <= _SHORT_MAX:
        raise InvalidArgumentError(
            f"replication_factor {replication_factor} is out of the Java short range "
            f"[{_SHORT_MIN}, {_SHORT_MAX}]"
        )
    rack_list = StripedRackList(rng, brokers)
    _check_rf(replication_factor)
    _check_unfenced(rack_list.num_unfenced_brokers)
    _check_enough(replication_factor, rack_list.num_total_brokers)
    if num_partitions < 0:  # Java: new ArrayList<>(numPartitions) rejects a negative capacity
        raise InvalidArgumentError(f"Illegal Capacity: {num_partitions}")
    return [rack_list.place(replication_factor) for _ in range(num_partitions)]
