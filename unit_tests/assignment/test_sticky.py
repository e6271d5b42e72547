"""Sticky assignor (KIP-54 + KIP-341 + KIP-881): examples from the KIP, the StickyAssignor javadoc and
kafka-python's docstring, generation conflicts, bad input, hypothesis properties and kafka-python's own
StickyPartitionAssignor as an oracle for balance."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_placement.assignment import assign
from kafka_placement.assignment.assignment_quality import balance_score
from kafka_placement.assignment.sticky import assign_sticky
from kafka_placement.assignment.sticky.checks import kept, problems
from kafka_placement.conformance.kafka_python_sticky import kafka_python_sticky
from kafka_placement.errors import InvalidArgumentError
from kafka_placement.vocabulary import Member, TopicPartition

TP = TopicPartition


def tps(spec: str) -> list[TopicPartition]:
    """'t0p0 t1p1' -> [TP('t0', 0), TP('t1', 1)]"""
    out = []
    for item in spec.split():
        topic, _, part = item.rpartition("p")
        out.append(TP(topic, int(part)))
    return sorted(out)


def previous(result: Mapping[str, Sequence[TopicPartition]], generation: int = 1) -> dict[str, tuple]:
    return {m: (tuple(v), generation) for m, v in result.items()}


# --- examples -------------------------------------------------------------------------------------
def test_seed_003_unequal_subscriptions_fresh() -> None:
    # StickyAssignor javadoc example 2: t0:1, t1:2, t2:3; C0:{t0}, C1:{t0,t1}, C2:{t0,t1,t2}
    ppt = {"t0": 1, "t1": 2, "t2": 3}
    members = {"C0": Member(["t0"]), "C1": Member(["t0", "t1"]), "C2": Member(["t0", "t1", "t2"])}
    assert assign_sticky(ppt, members) == {
        "C0": tps("t0p0"),
        "C1": tps("t1p0 t1p1"),
        "C2": tps("t2p0 t2p1 t2p2"),
    }


def test_seed_003_c0_leaves_keeps_five_partitions() -> None:
    # StickyAssignor javadoc: when C0 leaves, sticky keeps 5 assignments; only t0p0 moves, to C1
    ppt = {"t0": 1, "t1": 2, "t2": 3}
    members = {
        "C1": Member(["t0", "t1"], owned=tps("t1p0 t1p1"), generation=1),
        "C2": Member(["t0", "t1", "t2"], owned=tps("t2p0 t2p1 t2p2"), generation=1),
    }
    assert assign_sticky(ppt, members) == {"C1": tps("t0p0 t1p0 t1p1"), "C2": tps("t2p0 t2p1 t2p2")}


def test_kip54_example3_new_consumer_takes_one_partition() -> None:
    # KIP-54 example 3: C0, C1 on t0, t1 (2 partitions each); C2 joins -> 3 assignments preserved
    ppt = {"t0": 2, "t1": 2}
    fresh = assign_sticky(ppt, {"C0": Member(["t0", "t1"]), "C1": Member(["t0", "t1"])})
    assert fresh == {"C0": tps("t0p0 t1p0"), "C1": tps("t0p1 t1p1")}  # KIP table (range = rr = sticky)
    members = {
        "C0": Member(["t0", "t1"], owned=fresh["C0"], generation=1),
        "C1": Member(["t0", "t1"], owned=fresh["C1"], generation=1),
        "C2": Member(["t0", "t1"]),
    }
    result = assign_sticky(ppt, members)
    assert problems(ppt, members, result) == []
    assert sorted(len(v) for v in result.values()) == [1, 1, 2]
    assert kept(fresh, result) == 3
    assert len(result["C2"]) == 1


def test_kafka_python_docstring_example1() -> None:
    # kafka-python StickyPartitionAssignor docstring (from Java's javadoc): fresh C0, C1, C2 on t0..t3
    ppt = {f"t{i}": 2 for i in range(4)}
    topics = list(ppt)
    fresh = assign_sticky(ppt, {c: Member(topics) for c in ("C0", "C1", "C2")})
    assert fresh == {
        "C0": tps("t0p0 t1p1 t3p0"),
        "C1": tps("t0p1 t2p0 t3p1"),
        "C2": tps("t1p0 t2p1"),
    }
    # C1 removed: all previous assignments preserved, 4 and 4
    members = {c: Member(topics, owned=fresh[c], generation=1) for c in ("C0", "C2")}
    result = assign_sticky(ppt, members)
    assert problems(ppt, members, result) == []
    assert set(fresh["C0"]) <= set(result["C0"]) and set(fresh["C2"]) <= set(result["C2"])
    assert [len(result["C0"]), len(result["C2"])] == [4, 4]


def test_kafka_python_docstring_example2_roundrobin_unbalanced_sticky_not() -> None:
    ppt = {"t0": 1, "t1": 2, "t2": 3}
    members = {"C0": Member(["t0"]), "C1": Member(["t0", "t1"]), "C2": Member(["t0", "t1", "t2"])}
    result = assign_sticky(ppt, members)
    assert balance_score(result) == 4  # |1-2| + |1-3| + |2-3|; round robin's 1,1,4 scores 6


# --- KIP-341 generations and stale claims ------------------------------------------------------------
def test_higher_generation_wins_a_conflicting_claim() -> None:
    ppt = {"t": 4}
    members = {
        "A": Member(["t"], owned=tps("tp0 tp1"), generation=5),
        "B": Member(["t"], owned=tps("tp0 tp2"), generation=4),  # stale claim on tp0
    }
    result = assign_sticky(ppt, members)
    assert result["A"] == tps("tp0 tp1")
    assert TP("t", 2) in result["B"]
    assert problems(ppt, members, result) == []


def test_higher_generation_wins_in_the_general_path_too() -> None:
    ppt = {"t": 4, "u": 1}
    members = {
        "A": Member(["t"], owned=tps("tp1 tp0"), generation=3),
        "B": Member(["t", "u"], owned=tps("tp0 tp2"), generation=7),
    }
    result = assign_sticky(ppt, members)
    assert TP("t", 0) in result["B"] and TP("t", 2) in result["B"]
    assert TP("t", 1) in result["A"]
    assert problems(ppt, members, result) == []


def test_same_generation_conflict_is_resolved_validly_and_deterministically() -> None:
    ppt = {"t": 2}
    members = {
        "A": Member(["t"], owned=tps("tp0"), generation=2),
        "B": Member(["t"], owned=tps("tp0"), generation=2),
    }
    result = assign_sticky(ppt, members)
    assert problems(ppt, members, result) == []
    assert result == assign_sticky(ppt, dict(reversed(list(members.items()))))


def test_claims_on_gone_partitions_and_unsubscribed_topics_are_dropped() -> None:
    ppt = {"t": 2, "u": 2}
    members = {
        "A": Member(["t"], owned=[TP("t", 7), TP("gone", 0), TP("u", 0), TP("t", -1)], generation=1),
        "B": Member(["t", "u"]),
    }
    result = assign_sticky(ppt, members)
    assert problems(ppt, members, result) == []
    assert all(tp.topic == "t" for tp in result["A"])


def test_edge_cases() -> None:
    assert assign_sticky({"t": 3}, {}) == {}
    assert assign_sticky({}, {"A": Member(["t"])}) == {"A": []}
    # topic missing from metadata, zero partitions, more members than partitions
    members = {f"C{i}": Member(["t", "missing", "empty"]) for i in range(5)}
    result = assign_sticky({"t": 2, "empty": 0}, members)
    assert problems({"t": 2, "empty": 0}, members, result) == []
    assert sorted(len(v) for v in result.values()) == [0, 0, 0, 1, 1]


@pytest.mark.parametrize(
    ("ppt", "members", "needle"),
    [
        ({"t": -1}, {"A": Member(["t"])}, "-1"),
        ({"t": "3"}, {"A": Member(["t"])}, "'3'"),
        ({"t": True}, {"A": Member(["t"])}, "True"),
        ({3: 1}, {"A": Member(["t"])}, "3"),
        ({"t": 1}, {"A": ["t"]}, "'A'"),
    ],
)
def test_bad_input_raises_typed_errors_naming_the_value(ppt: dict, members: dict, needle: str) -> None:
    with pytest.raises(InvalidArgumentError, match=needle):
        assign_sticky(ppt, members)


# --- racks (KIP-881) ----------------------------------------------------------------------------
def test_rack_aware_equal_subscriptions_prefers_local_partitions() -> None:
    ppt = {"t": 6}
    racks = {TP("t", p): {f"r{p % 3}"} for p in range(6)}
    members = {f"C{i}": Member(["t"], rack=f"r{i}") for i in range(3)}
    result = assign_sticky(ppt, members, partition_racks=racks)
    assert problems(ppt, members, result) == []
    for i in range(3):
        assert all(racks[tp] == {f"r{i}"} for tp in result[f"C{i}"])


def test_rack_aware_never_gives_up_balance() -> None:
    ppt = {"t": 6}
    racks = {TP("t", p): {"r0"} for p in range(6)}  # every replica in r0
    members = {"C0": Member(["t"], rack="r0"), "C1": Member(["t"], rack="r1")}
    result = assign_sticky(ppt, members, partition_racks=racks)
    assert [len(result["C0"]), len(result["C1"])] == [3, 3]


def test_rack_aware_general_path_prefers_local_partitions() -> None:
    ppt = {"t": 4, "u": 2}
    racks = {TP("t", p): {f"r{p % 2}"} for p in range(4)} | {TP("u", p): {"r0", "r1"} for p in range(2)}
    members = {
        "A": Member(["t"], rack="r0"),
        "B": Member(["t"], rack="r1"),
        "C": Member(["t", "u"], rack="r1"),
    }
    result = assign_sticky(ppt, members, partition_racks=racks)
    assert problems(ppt, members, result) == []
    for m in ("A", "B"):
        assert all(racks[tp] >= {members[m].rack} for tp in result[m]), result


# --- properties -------------------------------------------------------------------------------------
@st.composite
def scenarios(draw: st.DrawFn, max_topics: int = 5, max_members: int = 7) -> tuple[dict, dict, dict]:
    """(partitions_per_topic, fresh members, previous owners with generations) - previous may overlap."""
    n_topics = draw(st.integers(1, max_topics))
    ppt = {f"t{i}": draw(st.integers(0, 8)) for i in range(n_topics)}
    names = [*ppt, "ghost"]
    n_members = draw(st.integers(1, max_members))
    equal = draw(st.booleans())
    common = draw(st.lists(st.sampled_from(names), min_size=1, max_size=len(names), unique=True))
    subs = {
        f"C{i}": common
        if equal
        else draw(st.lists(st.sampled_from(names), min_size=1, max_size=len(names), unique=True))
        for i in range(n_members)
    }
    all_tps = [TP(t, p) for t in [*ppt, "ghost"] for p in range(ppt.get(t, 2) + 1)]
    owned = {
        m: (
            draw(st.lists(st.sampled_from(all_tps), max_size=10, unique=True)),
            draw(st.integers(-1, 3)),
        )
        for m in subs
    }
    return ppt, subs, owned


def _members(subs: dict, owned: dict | None = None) -> dict[str, Member]:
    if owned is None:
        return {m: Member(t) for m, t in subs.items()}
    return {m: Member(t, owned=owned[m][0], generation=owned[m][1]) for m, t in subs.items()}


def _valid_previous(ppt: dict, members: dict[str, Member]) -> dict[str, set]:
    """The claims that survive KIP-341 (highest generation, unique among all claimants, as Java and
    conformance.checks.previous_owners resolve them) and then subscription/existence."""
    best: dict[TopicPartition, list[tuple[int, str]]] = {}
    for m, member in members.items():
        for tp in set(member.owned):
            if 0 <= tp.partition < ppt.get(tp.topic, 0):
                best.setdefault(tp, []).append((member.generation, m))
    out: dict[str, set] = {m: set() for m in members}
    for tp, claims in best.items():
        claims.sort(reverse=True)
        unique = len(claims) == 1 or claims[0][0] > claims[1][0]
        if unique and tp.topic in members[claims[0][1]].topics:
            out[claims[0][1]].add(tp)
    return out


@given(scenarios())
def test_property_valid_and_balanced_fresh_and_with_previous(case: tuple[dict, dict, dict]) -> None:
    ppt, subs, owned = case
    for members in (_members(subs), _members(subs, owned)):
        result = assign_sticky(ppt, members)
        assert problems(ppt, members, result) == []


@given(scenarios())
def test_property_deterministic_whatever_the_mapping_order(case: tuple[dict, dict, dict]) -> None:
    # holds while no two member ids share a Java HashMap bucket (true of C0..C6); ids that do are
    # walked in the mapping's order, as Java walks them (test_sticky_java_vectors)
    ppt, subs, owned = case
    members = _members(subs, owned)
    first = assign_sticky(ppt, members)
    shuffled = list(members.items())
    random.Random(len(shuffled)).shuffle(shuffled)
    assert assign_sticky(dict(reversed(list(ppt.items()))), dict(shuffled)) == first
    assert assign_sticky(ppt, members) == first


@given(scenarios())
def test_property_never_less_sticky_than_a_fresh_assignment(case: tuple[dict, dict, dict]) -> None:
    ppt, subs, owned = case
    members = _members(subs, owned)
    prev = _valid_previous(ppt, members)
    sticky = assign_sticky(ppt, members)
    fresh = assign_sticky(ppt, _members(subs))
    # balance first: valid and KIP-54 balanced (once balanced, owned partitions stay where they are
    # rather than move for a better balance score, as Java's StickyAssignor does)
    assert problems(ppt, members, sticky) == []
    assert kept(prev, sticky) >= kept(prev, fresh)


@given(scenarios())
def test_property_a_balanced_previous_assignment_is_kept_whole(case: tuple[dict, dict, dict]) -> None:
    ppt, subs, _ = case
    first = assign_sticky(ppt, _members(subs))
    again = assign_sticky(ppt, _members(subs, previous(first)))
    assert again == first


def _assert_not_dominated(ppt: dict, members: dict[str, Member], ours: dict, theirs: dict) -> None:
    """Ours (valid and KIP-54 balanced, checked by the caller) is as balanced as the other result or
    keeps more previously owned partitions: once KIP-54 balanced, ours stops moving owned partitions
    for a better balance score (as Java's StickyAssignor does), which the other may have bought with
    moves. With no history (nothing to keep) ours must be at least as balanced."""
    prev = _valid_previous(ppt, members)
    if balance_score(ours) > balance_score(theirs):
        assert kept(prev, ours) > kept(prev, theirs), (ours, theirs)


@settings(max_examples=40)
@given(scenarios(max_topics=4, max_members=6))
def test_property_never_dominated_by_kafka_pythons_sticky(case: tuple[dict, dict, dict]) -> None:
    ppt, subs, owned = case
    # kafka-python needs topics that exist and claims of existing partitions in its own metadata
    subs = {m: [t for t in s if t in ppt] for m, s in subs.items()}
    owned = {
        m: ([tp for tp in o if 0 <= tp.partition < ppt.get(tp.topic, 0)], max(g, 0))
        for m, (o, g) in owned.items()
    }
    for members in (_members(subs), _members(subs, owned)):
        ours = assign_sticky(ppt, members)
        assert problems(ppt, members, ours) == []
        try:
            theirs = kafka_python_sticky(ppt, members)
        except Exception:  # kafka-python 3.0 crashes on some stale claims (KeyError): nothing to compare
            continue
        if problems(ppt, members, theirs) == []:  # it also keeps claims on unsubscribed topics at times
            _assert_not_dominated(ppt, members, ours, theirs)


def _random_case(rng: random.Random, n_topics: int, n_members: int, max_parts: int) -> tuple[dict, dict]:
    ppt = {f"t{i}": rng.randint(1, max_parts) for i in range(n_topics)}
    topics = list(ppt)
    subs = {f"C{i:02d}": rng.sample(topics, rng.randint(1, n_topics)) for i in range(n_members)}
    return ppt, subs


def test_random_rebalances_against_kafka_python() -> None:
    """Join/leave sequences: ours stays valid, as balanced or better, and keeps what it should."""
    rng = random.Random(20261121)
    for _ in range(15):
        ppt, subs = _random_case(rng, 6, 8, 12)
        prev_ours: dict[str, list[TopicPartition]] = {}
        for _step in range(3):
            live = dict(rng.sample(sorted(subs.items()), rng.randint(2, len(subs))))
            members = {m: Member(s, owned=prev_ours.get(m, ()), generation=1) for m, s in live.items()}
            ours = assign_sticky(ppt, members)
            theirs = kafka_python_sticky(ppt, members)
            assert problems(ppt, members, ours) == []
            _assert_not_dominated(ppt, members, ours, theirs)
            prev_ours = ours


@pytest.mark.full
@settings(max_examples=3000)
@given(scenarios(max_topics=8, max_members=12))
def test_full_property_sweep(case: tuple[dict, dict, dict]) -> None:
    ppt, subs, owned = case
    members = _members(subs, owned)
    result = assign_sticky(ppt, members)
    assert problems(ppt, members, result) == []
    prev = _valid_previous(ppt, members)
    fresh = assign_sticky(ppt, _members(subs))
    assert kept(prev, result) >= kept(prev, fresh)


# --- racks: properties ---------------------------------------------------------------------------------
@st.composite
def rack_scenarios(draw: st.DrawFn) -> tuple[dict, dict, dict, dict]:
    ppt, subs, owned = draw(scenarios())
    rack_names = ["r0", "r1", "r2"]
    racks = {
        TP(t, p): set(draw(st.lists(st.sampled_from(rack_names), max_size=2, unique=True)))
        for t, n in ppt.items()
        for p in range(n)
    }
    member_racks = {m: draw(st.sampled_from([None, *rack_names])) for m in subs}
    return ppt, subs, owned, {"partitions": racks, "members": member_racks}


@given(rack_scenarios())
def test_property_rack_aware_is_valid(case: tuple) -> None:
    """Valid with racks, fresh or not. (Balance is not compared with a rack-blind run: Java's own
    rack-aware builder, which a fresh group now gets exactly, may give some up for locality.)"""
    ppt, subs, owned, rk = case
    for history in (None, owned):
        plain = _members(subs, history)
        members = {
            m: Member(x.topics, owned=x.owned, generation=x.generation, rack=rk["members"][m])
            for m, x in plain.items()
        }
        aware = assign_sticky(ppt, members, partition_racks=rk["partitions"])
        blind = assign_sticky(ppt, plain)
        assert [p for p in problems(ppt, members, aware) if not p.startswith("unbalanced")] == []
        assert [p for p in problems(ppt, plain, blind) if not p.startswith("unbalanced")] == []


def test_rack_aware_keeps_owned_local_partitions_first() -> None:
    # A owned 4 partitions, must give 2 to newcomer B: it keeps the ones in its own rack
    ppt = {"t": 4}
    racks = {TP("t", 0): {"rb"}, TP("t", 1): {"ra"}, TP("t", 2): {"rb"}, TP("t", 3): {"ra"}}
    members = {
        "A": Member(["t"], owned=tps("tp0 tp1 tp2 tp3"), generation=1, rack="ra"),
        "B": Member(["t"], rack="rb"),
    }
    result = assign_sticky(ppt, members, partition_racks=racks)
    assert result == {"A": tps("tp1 tp3"), "B": tps("tp0 tp2")}


# --- internal consistency, hostile input, the dispatcher ---------------------------------------------------
@given(scenarios())
def test_property_fresh_fast_path_equals_the_general_machinery(case: tuple) -> None:
    ppt, subs, _ = case
    fresh = assign_sticky(ppt, _members(subs))
    # a claim on a partition that does not exist forces the quota-fill/general machinery
    forced = {m: Member(s, owned=[TP("no-such-topic", 0)]) for m, s in subs.items()}
    assert assign_sticky(ppt, forced) == fresh


def test_hostile_owned_partitions_are_ignored() -> None:
    ppt = {"t": 3}
    members = {
        "A": Member(
            ["t"], owned=[TP("t", 2**80), TP("t", -(2**70)), TP("t", 1), TP("t", 1)], generation=2**40
        ),
        "B": Member(["t"], owned=[TP("", 0)] * 1000, generation=-(2**40)),
    }
    result = assign_sticky(ppt, members)
    assert problems(ppt, members, result) == []
    assert TP("t", 1) in result["A"]


def test_bad_partition_racks_raise_typed_errors() -> None:
    members = {"A": Member(["t"], rack="r")}
    with pytest.raises(InvalidArgumentError, match="'r0'"):
        assign_sticky({"t": 1}, members, partition_racks={TP("t", 0): "r0"})  # type: ignore[dict-item]
    with pytest.raises(InvalidArgumentError, match="'t0'"):
        assign_sticky({"t": 1}, members, partition_racks={"t0": {"r"}})  # type: ignore[dict-item]


def test_the_assign_dispatcher_reaches_us() -> None:
    from kafka_placement.assignment import assign

    ppt = {"t0": 1, "t1": 2, "t2": 3}
    members = {"C0": Member(["t0"]), "C1": Member(["t0", "t1"]), "C2": Member(["t0", "t1", "t2"])}
    assert assign("sticky", ppt, members) == assign_sticky(ppt, members)


def test_rack_dealing_reaches_full_locality_when_it_exists() -> None:
    # every partition has replicas in 2 of 3 racks, members spread over the 3 racks: a fully
    # rack-local balanced assignment exists, and the flow-based dealing finds it (a greedy
    # rack-by-rack deal does not: it ends near 92 % here)
    ppt = {f"t{i}": 30 for i in range(4)}
    racks = {TP(t, p): {f"r{p % 3}", f"r{(p + 1) % 3}"} for t in ppt for p in range(30)}
    for unequal in (False, True):
        members = {f"C{i:02d}": Member(list(ppt), rack=f"r{i % 3}") for i in range(12)}
        if unequal:
            members["C99"] = Member(["t0"], rack="r0")
        result = assign_sticky(ppt, members, partition_racks=racks)
        assert problems(ppt, members, result) == []
        assert all(members[m].rack in racks[tp] for m, v in result.items() for tp in v)
        as_frozen = {tp: frozenset(r) for tp, r in racks.items()}
        assert assign_sticky(ppt, members, partition_racks=as_frozen) == result


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_lists_are_in_python_order_where_java_orders_topics_differently(strategy: str) -> None:
    """Java orders "\\U0001f600" (UTF-16 D83D DE00) before "\\ufffd"; Python's code points the other way.
    The sticky functions build lists in Java order and skip ``assign``'s sort: they must still come out
    as Python sorts them, for the fresh path and the general one."""
    ppt = {"\U0001f600": 3, "\ufffd": 3, "a": 2}
    fresh = assign(strategy, ppt, {"m1": Member(list(ppt)), "m2": Member(list(ppt))})
    rebalance = assign(
        strategy,
        ppt,
        {"m1": Member(list(ppt), owned=fresh["m1"], generation=1), "m3": Member(["\ufffd", "a"])},
    )
    for result in (fresh, rebalance):
        assert all(parts == sorted(parts) for parts in result.values()), result
    every = sorted(TopicPartition(t, p) for t, n in ppt.items() for p in range(n))
    assert sorted(tp for parts in fresh.values() for tp in parts) == every
