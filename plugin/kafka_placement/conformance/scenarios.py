"""Seeded random scenario generators, one per differential check.

Every generator takes a :class:`random.Random` and returns a plain frozen dataclass, so a scenario
is reproducible from ``(seed, index)`` alone (see :func:`scenario_rng`) and printable as a minimal
failing case. Sizes are kept small on purpose: edge cases (empty keys, one member, unequal
subscriptions, missing topic metadata, rackless brokers, fenced brokers, RF > brokers) are far more
likely in small scenarios than in big ones.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from kafka_placement.vocabulary import Member, TopicPartition


def scenario_rng(seed: int, algorithm: str, index: int) -> random.Random:
    """Independent stream per (seed, algorithm, index): any scenario can be replayed alone."""
    return random.Random(f"{seed}/{algorithm}/{index}")


# ---- key -> partition ---------------------------------------------------------------------------
@dataclass(frozen=True)
class KeyScenario:
    key: bytes
    num_partitions: int


def key_scenario(rng: random.Random) -> KeyScenario:
    """A key of 0–300 random bytes (short lengths over-weighted: every tail length 0–3 and the
    first block boundaries) and a partition count in [1, 10000]."""
    length = rng.randint(0, 12) if rng.random() < 0.5 else rng.randint(0, 300)
    key = rng.randbytes(length)
    num_partitions = rng.choice((1, 2, 3, 6, 12, 13, 16)) if rng.random() < 0.3 else rng.randint(1, 10_000)
    return KeyScenario(key, num_partitions)


@dataclass(frozen=True)
class KeyBatchScenario:
    keys: tuple[bytes, ...]
    num_partitions: int


def key_batch_scenario(rng: random.Random) -> KeyBatchScenario:
    """1–40 keys drawn like :func:`key_scenario` (mixed lengths in one batch exercise the
    vectorized paths that group keys by length) and one partition count."""
    first = key_scenario(rng)
    keys = [first.key] + [key_scenario(rng).key for _ in range(rng.randint(0, 39))]
    return KeyBatchScenario(tuple(keys), first.num_partitions)


# ---- partition -> consumer ----------------------------------------------------------------------
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
    while len(ids) < count:
        style = rng.random()
        if style < 0.5:
            ids.add(f"consumer-{rng.randint(1, 40)}-{rng.getrandbits(32):08x}")
        elif style < 0.8:
            ids.add(f"C{rng.randint(0, 30)}")
        else:  # ids whose byte order and natural order disagree
            ids.add(rng.choice(["a", "B", "b", "_", "z9", "Z10", "consumer", "Consumer"]) + str(len(ids)))
    out = sorted(ids)
    rng.shuffle(out)
    return out


def _topics(rng: random.Random, max_topics: int, max_partitions: int) -> dict[str, int]:
    names = rng.sample(
        ["t0", "t1", "t2", "t3", "t4", "t5", "orders", "Orders", "a.b", "x_y", "t10"],
        rng.randint(1, max_topics),
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


# ---- replica -> broker --------------------------------------------------------------------------
@dataclass(frozen=True)
class AdminUtilsScenario:
    brokers: tuple[tuple[int, str | None], ...]
    n_partitions: int
    replication_factor: int
    fixed_start_index: int
    start_partition_id: int


def admin_utils_scenario(rng: random.Random) -> AdminUtilsScenario:
    """1–12 brokers with random distinct ids in random order; no racks, all racked (1–5 racks of
    uneven sizes), or some rackless (Java's AdminOperationException); partitions and RF mostly
    valid, sometimes ≤ 0 or RF above the broker count; fixed start index ≥ 0 (deterministic)."""
    n = rng.randint(1, 12)
    ids = rng.sample(range(0, 3 * n + 5), n)
    mode = rng.random()
    racks = [f"rack{i}" for i in range(rng.randint(1, 5))]
    brokers: list[tuple[int, str | None]] = []
    for b in ids:
        if mode < 0.35:
            rack = None
        elif mode < 0.9:
            rack = rng.choice(racks)
        else:
            rack = rng.choice([*racks, None])
        brokers.append((b, rack))
    r = rng.random()
    n_partitions = rng.randint(-2, 0) if r < 0.03 else rng.randint(1, 40)
    r = rng.random()
    if r < 0.03:
        rf = rng.randint(-1, 0)
    elif r < 0.08:
        rf = n + rng.randint(1, 2)
    else:
        rf = rng.randint(1, n)
    fixed = rng.randint(0, 2 * n)
    start = -1 if rng.random() < 0.5 else rng.randint(0, 50)
    return AdminUtilsScenario(tuple(brokers), n_partitions, rf, fixed, start)


@dataclass(frozen=True)
class StripedScenario:
    brokers: tuple[tuple[int, str | None, bool], ...]
    num_partitions: int
    replication_factor: int
    seed: int


def striped_scenario(rng: random.Random) -> StripedScenario:
    """1–12 brokers (random ids, random order), racks none/some/all over 1–4 racks, ~20% fenced
    (sometimes all); RF mostly in [1, brokers], sometimes 0, negative or too large; a random
    64-bit MockRandom seed (17 in a tenth of the cases, Kafka's tests' default)."""
    n = rng.randint(1, 12)
    ids = rng.sample(range(0, 3 * n + 5), n)
    racks = [f"rack{i}" for i in range(rng.randint(1, 4))]
    mode = rng.random()
    fenced_p = 1.0 if rng.random() < 0.03 else rng.choice((0.0, 0.0, 0.2, 0.5))
    brokers = []
    for b in ids:
        if mode < 0.3:
            rack = None
        elif mode < 0.85:
            rack = rng.choice(racks)
        else:
            rack = rng.choice([*racks, None])
        brokers.append((b, rack, rng.random() < fenced_p))
    r = rng.random()
    if r < 0.03:
        rf = rng.randint(-2, 0)
    elif r < 0.08:
        rf = n + rng.randint(1, 2)
    else:
        rf = rng.randint(1, n)
    num_partitions = rng.randint(1, 30)
    seed = 17 if rng.random() < 0.1 else rng.getrandbits(64) - 2**63
    return StripedScenario(tuple(brokers), num_partitions, rf, seed)
