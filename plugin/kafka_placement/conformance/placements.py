"""Replica → broker checks: AdminUtils (fixed and random start) and KRaft's StripedReplicaPlacer."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

from kafka_placement.conformance import placement_scenarios
from kafka_placement.conformance.bridge import JavaError, JavaReference
from kafka_placement.conformance.outcome import _compare_outcome, _ours


# ---- replica -> broker ----------------------------------------------------------------------------------
def check_adminutils(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    assign = _ours("kafka_placement.replicas", "assign_replicas_to_brokers")
    broker_cls = _ours("kafka_placement.replicas", "Broker")
    s = placement_scenarios.admin_utils_scenario(rng)
    java = ref.assign_replicas_to_brokers(
        list(s.brokers), s.n_partitions, s.replication_factor, s.fixed_start_index, s.start_partition_id
    )

    def ours() -> dict[int, list[int]]:
        brokers = [broker_cls(b, rack) for b, rack in s.brokers]
        result = assign(
            brokers, s.n_partitions, s.replication_factor, s.fixed_start_index, s.start_partition_id
        )
        return {int(k): [int(b) for b in v] for k, v in result.items()}

    return s, _compare_outcome(java, ours)


def check_adminutils_random(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    """Random start index and shift (fixedStartIndex -1): Java's static ``RAND`` reseeded with
    the scenario's seed vs ours with ``seed=`` (``JavaRandom``) — exact equality."""
    assign = _ours("kafka_placement.replicas", "assign_replicas_to_brokers")
    broker_cls = _ours("kafka_placement.replicas", "Broker")
    s = placement_scenarios.admin_utils_scenario(rng)
    seed = rng.getrandbits(64) - 2**63
    java = ref.assign_replicas_to_brokers(
        list(s.brokers), s.n_partitions, s.replication_factor, -1, s.start_partition_id, seed=seed
    )

    def ours() -> dict[int, list[int]]:
        brokers = [broker_cls(b, rack) for b, rack in s.brokers]
        result = assign(brokers, s.n_partitions, s.replication_factor, -1, s.start_partition_id, seed=seed)
        return {int(k): [int(b) for b in v] for k, v in result.items()}

    return (s, seed), _compare_outcome(java, ours)


def check_striped(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    place = _ours("kafka_placement.replicas.striped", "place_striped")
    usable = _ours("kafka_placement.replicas.striped", "UsableBroker")
    mock_random = _ours("kafka_placement.replicas.javarandom", "MockRandom")
    s = placement_scenarios.striped_scenario(rng)
    java = ref.place_striped(list(s.brokers), s.num_partitions, s.replication_factor, s.seed)

    def ours(order: Sequence[str | None] | None = None) -> list[list[int]]:
        brokers = [usable(b, rack, fenced) for b, rack, fenced in s.brokers]
        result = place(
            brokers, s.num_partitions, s.replication_factor, mock_random(s.seed), colliding_rack_order=order
        )
        return [[int(b) for b in replicas] for replicas in result]

    detail = _compare_outcome(java, ours)
    if detail is None or isinstance(java, JavaError):
        return s, detail
    for order in _identity_orders(s, rng):
        if _compare_outcome(java, lambda o=order: ours(o)) is None:  # type: ignore[misc]
            return s, None  # ours with the order Java's identity hash codes gave in this run
    return s, detail


#: Rankings tried at most for racks in a treeified bucket (their order in Java follows identity
#: hash codes); each distinct ``racks.values()`` order they give is tried once.
IDENTITY_ORDER_SAMPLES = 3000


def _identity_orders(
    s: placement_scenarios.StripedScenario, rng: random.Random
) -> Iterator[list[str | None]]:
    """When racks sharing a hashCode land in a treeified bucket (11 of them, or fewer plus other
    racks in that bucket), Java's ``HashMap<Optional<String>, Rack>`` orders them in a red-black
    tree by ``System.identityHashCode`` (``Optional`` is not ``Comparable``), so Java's own placement
    changes from run to run (the same input gave 31 different placements in 40 calls). Yields one
    ranking per distinct ``racks.values()`` order among random rankings (seeded: replayable), for
    ours to reproduce the run Java made."""
    from kafka_placement.java import java_hashmap_order, java_hashmap_trees, java_string_hash

    insertion = list(dict.fromkeys(rack for _, rack, _ in s.brokers))
    hashes = [0 if r is None else java_string_hash(r) for r in insertion]
    if not any(len({hashes[i] for i in tree}) < len(tree) for tree in java_hashmap_trees(insertion)):
        return  # no tree, or every key in a tree has a hash of its own: no identity hash codes involved
    seen: set[tuple[int, ...]] = set()
    for _ in range(IDENTITY_ORDER_SAMPLES):
        ranking = insertion[:]
        rng.shuffle(ranking)
        rank = {name: k for k, name in enumerate(ranking)}
        order = tuple(java_hashmap_order(insertion, tree_order=lambda i, r=rank: r[insertion[i]]))  # type: ignore[misc]
        if order not in seen:
            seen.add(order)
            yield ranking
