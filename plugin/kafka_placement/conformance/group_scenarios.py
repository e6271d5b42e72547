"""Scenario generators for partition → consumer: groups, their subscriptions, racks and history."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from kafka_placement.conformance.generators import unicode_name
from kafka_placement.vocabulary import Member, TopicPartition


@dataclass(frozen=True)
class GroupScenario:
    """A group: topic partition counts (what the metadata knows), members, optional replica racks."""

    partitions_per_topic: dict[str, int]
    members: dict[str, Member]
    replicas: dict[TopicPartition, tuple[int, ...]] | None = None
    broker_racks: dict[int, str | None] | None = None
    #: only for the cooperative check: the generation of the next rebalance
    generation: int = 1
    notes: tuple[str, ...] = field(default=())

    def partition_racks(self) -> dict[TopicPartition, frozenset[str]] | None:
        """Racks of every partition's replicas (rackless brokers contribute nothing)."""
        if self.replicas is None or self.broker_racks is None:
            return None
        racks = self.broker_racks
        return {
            tp: frozenset(r for r in (racks.get(b) for b in brokers) if r is not None)
            for tp, brokers in self.replicas.items()
        }


def _member_ids(rng: random.Random, count: int) -> list[str]:
    ids: set[str] = set()
    unicode_ids = rng.random() < 0.25
    while len(ids) < count:
        style = rng.random()
        if unicode_ids and style < 0.7:
            ids.add(unicode_name(rng))
        elif style < 0.5:
            ids.add(f"consumer-{rng.randint(1, 40)}-{rng.getrandbits(32):08x}")
        elif style < 0.8:
            ids.add(f"C{rng.randint(0, 30)}")
        else:  # ids whose byte order and natural order disagree
            ids.add(rng.choice(["a", "B", "b", "_", "z9", "Z10", "consumer", "Consumer"]) + str(len(ids)))
    out = sorted(ids)
    rng.shuffle(out)
    return out


def _topics(rng: random.Random, max_topics: int, max_partitions: int) -> dict[str, int]:
    """Topic names Kafka accepts ([a-zA-Z0-9._-]) — or, in a sixth of the groups, names from all of
    Unicode: the assignors never validate topic names, and Java orders them as Java strings."""
    count = rng.randint(1, max_topics)
    if rng.random() < 1 / 6:
        names: list[str] = []
        while len(names) < count:
            name = unicode_name(rng, 3)
            if name not in names and name != "no-metadata":
                names.append(name)
    else:
        names = rng.sample(
            ["t0", "t1", "t2", "t3", "t4", "t5", "orders", "Orders", "a.b", "x_y", "t10"], count
        )
    return {name: rng.randint(1, max_partitions) for name in names}


def _subscriptions(rng: random.Random, topics: list[str], ids: list[str]) -> dict[str, list[str]]:
    if rng.random() < 0.4:  # equal subscriptions (Java's fast paths)
        chosen = rng.sample(topics, rng.randint(1, len(topics)))
        return {m: list(chosen) for m in ids}
    return {m: rng.sample(topics, rng.randint(1, len(topics))) for m in ids}


def _racks(
    rng: random.Random, partitions_per_topic: dict[str, int]
) -> tuple[dict[TopicPartition, tuple[int, ...]], dict[int, str | None], list[str]]:
    rack_names = ["rack1", "rack2", "rack3", "rack4"][: rng.randint(1, 4)]
    if rng.random() < 0.2:  # racks from all of Unicode
        rack_names = list(dict.fromkeys(unicode_name(rng, 3) for _ in rack_names))
    n_brokers = rng.randint(1, 7)
    broker_racks: dict[int, str | None] = {
        b: (None if rng.random() < 0.05 else rng.choice(rack_names)) for b in range(n_brokers)
    }
    rf_max = rng.randint(1, n_brokers)
    replicas = {
        TopicPartition(t, p): tuple(rng.sample(range(n_brokers), rng.randint(1, rf_max)))
        for t, n in partitions_per_topic.items()
        for p in range(n)
    }
    return replicas, broker_racks, rack_names


def group_scenario(rng: random.Random, *, racks: bool, static_members: bool = True) -> GroupScenario:
    """Random topics (1–5, 1–12 partitions), 1–7 members with equal or unequal subscriptions;
    sometimes a subscribed topic without metadata; with ``racks``, random replica racks and
    consumer racks (KIP-881), some consumers rackless."""
    partitions = _topics(rng, 5, 12)
    topics = list(partitions)
    notes: list[str] = []
    if rng.random() < 0.1:
        topics.append("no-metadata")
        notes.append("a subscribed topic has no metadata")
    ids = _member_ids(rng, rng.randint(1, 7))
    subs = _subscriptions(rng, topics, ids)
    replicas = broker_racks = None
    rack_names: list[str] = []
    if racks:
        replicas, broker_racks, rack_names = _racks(rng, partitions)
    members: dict[str, Member] = {}
    for m in ids:
        rack = rng.choice([*rack_names, None, "rack9"]) if racks else None
        instance = f"instance-{rng.randint(0, 99)}-{m}" if static_members and rng.random() < 0.15 else None
        members[m] = Member(subs[m], rack=rack, group_instance_id=instance)
    return GroupScenario(partitions, members, replicas, broker_racks, notes=tuple(notes))


def sticky_scenario(
    rng: random.Random, *, racks: bool = False, conflicts: bool = True, equal: bool = False
) -> GroupScenario:
    """A group after a previous rebalance: members own what a previous (valid) assignment gave
    them in generation g; some members are new (own nothing), some left, topics may have grown or
    vanished, subscriptions may have changed, and sometimes a stale member still claims
    partitions from generation g-1 (KIP-341) or claims with unknown generation (-1).

    ``conflicts=False`` leaves out stale members and zombies; ``equal=True`` gives every member the
    same subscription (every topic with metadata), Java's constrained-builder path."""
    base = group_scenario(rng, racks=racks, static_members=False)
    partitions = base.partitions_per_topic
    ids = list(base.members)
    generation = rng.randint(1, 50)
    # previous world
    prev_partitions = {t: max(1, n - rng.choice((0, 0, 0, 1, 2))) for t, n in partitions.items()}
    if rng.random() < 0.15:
        prev_partitions["deleted-topic"] = rng.randint(1, 4)
    prev_ids = [m for m in ids if rng.random() < 0.85]
    prev_ids += [f"gone-{i}" for i in range(rng.randint(0, 2))]
    prev_topics = list(prev_partitions)
    prev_subs = {
        m: (
            list(base.members[m].topics)
            if m in base.members and rng.random() < 0.8
            else rng.sample(prev_topics, rng.randint(1, len(prev_topics)))
        )
        for m in prev_ids
    }
    owned: dict[str, list[TopicPartition]] = {m: [] for m in prev_ids}
    spread_evenly = rng.random() < 0.6
    counter = rng.randint(0, 10)
    for t, n in prev_partitions.items():
        candidates = [m for m in prev_ids if t in prev_subs[m]]
        for p in range(n):
            if not candidates:
                break
            if spread_evenly:
                owner = candidates[counter % len(candidates)]
                counter += 1
            else:
                owner = rng.choice(candidates)
            owned[owner].append(TopicPartition(t, p))
    notes = list(base.notes)
    members: dict[str, Member] = {}
    for m, member in base.members.items():
        claims = owned.get(m, [])
        gen = generation if claims else -1
        if claims and rng.random() < 0.1 and conflicts:
            gen = generation - 1
            notes.append(f"{m} is stale (generation {gen})")
        members[m] = Member(member.topics, owned=claims, generation=gen, rack=member.rack)
    if rng.random() < 0.15 and len(members) > 1 and conflicts:
        # a zombie: claims partitions someone else owns now, with an older generation
        zombie = rng.choice(list(members))
        others = [tp for m, claims in owned.items() if m != zombie for tp in claims]
        stolen = rng.sample(others, min(len(others), rng.randint(1, 3)))
        old = members[zombie]
        members[zombie] = Member(
            old.topics, owned=[*old.owned, *stolen], generation=generation - 1, rack=old.rack
        )
        notes.append(f"{zombie} claims {len(stolen)} partitions of others with generation {generation - 1}")
    if equal:
        everything = tuple(partitions)
        members = {
            m: Member(everything, owned=v.owned, generation=v.generation, rack=v.rack)
            for m, v in members.items()
        }
        notes.append("equal subscriptions")
    return GroupScenario(partitions, members, base.replicas, base.broker_racks, generation + 1, tuple(notes))


def without_history(s: GroupScenario) -> GroupScenario:
    """The same group assigned for the first time: nobody owns anything."""
    members = {
        m: Member(v.topics, rack=v.rack, group_instance_id=v.group_instance_id) for m, v in s.members.items()
    }
    return GroupScenario(s.partitions_per_topic, members, s.replicas, s.broker_racks, 1, (*s.notes, "fresh"))
