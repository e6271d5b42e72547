"""Partition → consumer checks: range, roundrobin (exact), the sticky family (exact on equal
subscriptions, quality rules elsewhere), cooperative rounds to the fixed point."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kafka_placement.assignment.assignment_quality import balance_score
from kafka_placement.conformance import checks, group_scenarios
from kafka_placement.conformance.bridge import JavaError, JavaReference
from kafka_placement.conformance.outcome import Agreement, OursUnavailable, ReferenceAnomaly, _ours
from kafka_placement.vocabulary import Member, TopicPartition

#: Cooperative rebalances run per side before comparing (each stops earlier at its fixed point).
MAX_COOPERATIVE_ROUNDS = 4


def _agreement(
    java: Mapping[str, Sequence[TopicPartition]],
    ours: Mapping[str, Sequence[TopicPartition]],
    s: group_scenarios.GroupScenario,
    java_moves: int,
    our_moves: int,
) -> Agreement:
    if checks.normalized(java) == checks.normalized(ours):
        return Agreement("equal to Java")
    better = []
    if balance_score(ours) < balance_score(java):
        better.append("balance")
    if our_moves < java_moves:
        better.append("moves")
    if checks.rack_aware(s) and checks.off_rack(s, ours) < checks.off_rack(s, java):
        better.append("racks")
    if better:
        return Agreement("better than Java (" + ", ".join(better) + ")")
    return Agreement("as good as Java, another assignment")


# ---- partition -> consumer --------------------------------------------------------------------------
def _our_assign(strategy: str, s: group_scenarios.GroupScenario) -> dict[str, list[TopicPartition]]:
    assign = _ours("kafka_placement.assignment", "assign")
    result: dict[str, list[TopicPartition]] = assign(
        strategy, s.partitions_per_topic, s.members, partition_racks=s.partition_racks()
    )
    return result


def _java_assign(ref: JavaReference, strategy: str, s: group_scenarios.GroupScenario) -> Any:
    return ref.assign(
        strategy, s.partitions_per_topic, s.members, replicas=s.replicas, broker_racks=s.broker_racks
    )


def _exact_assignment(ref: JavaReference, strategy: str, s: group_scenarios.GroupScenario) -> str | None:
    java = _java_assign(ref, strategy, s)
    if isinstance(java, JavaError):
        return f"Java threw {java.class_name}: {java.message}"
    try:
        ours = checks.normalized(_our_assign(strategy, s))
    except OursUnavailable:
        raise
    except Exception as exc:
        return f"ours crashed with {type(exc).__name__}: {exc}"
    java = checks.normalized(java)
    if ours == java:
        return None
    differing = {
        m: (java.get(m), ours.get(m)) for m in sorted(set(java) | set(ours)) if java.get(m) != ours.get(m)
    }
    return "assignment differs (member: (Java, ours)): " + repr(differing)


def check_range(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    s = group_scenarios.group_scenario(rng, racks=False)
    return s, _exact_assignment(ref, "range", s)


def check_range_rack(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    s = group_scenarios.group_scenario(rng, racks=True)
    return s, _exact_assignment(ref, "range", s)


def check_roundrobin(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    s = group_scenarios.group_scenario(rng, racks=False)
    return s, _exact_assignment(ref, "roundrobin", s)


def _quality(
    s: group_scenarios.GroupScenario,
    java: Mapping[str, Sequence[TopicPartition]],
    ours: Mapping[str, Sequence[TopicPartition]],
    java_moves: int,
    our_moves: int,
) -> list[str]:
    out = []
    java_score, our_score = balance_score(java), balance_score(ours)
    if our_score > java_score:
        out.append(f"less balanced: balance score Java {java_score}, ours {our_score}")
    if our_moves > java_moves:
        trade = f" (balance score Java {java_score}, ours {our_score})"
        out.append(f"moves more: Java moved {java_moves} partitions, ours {our_moves}{trade}")
    return out


def check_sticky(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    s = group_scenarios.sticky_scenario(rng, racks=rng.random() < 0.3)
    return s, _sticky_quality(ref, s)


def _sticky_quality(ref: JavaReference, s: group_scenarios.GroupScenario) -> str | None:
    """Ours valid; where Java's result is valid: balance score, moves and (where KIP-881 applies)
    partitions off their consumer's rack each no worse than Java's."""
    java = _java_assign(ref, "sticky", s)
    try:
        ours = _our_assign("sticky", s)
    except OursUnavailable:
        raise
    except Exception as exc:
        return f"ours crashed with {type(exc).__name__}: {exc}"
    out = [f"ours invalid: {p}" for p in checks.problems(s.partitions_per_topic, s.members, ours)]
    if isinstance(java, JavaError):
        if out:
            return "; ".join([*out, f"(Java threw {java.class_name}: {java.message})"])
        return ReferenceAnomaly(f"Java threw {java.class_name}: {java.message}; ours valid")
    java_problems = checks.problems(s.partitions_per_topic, s.members, java)
    if java_problems:
        if out:
            return "; ".join(out + [f"(Java invalid too: {p})" for p in java_problems])
        return ReferenceAnomaly("Java invalid, ours valid: " + "; ".join(java_problems))
    java_moves, our_moves = checks.moves(s.members, java), checks.moves(s.members, ours)
    out += _quality(s, java, ours, java_moves, our_moves)
    # racks only count where KIP-881's rack-aware logic applies (elsewhere Java ignores them too)
    java_off = our_off = 0
    if checks.rack_aware(s):
        java_off, our_off = checks.off_rack(s, java), checks.off_rack(s, ours)
    if our_off > java_off:
        out.append(f"more partitions off their consumer's rack: Java {java_off}, ours {our_off}")
    return "; ".join(out) or _agreement(java, ours, s, java_moves, our_moves)


def check_sticky_equal(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    """Equal subscriptions, no racks (Java's ConstrainedAssignmentBuilder), stale members and
    zombies included: exact equality with Java."""
    s = group_scenarios.sticky_scenario(rng, racks=False, equal=True)
    return s, _exact_assignment(ref, "sticky", s)


def check_sticky_rack_equal(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    """Equal subscriptions with consumer and replica racks (KIP-881; Java's rack-aware
    ConstrainedAssignmentBuilder, deterministic): half of the groups fresh, half after a previous
    rebalance (stale members and zombies included): exact equality with Java."""
    s = group_scenarios.sticky_scenario(rng, racks=True, equal=True)
    if rng.random() < 0.5:
        s = group_scenarios.without_history(s)
    return s, _exact_assignment(ref, "sticky", s)


def check_sticky_rack_fresh(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    """A group's first assignment with consumer and replica racks, any subscriptions: exact equality
    with Java where KIP-881's rack-aware logic applies (Java's result is deterministic then); the
    sticky quality criteria where it does not."""
    s = group_scenarios.without_history(group_scenarios.sticky_scenario(rng, racks=True))
    if checks.rack_aware(s):
        return s, _exact_assignment(ref, "sticky", s)
    return s, _sticky_quality(ref, s)


def check_cooperative_sticky_equal(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    """Equal subscriptions, no racks, no conflicting claims: one cooperative rebalance, exact
    equality with Java (conflicting claims are covered by ``cooperative-sticky``)."""
    s = group_scenarios.sticky_scenario(rng, racks=False, conflicts=False, equal=True)
    return s, _exact_assignment(ref, "cooperative-sticky", s)


def _next_round(
    s: group_scenarios.GroupScenario, assignment: Mapping[str, Sequence[TopicPartition]]
) -> group_scenarios.GroupScenario:
    members = {
        m: Member(member.topics, owned=assignment.get(m, ()), generation=s.generation, rack=member.rack)
        for m, member in s.members.items()
    }
    return group_scenarios.GroupScenario(
        s.partitions_per_topic, members, s.replicas, s.broker_racks, s.generation + 1
    )


def _cooperative_rounds(
    run: Callable[[group_scenarios.GroupScenario], Any], s: group_scenarios.GroupScenario, side: str
) -> tuple[dict[str, list[TopicPartition]] | None, list[str]]:
    """Rebalances until the assignment stops changing (at most :data:`MAX_COOPERATIVE_ROUNDS`);
    returns (final assignment, problems). A partition changing owner needs two rounds, and with
    pending revocations the first round is not comparable, so both sides run to their fixed point."""
    problems: list[str] = []
    current = s
    result: Any = None
    previous: dict[str, list[TopicPartition]] | None = None
    for round_no in range(1, MAX_COOPERATIVE_ROUNDS + 1):
        result = run(current)
        if isinstance(result, JavaError):
            return None, [f"{side} round {round_no}: Java threw {result.class_name}: {result.message}"]
        normalized = checks.normalized(result)
        if normalized == previous:
            break
        previous = normalized
        problems += [
            f"{side} round {round_no}: {p}"
            for p in checks.problems(s.partitions_per_topic, current.members, result, complete=False)
        ]
        problems += [
            f"{side} round {round_no}: {p}" for p in checks.cooperative_problems(current.members, result)
        ]
        current = _next_round(current, result)
    return result, problems


def check_cooperative_sticky(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    s = group_scenarios.sticky_scenario(rng, racks=rng.random() < 0.3)
    java_final, java_problems = _cooperative_rounds(
        lambda c: _java_assign(ref, "cooperative-sticky", c), s, "Java"
    )
    try:
        our_final, our_problems = _cooperative_rounds(
            lambda c: _our_assign("cooperative-sticky", c), s, "ours"
        )
    except OursUnavailable:
        raise
    except Exception as exc:
        return s, f"ours crashed with {type(exc).__name__}: {exc}"
    assert our_final is not None
    out = list(our_problems)
    if java_final is None:  # Java threw
        if out:
            return s, "; ".join(out + java_problems)
        return s, ReferenceAnomaly("; ".join(java_problems) + "; ours valid")
    if java_problems:
        if out:
            return s, "; ".join(out + [f"(Java invalid too: {p})" for p in java_problems])
        return s, ReferenceAnomaly("Java invalid, ours valid: " + "; ".join(java_problems))
    if not out:
        before = {tp: m for tp, m in checks.previous_owners(s.members).items() if m in s.members}
        java_left = checks.unassigned_count(s.partitions_per_topic, s.members, java_final)
        our_left = checks.unassigned_count(s.partitions_per_topic, s.members, our_final)
        java_moves = checks.moves_between(before, java_final)
        our_moves = checks.moves_between(before, our_final)
        if our_left > java_left:
            out.append(f"when stable ours leaves {our_left} partitions unassigned, Java {java_left}")
        elif our_left < java_left:
            # Java's fixed point leaves partitions nobody consumes: balance scores are not comparable
            if our_moves > java_moves:
                out.append(f"moves more: Java moved {java_moves} partitions, ours {our_moves}")
            else:
                return s, ReferenceAnomaly(
                    f"Java leaves {java_left} partitions unassigned when stable, ours {our_left}"
                )
        else:
            out += _quality(s, java_final, our_final, java_moves, our_moves)
            if not out:
                return s, _agreement(java_final, our_final, s, java_moves, our_moves)
    return s, "; ".join(out) or None
