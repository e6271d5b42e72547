"""Scenario generators: reproducible per (seed, algorithm, index), and inside their documented ranges."""

from __future__ import annotations

from kafka_placement.conformance import generators, group_scenarios, key_scenarios, placement_scenarios


def test_same_seed_same_scenario_and_streams_are_independent() -> None:
    a = group_scenarios.sticky_scenario(generators.scenario_rng(5, "sticky", 3))
    b = group_scenarios.sticky_scenario(generators.scenario_rng(5, "sticky", 3))
    c = group_scenarios.sticky_scenario(generators.scenario_rng(5, "sticky", 4))
    assert a == b
    assert a != c


def test_key_scenarios_cover_the_documented_ranges() -> None:
    lengths = set()
    for i in range(2000):
        s = key_scenarios.key_scenario(generators.scenario_rng(0, "keys", i))
        assert 0 <= len(s.key) <= 300
        assert 1 <= s.num_partitions <= 10_000
        lengths.add(len(s.key))
    assert {0, 1, 2, 3, 4, 5, 7} <= lengths  # every murmur2 tail length, empty key included
    assert max(lengths) > 250


def test_group_scenarios_include_unequal_subscriptions_and_racks() -> None:
    unequal = racked = 0
    for i in range(300):
        s = group_scenarios.group_scenario(generators.scenario_rng(0, "g", i), racks=True)
        subs = {m.topics for m in s.members.values()}
        unequal += len(subs) > 1
        racks = s.partition_racks()
        assert racks is not None and set(racks) == {
            (t, p) for t, n in s.partitions_per_topic.items() for p in range(n)
        }
        racked += any(m.rack for m in s.members.values())
    assert unequal > 50 and racked > 200


def test_sticky_scenarios_carry_previous_ownership_and_conflicts() -> None:
    owned = stale = 0
    for i in range(300):
        s = group_scenarios.sticky_scenario(generators.scenario_rng(0, "s", i))
        owned += any(m.owned for m in s.members.values())
        stale += bool(s.notes)
    assert owned > 250 and stale > 20


def test_replica_scenarios_include_error_cases() -> None:
    admin = [
        placement_scenarios.admin_utils_scenario(generators.scenario_rng(0, "a", i)) for i in range(1000)
    ]
    assert any(s.n_partitions <= 0 for s in admin)
    assert any(s.replication_factor > len(s.brokers) for s in admin)
    assert any(any(r is None for _, r in s.brokers) and any(r for _, r in s.brokers) for s in admin)
    striped = [placement_scenarios.striped_scenario(generators.scenario_rng(0, "s", i)) for i in range(1000)]
    assert any(all(f for _, _, f in s.brokers) for s in striped)
    assert any(s.seed == 17 for s in striped)
