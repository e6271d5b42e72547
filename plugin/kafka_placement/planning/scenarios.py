"""Planning scenarios: partition count × scheme × replica placement × consumer group.

A scenario names *what would happen*; the small per-partition tables (partition → replicas,
partition → consumer) are computed here by the project's cores — :mod:`kafka_placement.replicas`
and :mod:`kafka_placement.assignment` — and later broadcast to Spark. Nothing is re-implemented.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.partitioning import SCHEMES as _PARTITIONING_SCHEMES
from kafka_placement.partitioning import get_scheme
from kafka_placement.vocabulary import Broker, Member, TopicPartition

#: Partitioner schemes of :func:`kafka_placement.partitioning.partition_keys`, by name.
SCHEMES: tuple[str, ...] = tuple(_PARTITIONING_SCHEMES)
#: Replica placers: Java AdminUtils (ZooKeeper-era / ``--generate``), the KRaft striped placer, ours.
PLACERS: tuple[str, ...] = ("adminutils", "striped", "balanced")
_PLACER_ALIASES = {"kafka": "adminutils", "zk": "adminutils", "kraft": "striped"}

#: The embedded test cluster's rack labels (kafka_placement.testing): the default broker set.
DEFAULT_BROKER_RACKS: dict[int, str] = {
    0: "rack1",
    1: "rack3",
    2: "rack3",
    3: "rack2",
    4: "rack2",
    5: "rack1",
}
PLAN_TOPIC = "planned"


def check_scheme(scheme: str) -> str:
    """``scheme`` if the partitioning core knows it (else its :class:`UnknownSchemeError`)."""
    get_scheme(scheme)
    return scheme


def check_placer(placer: str) -> str:
    name = _PLACER_ALIASES.get(placer, placer)
    if name not in PLACERS:
        raise InvalidArgumentError(
            f"unknown replica placer {placer!r}; allowed: {', '.join(PLACERS)} (aliases: kafka, zk, kraft)"
        )
    return name


@dataclass(frozen=True)
class Partitioning:
    """Key → partition: a partition count and a scheme (what a producer decides)."""

    partitions: int
    scheme: str = "murmur2"

    def __post_init__(self) -> None:
        if isinstance(self.partitions, bool) or not isinstance(self.partitions, int):
            raise InvalidArgumentError(f"partition count must be an int, got {self.partitions!r}")
        if not 1 <= self.partitions <= 100_000:
            raise InvalidArgumentError(f"partition count {self.partitions} is out of range [1, 100000]")
        check_scheme(self.scheme)

    @property
    def name(self) -> str:
        return f"{self.scheme}/{self.partitions}"

    @property
    def per_record(self) -> bool:
        """True for schemes that place every record at random (``random``): planned per record."""
        return bool(get_scheme(self.scheme).always_random)


@dataclass(frozen=True)
class Placement:
    """Replica → broker: brokers with racks, replication factor, placer and its seed."""

    brokers: tuple[Broker, ...] = tuple(Broker(b, r) for b, r in sorted(DEFAULT_BROKER_RACKS.items()))
    replication_factor: int = 3
    placer: str = "adminutils"
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "placer", check_placer(self.placer))
        if not self.brokers:
            raise InvalidArgumentError("a placement needs at least one broker")
        if not 1 <= self.replication_factor <= len(self.brokers):
            raise InvalidArgumentError(
                f"replication factor {self.replication_factor} is out of range [1, {len(self.brokers)}] "
                f"for {len(self.brokers)} brokers"
            )

    @property
    def name(self) -> str:
        return f"{self.placer}/rf{self.replication_factor}/{len(self.brokers)}b"

    def replicas(self, partitions: int) -> list[list[int]]:
        """Replica list (leader first) of each partition, from the replicas core."""
        if self.placer == "adminutils":
            from kafka_placement.replicas import assign_replicas_to_brokers

            racked = all(b.rack is not None for b in self.brokers)
            plan = assign_replicas_to_brokers(
                list(self.brokers) if racked else [b.id for b in self.brokers],
                partitions,
                self.replication_factor,
                seed=self.seed,
            )
            return [list(plan[p]) for p in range(partitions)]
        if self.placer == "striped":
            from kafka_placement.replicas.javarandom import JavaRandom
            from kafka_placement.replicas.striped import UsableBroker, place_striped

            usable = [UsableBroker(b.id, b.rack) for b in self.brokers]
            return [
                list(r)
                for r in place_striped(usable, partitions, self.replication_factor, JavaRandom(self.seed))
            ]
        return _balanced(self.brokers, partitions, self.replication_factor, self.seed)


def _balanced(brokers: Sequence[Broker], partitions: int, rf: int, seed: int) -> list[list[int]]:
    from kafka_placement.replicas.balanced import place_balanced

    return [list(r) for r in place_balanced(list(brokers), partitions, rf, seed=seed)]


@dataclass(frozen=True)
class Group:
    """Partition → consumer: members, their racks (optional) and the assignor."""

    consumers: int = 3
    assignor: str = "range"
    rack_aware: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.consumers <= 10_000:
            raise InvalidArgumentError(f"consumer count {self.consumers} is out of range [1, 10000]")
        from kafka_placement.assignment import strategy_name

        strategy_name(self.assignor)  # raises UnknownStrategyError naming the allowed ones

    @property
    def name(self) -> str:
        return f"{self.assignor}x{self.consumers}" + ("/rack" if self.rack_aware else "")

    def member_ids(self) -> list[str]:
        width = len(str(self.consumers - 1))
        return [f"consumer-{i:0{width}d}" for i in range(self.consumers)]

    def owners(
        self, partitions: int, replicas: Sequence[Sequence[int]], racks: Mapping[int, str | None]
    ) -> list[str]:
        """Owning member of each partition of the planned topic, from the assignment core."""
        from kafka_placement.assignment import assign, strategy_name

        rack_names = sorted({r for r in racks.values() if r is not None})
        members: dict[str, Member] = {}
        for i, member_id in enumerate(self.member_ids()):
            rack = rack_names[i % len(rack_names)] if (self.rack_aware and rack_names) else None
            priority = self.consumers - i if self.assignor in ("failover", "priority") else None
            members[member_id] = Member([PLAN_TOPIC], rack=rack, priority=priority)
        partition_racks = None
        if self.rack_aware:
            partition_racks = {
                TopicPartition(PLAN_TOPIC, p): sorted({r for b in reps if (r := racks.get(b)) is not None})
                for p, reps in enumerate(replicas)
            }
        assignment = assign(
            strategy_name(self.assignor), {PLAN_TOPIC: partitions}, members, partition_racks=partition_racks
        )
        owner = [""] * partitions
        for member_id, tps in assignment.items():
            for tp in tps:
                owner[tp.partition] = member_id
        return owner


@dataclass(frozen=True)
class Scenario:
    partitioning: Partitioning
    placement: Placement = field(default_factory=Placement)
    group: Group = field(default_factory=Group)

    @property
    def name(self) -> str:
        return f"{self.partitioning.name} | {self.placement.name} | {self.group.name}"


def scenario_grid(
    partitions: Iterable[int],
    schemes: Iterable[str] = ("murmur2",),
    placements: Iterable[Placement] = (Placement(),),
    groups: Iterable[Group] = (Group(),),
) -> list[Scenario]:
    """The cartesian product, partitionings varying slowest; duplicates removed, order kept."""
    parts = [Partitioning(n, s) for n in partitions for s in schemes]
    grid = [Scenario(p, pl, g) for p, pl, g in itertools.product(parts, list(placements), list(groups))]
    if not grid:
        raise InvalidArgumentError("no scenario: give at least one partition count and one scheme")
    return list(dict.fromkeys(grid))


def parse_brokers(text: str) -> tuple[Broker, ...]:
    """``"0:rack1,1:rack3,2"`` → brokers (``id`` or ``id:rack``); ``"6"`` alone: ids 0..5, no racks."""
    text = text.strip()
    if text.isdigit():
        return tuple(Broker(i) for i in range(int(text)))
    brokers: list[Broker] = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        ident, _, rack = item.partition(":")
        if not ident.isdigit():
            raise InvalidArgumentError(
                f"bad broker {item!r} in {text!r}; expected id or id:rack, e.g. 0:rack1"
            )
        brokers.append(Broker(int(ident), rack or None))
    if len({b.id for b in brokers}) != len(brokers):
        raise InvalidArgumentError(f"duplicate broker ids in {text!r}")
    if not brokers:
        raise InvalidArgumentError(f"no brokers in {text!r}")
    return tuple(brokers)
