"""Scenario generators for replica → broker: AdminUtils and the striped placer (colliding rack names
included)."""

from __future__ import annotations

import random
from dataclasses import dataclass


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
