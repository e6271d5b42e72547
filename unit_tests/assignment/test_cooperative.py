"""Cooperative-sticky (KIP-429): two rounds, never two owners, the second round reaches the sticky
target's balance."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.assignment.sticky import assign_sticky
from kafka_placement.assignment.sticky.checks import problems
from kafka_placement.assignment.sticky.cooperative import assign_cooperative_sticky, cooperative_owner_array
from kafka_placement.assignment.sticky.problem import build_problem, materialize
from kafka_placement.conformance.bridge import JavaError, JavaReference
from kafka_placement.vocabulary import Member, TopicPartition

TP = TopicPartition


def _owners(owned: dict[str, set[TopicPartition]]) -> dict[TopicPartition, list[str]]:
    out: dict[TopicPartition, list[str]] = {}
    for m, tps in owned.items():
        for tp in tps:
            out.setdefault(tp, []).append(m)
    return out


def _round(
    ppt: dict[str, int], subs: dict[str, list[str]], owned: dict[str, set[TopicPartition]], generation: int
) -> dict[str, list[TopicPartition]]:
    members = {m: Member(s, owned=sorted(owned.get(m, ())), generation=generation) for m, s in subs.items()}
    return assign_cooperative_sticky(ppt, members)


def _two_rounds(
    ppt: dict[str, int], subs: dict[str, list[str]], owned: dict[str, set[TopicPartition]]
) -> tuple[dict[str, list[TopicPartition]], dict[str, list[TopicPartition]]]:
    """Round 1 from ``owned``; every member then revokes what it was not given (KIP-429) and owns the
    rest; round 2 runs on that. Asserts no partition ever has two owners."""
    first = _round(ppt, subs, owned, 1)
    # during round 1's sync, a member still owns what it kept and owns nothing new from another owner
    claimants = _owners({m: set(v) for m, v in owned.items() if m in subs})
    for m, tps in first.items():
        for tp in tps:
            others = [o for o in claimants.get(tp, []) if o != m]
            assert others == [], f"{tp} given to {m} while {others} still own it"
    after_revoke = {m: set(first[m]) for m in subs}
    second = _round(ppt, subs, after_revoke, 2)
    claimants = _owners(after_revoke)
    for m, tps in second.items():
        for tp in tps:
            others = [o for o in claimants.get(tp, []) if o != m]
            assert others == [], f"round 2: {tp} given to {m} while {others} still own it"
    return first, second


def test_kip54_example3_cooperatively() -> None:
    # C0, C1 own t0/t1 partitions; C2 joins. The partition that moves to C2 is only revoked in round 1.
    ppt = {"t0": 2, "t1": 2}
    subs = {c: ["t0", "t1"] for c in ("C0", "C1", "C2")}
    owned = {"C0": {TP("t0", 0), TP("t1", 0)}, "C1": {TP("t0", 1), TP("t1", 1)}}
    target = assign_sticky(
        ppt, {m: Member(s, owned=sorted(owned.get(m, ())), generation=1) for m, s in subs.items()}
    )
    first, second = _two_rounds(ppt, subs, owned)
    moving = {tp for m in ("C0", "C1") for tp in owned[m] if tp not in target[m]}
    assert len(moving) == 1
    assert first["C2"] == []  # what C2 gets is still owned in round 1
    assert not moving & (set(first["C0"]) | set(first["C1"]))  # revoked from its owner
    assert problems(ppt, {m: Member(s) for m, s in subs.items()}, second) == []
    assert second["C2"] == sorted(moving)


def test_fresh_group_gets_everything_in_round_one() -> None:
    ppt = {"t": 5}
    subs = {c: ["t"] for c in ("A", "B")}
    first = _round(ppt, subs, {}, 1)
    assert first == assign_sticky(ppt, {m: Member(s) for m, s in subs.items()})


def test_partition_of_an_unsubscribed_topic_is_revoked_before_it_moves() -> None:
    ppt = {"t": 2, "u": 2}
    subs = {"A": ["t"], "B": ["t", "u"]}
    owned = {"A": {TP("u", 0), TP("t", 0)}, "B": {TP("t", 1)}}
    first, second = _two_rounds(ppt, subs, owned)
    assert TP("u", 0) not in first["B"]  # A still owns it during round 1
    assert TP("u", 0) in second["B"]


def test_same_generation_double_claim_never_gets_a_third_owner() -> None:
    ppt = {"t": 3}
    subs = {c: ["t"] for c in ("A", "B", "C")}
    owned = {"A": {TP("t", 0)}, "B": {TP("t", 0)}}
    first, _second = _two_rounds(ppt, subs, owned)
    assert sum(TP("t", 0) in v for v in first.values()) <= 1


def test_stale_claim_never_revokes_from_the_newest_owner() -> None:
    # KIP-341, as Java's CooperativeStickyAssignor answers it (unit_tests/conformance/
    # test_known_mismatches.py asserts the Java side): the generation-1 claim of C3 is stale.
    members = {
        "b0": Member(["t"], owned=[TP("t", 0)], generation=2),
        "C3": Member(["t"], owned=[TP("t", 0)], generation=1),
    }
    assert assign_cooperative_sticky({"t": 1}, members) == {"b0": [TP("t", 0)], "C3": []}
    # only what rebalancing needs is revoked from the generation-5 owner; its stale rival gets it later
    members = {
        "a": Member(["t"], owned=[TP("t", 0), TP("t", 1)], generation=5),
        "z": Member(["t"], owned=[TP("t", 0)], generation=4),
    }
    assert assign_cooperative_sticky({"t": 2}, members) == {"a": [TP("t", 0)], "z": []}


def _cooperative_target(ppt: dict[str, int], members: dict[str, Member]) -> dict[str, list[TopicPartition]]:
    """The full target of a cooperative round (before withholding what others still own)."""
    problem = build_problem(ppt, members)
    return materialize(problem, cooperative_owner_array(problem, None))


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[dict, dict, dict]:
    n_topics = draw(st.integers(1, 4))
    ppt = {f"t{i}": draw(st.integers(0, 7)) for i in range(n_topics)}
    topics = list(ppt)
    n_members = draw(st.integers(1, 6))
    if draw(st.booleans()):
        common = draw(st.lists(st.sampled_from(topics), min_size=1, unique=True))
        subs = {f"C{i}": common for i in range(n_members)}
    else:
        subs = {
            f"C{i}": draw(st.lists(st.sampled_from(topics), min_size=1, unique=True))
            for i in range(n_members)
        }
    # the previous round of some (possibly larger or different) group: a valid, single-owner state
    prev_subs = {f"C{i}": draw(st.lists(st.sampled_from(topics), min_size=1, unique=True)) for i in range(7)}
    prev = assign_sticky(ppt, {m: Member(s) for m, s in prev_subs.items()})
    owned = {m: set(v) for m, v in prev.items()}
    return ppt, subs, owned


@given(scenarios())
def test_property_rounds_never_two_owners_and_complete(case: tuple) -> None:
    """Round 1 is the target minus what is still owned elsewhere; rounds go on (never two owners)
    until nothing changes — two of them with our own target; Java's target, replayed for small
    groups with unequal subscriptions, may withhold again in round two, as Kafka's does — and the
    group ends complete and valid."""
    ppt, subs, owned = case
    first, second = _two_rounds(ppt, subs, owned)
    members = {m: Member(s) for m, s in subs.items()}
    target = _cooperative_target(
        ppt, {m: Member(s, owned=sorted(owned.get(m, ())), generation=1) for m, s in subs.items()}
    )
    for m in subs:
        assert set(first[m]) <= set(target[m])
    current = second
    for round_no in range(3, 7):
        now_owned = {m: set(current[m]) for m in subs}
        following = _round(ppt, subs, now_owned, round_no)
        claimants = _owners(now_owned)
        for m, tps in following.items():
            for tp in tps:
                assert [o for o in claimants.get(tp, []) if o != m] == []
        if {m: set(v) for m, v in following.items()} == now_owned:
            break
        current = following
    assert [p for p in problems(ppt, members, current) if not p.startswith("unbalanced")] == []


@given(scenarios())
def test_property_round_one_keeps_everything_the_target_keeps(case: tuple) -> None:
    ppt, subs, owned = case
    first = _round(ppt, subs, owned, 1)
    target = _cooperative_target(
        ppt, {m: Member(s, owned=sorted(owned.get(m, ())), generation=1) for m, s in subs.items()}
    )
    for m in subs:
        assert set(target[m]) & owned.get(m, set()) <= set(first[m])


def test_random_group_churn_many_rounds() -> None:
    """Members join and leave across 12 cooperative rebalances; never two owners at any time."""
    rng = random.Random(429)
    ppt = {f"t{i}": rng.randint(1, 20) for i in range(6)}
    topics = list(ppt)
    pool = {f"C{i:02d}": rng.sample(topics, rng.randint(1, 6)) for i in range(10)}
    owned: dict[str, set[TopicPartition]] = {}
    for generation in range(1, 13):
        live = dict(rng.sample(sorted(pool.items()), rng.randint(1, 10)))
        owned = {m: v for m, v in owned.items() if m in live}  # leavers' partitions are released
        result = _round(ppt, live, owned, generation)
        claimants = _owners(owned)
        for m, tps in result.items():
            for tp in tps:
                assert [o for o in claimants.get(tp, []) if o != m] == []
        owned = {m: set(result[m]) for m in live}
    # settle: without churn, one more round completes the assignment
    result = _round(ppt, live, owned, 99)
    assert problems(ppt, {m: Member(s) for m, s in live.items()}, result) == []


@pytest.mark.full
def test_full_random_churn(java: JavaReference) -> None:
    """300 groups × 5 membership changes with unequal subscriptions: every round (ours) equals Java's
    ``CooperativeStickyAssignor`` fed the same ownership, no partition ever has two owners, and the rounds
    that follow a change complete the assignment when Java's do. Two rounds are not always enough with
    unequal subscriptions: Java's second round may itself move a partition (it then goes unassigned for a
    round), and ours does the same: 27 of these 1,500 changes need a third round (the 35th group's second
    change is the first), on both sides."""
    rng = random.Random(4290)
    for _ in range(300):
        ppt = {f"t{i}": rng.randint(0, 30) for i in range(rng.randint(1, 8))}
        topics = list(ppt)
        pool = {
            f"C{i:02d}": rng.sample(topics, rng.randint(1, len(topics))) for i in range(rng.randint(1, 15))
        }
        owned: dict[str, set[TopicPartition]] = {}
        for _generation in range(1, 6):
            live = dict(rng.sample(sorted(pool.items()), rng.randint(1, len(pool))))
            owned = {m: v for m, v in owned.items() if m in live}
            subscribed = {m: Member(s) for m, s in live.items()}
            for rounds in range(1, 5):
                ours = _round(ppt, live, owned, rounds)
                members = {
                    m: Member(s, owned=sorted(owned.get(m, ())), generation=rounds) for m, s in live.items()
                }
                theirs = java.assign("cooperative-sticky", ppt, members)
                assert not isinstance(theirs, JavaError), theirs
                assert {m: sorted(v) for m, v in ours.items()} == {m: sorted(v) for m, v in theirs.items()}
                claimants = _owners(owned)
                for m, tps in ours.items():
                    for tp in tps:
                        others = [o for o in claimants.get(tp, []) if o != m]
                        assert others == [], f"round {rounds}: {tp} given to {m} while {others} still own it"
                owned = {m: set(ours[m]) for m in live}
                if rounds >= 2 and problems(ppt, subscribed, ours) == []:
                    break
            else:
                raise AssertionError(f"no complete assignment after 4 rounds: {ppt} {live}")


def _racked(
    subs: dict[str, list[str]], member_racks: dict[str, str | None], state: dict[str, set[TopicPartition]]
) -> dict[str, Member]:
    return {
        m: Member(s, owned=sorted(state.get(m, ())), generation=1, rack=member_racks[m])
        for m, s in subs.items()
    }


def test_rack_aware_cooperative_rounds_never_two_owners() -> None:
    rng = random.Random(881)
    for _ in range(40):
        ppt = {f"t{i}": rng.randint(1, 12) for i in range(rng.randint(1, 4))}
        topics = list(ppt)
        racks = {
            TP(t, p): set(rng.sample(["a", "b", "c"], rng.randint(1, 2))) for t in ppt for p in range(ppt[t])
        }
        subs = {f"C{i}": rng.sample(topics, rng.randint(1, len(topics))) for i in range(rng.randint(1, 6))}
        member_racks = {m: rng.choice(["a", "b", "c", None]) for m in subs}
        prev = assign_sticky(
            ppt, {m: Member(s, rack=member_racks[m]) for m, s in subs.items()}, partition_racks=racks
        )
        subs[f"C{len(subs)}"] = topics  # a newcomer
        member_racks[f"C{len(subs) - 1}"] = "a"
        owned = {m: set(v) for m, v in prev.items()}

        first = assign_cooperative_sticky(ppt, _racked(subs, member_racks, owned), partition_racks=racks)
        claimants = _owners(owned)
        for m, tps in first.items():
            for tp in tps:
                assert [o for o in claimants.get(tp, []) if o != m] == []
        # Java's own target (replayed for small groups) may withhold again in round two: rounds go on
        # (never two owners) until nothing is withheld, within a few rounds
        after = {m: set(v) for m, v in first.items()}
        for _round in range(4):
            following = assign_cooperative_sticky(
                ppt, _racked(subs, member_racks, after), partition_racks=racks
            )
            claimants = _owners(after)
            for m, tps in following.items():
                for tp in tps:
                    assert [o for o in claimants.get(tp, []) if o != m] == []
            if {m: set(v) for m, v in following.items()} == after:
                break
            after = {m: set(v) for m, v in following.items()}
        assert problems(ppt, _racked(subs, member_racks, after), following) == []
