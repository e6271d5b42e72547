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


#: Code points where Java's UTF-16 order and Python's code point order part ways, or that test
#: encoders: around the surrogate block, private use (BMP and astral), emoji, combining marks,
#: the BMP's last code points and the first and last astral ones. (Lone surrogates are not valid
#: Unicode strings and cannot cross to Java as such.)
_SPECIAL_CODE_POINTS: tuple[int, ...] = (
    0x41,
    0x61,
    0x7F,
    0xE9,
    0x0301,
    0x0308,
    0x20DD,
    0x4E2D,
    0xD7FF,
    0xE000,
    0xE001,
    0xF8FF,
    0xFB01,
    0xFE0F,
    0xFFFD,
    0xFFFF,
    0x10000,
    0x1D11E,
    0x1F600,
    0x1F9D1,
    0xF0000,
    0x10FFFD,
    0x10FFFF,
)


def _code_point(rng: random.Random) -> str:
    """One code point from all of Unicode (surrogates excluded), special ones over-weighted."""
    r = rng.random()
    if r < 0.5:
        return chr(rng.choice(_SPECIAL_CODE_POINTS))
    if r < 0.7:
        return chr(rng.randint(0xE000, 0xFFFF))  # private use and the BMP's top: above surrogates
    if r < 0.9:
        return chr(rng.randint(0x10000, 0x10FFFF))  # astral: a surrogate pair in Java
    cp = rng.randint(0x20, 0xD7FF)
    return chr(cp)


def unicode_name(rng: random.Random, max_length: int = 4) -> str:
    """A short non-empty string from all of Unicode (see :func:`_code_point`)."""
    return "".join(_code_point(rng) for _ in range(rng.randint(1, max_length)))


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
    if rng.random() < 0.05:  # Java int overflow: start index (or partition id) near Integer.MAX_VALUE
        fixed = 2**31 - 1 - rng.randint(0, 60)
        start = rng.choice((-1, rng.randint(0, 50), 2**31 - 1 - rng.randint(0, 60)))
        n_partitions = rng.randint(1, 40)
    return AdminUtilsScenario(tuple(brokers), n_partitions, rf, fixed, start)


@dataclass(frozen=True)
class StripedScenario:
    brokers: tuple[tuple[int, str | None, bool], ...]
    num_partitions: int
    replication_factor: int
    seed: int


#: Java ``String.hashCode`` of "Aa" and "BB" is the same (2112), so every string of k such blocks
#: shares one hashCode with the 2^k - 1 others: racks that all land in one HashMap bucket.
_COLLIDING_BLOCKS = ("Aa", "BB")


def colliding_rack_names(rng: random.Random, count: int) -> list[str]:
    """``count`` distinct rack names (count <= 32) sharing one Java ``hashCode``."""
    names: set[str] = set()
    prefix = rng.choice(("", "rack-", "r\U0001f600"))
    while len(names) < count:
        names.add(prefix + "".join(rng.choice(_COLLIDING_BLOCKS) for _ in range(5)))
    return sorted(names)


def striped_scenario(rng: random.Random) -> StripedScenario:
    """1–12 brokers (random ids, random order), racks none/some/all over 1–4 racks, ~20% fenced
    (sometimes all); RF mostly in [1, brokers], sometimes 0, negative or too large; a random
    64-bit MockRandom seed (17 in a tenth of the cases, Kafka's tests' default)."""
    if rng.random() < 0.15:
        return _colliding_striped_scenario(rng)
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


#: Racks sharing one hashCode that make Java's HashMap treeify their bucket (the 11th key put into
#: a bucket of a 64-bucket table; 9 and 10 only grow the table).
TREEIFIED_BUCKET = 11


def _colliding_striped_scenario(rng: random.Random) -> StripedScenario:
    """2-11 racks sharing a Java hashCode (11: a treeified HashMap bucket), 1-3 brokers each (so the
    racks' random offsets differ and their order in ``racks.values()`` shows), sometimes a few
    ordinary racks and rackless brokers too."""
    colliding = colliding_rack_names(rng, rng.choice((2, 5, 9, 10, TREEIFIED_BUCKET, TREEIFIED_BUCKET)))
    racks: list[str | None] = [*colliding, *(f"rack{i}" for i in range(rng.choice((0, 0, 2))))]
    if rng.random() < 0.2:
        racks.append(None)
    ids = rng.sample(range(0, 200), sum(rng.randint(1, 3) for _ in racks))
    brokers = [(b, racks[i % len(racks)], rng.random() < 0.1) for i, b in enumerate(ids)]
    rng.shuffle(brokers)
    if all(fenced for _, _, fenced in brokers):
        brokers[0] = (brokers[0][0], brokers[0][1], False)
    rf = rng.randint(1, min(4, len(brokers)))
    seed = rng.getrandbits(64) - 2**63
    return StripedScenario(tuple(brokers), rng.randint(1, 40), rf, seed)
