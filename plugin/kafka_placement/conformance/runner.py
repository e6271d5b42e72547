"""One differential check per algorithm: random scenario → Java reference vs ours → mismatch or not.

Exact-equality checks (results and, where Java throws, exception class and message to the
letter): ``murmur2``, ``partition-for-key``, ``librdkafka`` (confluent-kafka's helpers),
``range``, ``range-rack`` (KIP-881), ``roundrobin``, ``sticky-equal`` and
``cooperative-sticky-equal`` (equal subscriptions without racks: Java's constrained builder),
``adminutils`` (fixed start index), ``adminutils-random`` (Java's static Random reseeded),
``striped``.

Quality checks for the sticky family, where many answers are right: ours must be valid, never
less balanced (KIP-54 balance score) and never move more partitions than Java on the same input.
``cooperative-sticky`` runs rebalances on each side until its assignment stops changing (KIP-429:
revoke first, then reassign), checks that no partition has two owners at once in any round, and
compares the final states.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka_placement.assignment.metrics import balance_score
from kafka_placement.conformance import checks, scenarios
from kafka_placement.conformance.bridge import JavaError, JavaReference, reference
from kafka_placement.errors import KafkaPlacementError
from kafka_placement.vocabulary import Member, TopicPartition

#: Every algorithm the runner knows, in report order.
ALGORITHMS: tuple[str, ...] = (
    "murmur2",
    "partition-for-key",
    "librdkafka",
    "range",
    "range-rack",
    "roundrobin",
    "sticky",
    "sticky-equal",
    "sticky-rack-equal",
    "sticky-rack-fresh",
    "cooperative-sticky",
    "cooperative-sticky-equal",
    "adminutils",
    "adminutils-random",
    "striped",
)

#: Cooperative rebalances run per side before comparing (each stops earlier at its fixed point).
MAX_COOPERATIVE_ROUNDS = 4

#: Kept per algorithm in a result; the count of mismatches is always exact.
MAX_KEPT_MISMATCHES = 5


class ReferenceAnomaly(str):
    """A check outcome where Java's own result broke an invariant but ours did not: not counted as
    a mismatch of ours, counted and reported separately."""


class Agreement(str):
    """A passing outcome of a quality check, with how ours compares (``equal to Java`` or
    ``better than Java: ...``): counted per label in the result, not a mismatch."""


#: The criterion of each quality-checked algorithm (printed by the CLI with the outcome counts).
RULES: dict[str, str] = {
    "sticky": (
        "ours valid; where Java's result is valid: balance score, partitions moved and (KIP-881) "
        "partitions off their consumer's rack each <= Java's"
    ),
    "sticky-rack-fresh": ("equal to Java where KIP-881 rack-aware logic applies; elsewhere the sticky rule"),
    "cooperative-sticky": (
        "rounds to the fixed point: never two owners; ours valid; where Java's rounds stay valid: "
        "final balance score, moves and unassigned partitions each <= Java's"
    ),
}


def _agreement(
    java: Mapping[str, Sequence[TopicPartition]],
    ours: Mapping[str, Sequence[TopicPartition]],
    s: scenarios.GroupScenario,
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


class OursUnavailable(Exception):
    """Our implementation of an algorithm cannot be imported (not written yet, or broken)."""


@dataclass(frozen=True)
class Mismatch:
    algorithm: str
    index: int
    scenario: Any
    detail: str

    def __str__(self) -> str:
        return f"{self.algorithm} #{self.index}: {self.detail}\n    scenario: {self.scenario!r}"


@dataclass
class AlgorithmResult:
    algorithm: str
    scenarios: int = 0
    mismatches: int = 0
    examples: list[Mismatch] = field(default_factory=list)
    seconds: float = 0.0
    unavailable: str | None = None
    reference_anomalies: int = 0
    anomaly_examples: list[Mismatch] = field(default_factory=list)
    #: mismatch count per kind (see :func:`mismatch_kind`)
    kinds: dict[str, int] = field(default_factory=dict)
    #: passing outcomes of quality checks per label (see :class:`Agreement`)
    agreements: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.unavailable is None and self.mismatches == 0

    def line(self) -> str:
        text = f"{self.algorithm}: scenarios={self.scenarios} mismatches={self.mismatches}"
        if self.unavailable:
            text += f" (ours unavailable: {self.unavailable})"
        return text


Check = Callable[[JavaReference, random.Random], "tuple[Any, str | None]"]  # detail may be a ReferenceAnomaly


# ---- adapters to our code (imported lazily: a missing module is reported, not fatal) --------------
def _ours(module: str, name: str) -> Any:
    import importlib

    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise OursUnavailable(f"{module}.{name}: {exc}") from exc


def _exception_kind(name: str) -> str:
    for suffix in ("Exception", "Error"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _compare_outcome(java: Any, ours_call: Callable[[], Any]) -> str | None:
    """Run ours; compare with Java's result or exception (class meaning and message)."""
    try:
        ours = ours_call()
    except KafkaPlacementError as exc:
        if not isinstance(java, JavaError):
            return f"ours raised {type(exc).__name__}: {exc}; Java returned {java!r}"
        if (
            _exception_kind(type(exc).__name__) != _exception_kind(java.class_name)
            or str(exc) != java.message
        ):
            return (
                f"exception differs: Java {java.class_name}: {java.message!r}; "
                f"ours {type(exc).__name__}: {str(exc)!r}"
            )
        return None
    except Exception as exc:  # an untyped crash is always a mismatch
        return f"ours crashed with {type(exc).__name__}: {exc}; Java gave {java!r}"
    if isinstance(java, JavaError):
        return f"Java threw {java.class_name}: {java.message!r}; ours returned {ours!r}"
    if ours != java:
        return f"result differs: Java {java!r}; ours {ours!r}"
    return None


# ---- key -> partition -------------------------------------------------------------------------------
def check_murmur2(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    """``Utils.murmur2`` vs our scalar ``murmur2`` on every key of a batch."""
    murmur2 = _ours("kafka_placement.partitioning", "murmur2")
    s = scenarios.key_batch_scenario(rng)
    problems = []
    for key in s.keys:
        java, ours = ref.murmur2(key), murmur2(key)
        if java != ours:
            problems.append(f"Utils.murmur2({key!r}) = {java}, ours = {ours}")
    return s, "; ".join(problems[:3]) or None


def check_partition_for_key(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    """``BuiltInPartitioner.partitionForKey`` vs our scalar ``partition_key`` and our vectorized
    ``partition_keys`` over the whole batch."""
    partition_key = _ours("kafka_placement.partitioning", "partition_key")
    partition_keys = _ours("kafka_placement.partitioning", "partition_keys")
    s = scenarios.key_batch_scenario(rng)
    vectorized = [int(p) for p in partition_keys(list(s.keys), s.num_partitions, scheme="murmur2")]
    problems = []
    for key, batched in zip(s.keys, vectorized, strict=True):
        java = ref.partition_for_key(key, s.num_partitions)
        scalar = int(partition_key(key, s.num_partitions, "murmur2"))
        if not java == scalar == batched:
            problems.append(f"partitionForKey({key!r}) = {java}, ours scalar {scalar}, vectorized {batched}")
    return s, "; ".join(problems[:3]) or None


def check_librdkafka(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    """confluent-kafka's helpers (librdkafka's own partitioners) vs our schemes of the same name,
    scalar and vectorized."""
    partition_key = _ours("kafka_placement.partitioning", "partition_key")
    partition_keys = _ours("kafka_placement.partitioning", "partition_keys")
    try:
        import confluent_kafka
    except ImportError as exc:  # pragma: no cover - the confluent extra installs it
        raise OursUnavailable(f"confluent-kafka not installed: {exc}") from exc
    s = scenarios.key_batch_scenario(rng)
    problems = []
    for scheme in ("murmur2", "consistent", "fnv1a"):
        helper = getattr(confluent_kafka, scheme)
        vectorized = [int(p) for p in partition_keys(list(s.keys), s.num_partitions, scheme=scheme)]
        for key, batched in zip(s.keys, vectorized, strict=True):
            theirs = int(helper(key, s.num_partitions))
            scalar = int(partition_key(key, s.num_partitions, scheme))
            if not theirs == scalar == batched:
                problems.append(
                    f"{scheme}({key!r}): confluent_kafka.{scheme} = {theirs}, ours scalar {scalar}, "
                    f"vectorized {batched}"
                )
    return s, "; ".join(problems[:3]) or None


# ---- partition -> consumer --------------------------------------------------------------------------
def _our_assign(strategy: str, s: scenarios.GroupScenario) -> dict[str, list[TopicPartition]]:
    assign = _ours("kafka_placement.assignment", "assign")
    result: dict[str, list[TopicPartition]] = assign(
        strategy, s.partitions_per_topic, s.members, partition_racks=s.partition_racks()
    )
    return result


def _java_assign(ref: JavaReference, strategy: str, s: scenarios.GroupScenario) -> Any:
    return ref.assign(
        strategy, s.partitions_per_topic, s.members, replicas=s.replicas, broker_racks=s.broker_racks
    )


def _exact_assignment(ref: JavaReference, strategy: str, s: scenarios.GroupScenario) -> str | None:
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
    s = scenarios.group_scenario(rng, racks=False)
    return s, _exact_assignment(ref, "range", s)


def check_range_rack(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    s = scenarios.group_scenario(rng, racks=True)
    return s, _exact_assignment(ref, "range", s)


def check_roundrobin(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    s = scenarios.group_scenario(rng, racks=False)
    return s, _exact_assignment(ref, "roundrobin", s)


def _quality(
    s: scenarios.GroupScenario,
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
    s = scenarios.sticky_scenario(rng, racks=rng.random() < 0.3)
    return s, _sticky_quality(ref, s)


def _sticky_quality(ref: JavaReference, s: scenarios.GroupScenario) -> str | None:
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
    s = scenarios.sticky_scenario(rng, racks=False, equal=True)
    return s, _exact_assignment(ref, "sticky", s)


def check_sticky_rack_equal(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    """Equal subscriptions with consumer and replica racks (KIP-881; Java's rack-aware
    ConstrainedAssignmentBuilder, deterministic): half of the groups fresh, half after a previous
    rebalance (stale members and zombies included): exact equality with Java."""
    s = scenarios.sticky_scenario(rng, racks=True, equal=True)
    if rng.random() < 0.5:
        s = scenarios.without_history(s)
    return s, _exact_assignment(ref, "sticky", s)


def check_sticky_rack_fresh(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    """A group's first assignment with consumer and replica racks, any subscriptions: exact equality
    with Java where KIP-881's rack-aware logic applies (Java's result is deterministic then); the
    sticky quality criteria where it does not."""
    s = scenarios.without_history(scenarios.sticky_scenario(rng, racks=True))
    if checks.rack_aware(s):
        return s, _exact_assignment(ref, "sticky", s)
    return s, _sticky_quality(ref, s)


def check_cooperative_sticky_equal(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    """Equal subscriptions, no racks, no conflicting claims: one cooperative rebalance, exact
    equality with Java (conflicting claims are covered by ``cooperative-sticky``)."""
    s = scenarios.sticky_scenario(rng, racks=False, conflicts=False, equal=True)
    return s, _exact_assignment(ref, "cooperative-sticky", s)


def _next_round(
    s: scenarios.GroupScenario, assignment: Mapping[str, Sequence[TopicPartition]]
) -> scenarios.GroupScenario:
    members = {
        m: Member(member.topics, owned=assignment.get(m, ()), generation=s.generation, rack=member.rack)
        for m, member in s.members.items()
    }
    return scenarios.GroupScenario(
        s.partitions_per_topic, members, s.replicas, s.broker_racks, s.generation + 1
    )


def _cooperative_rounds(
    run: Callable[[scenarios.GroupScenario], Any], s: scenarios.GroupScenario, side: str
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
    s = scenarios.sticky_scenario(rng, racks=rng.random() < 0.3)
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


# ---- replica -> broker ----------------------------------------------------------------------------------
def check_adminutils(ref: JavaReference, rng: random.Random) -> tuple[Any, str | None]:
    assign = _ours("kafka_placement.replicas", "assign_replicas_to_brokers")
    broker_cls = _ours("kafka_placement.replicas", "Broker")
    s = scenarios.admin_utils_scenario(rng)
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
    s = scenarios.admin_utils_scenario(rng)
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
    s = scenarios.striped_scenario(rng)
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


def _identity_orders(s: scenarios.StripedScenario, rng: random.Random) -> Iterator[list[str | None]]:
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


CHECKS: dict[str, Check] = {
    "murmur2": check_murmur2,
    "partition-for-key": check_partition_for_key,
    "librdkafka": check_librdkafka,
    "range": check_range,
    "range-rack": check_range_rack,
    "roundrobin": check_roundrobin,
    "sticky": check_sticky,
    "sticky-equal": check_sticky_equal,
    "sticky-rack-equal": check_sticky_rack_equal,
    "sticky-rack-fresh": check_sticky_rack_fresh,
    "cooperative-sticky": check_cooperative_sticky,
    "cooperative-sticky-equal": check_cooperative_sticky_equal,
    "adminutils": check_adminutils,
    "adminutils-random": check_adminutils_random,
    "striped": check_striped,
}


_BALANCE = re.compile(r"balance score Java (\d+), ours (\d+)")


def mismatch_kind(detail: str) -> str:
    """A short class of a mismatch, for the per-algorithm breakdown."""
    if "crashed" in detail:
        return "ours crashed"
    if "invalid" in detail or ("while" in detail and "still owns" in detail):
        return "ours invalid"
    if "less balanced" in detail:
        return "less balanced"
    if "unassigned" in detail:
        return "leaves more unassigned"
    if "moves more" in detail:
        match = _BALANCE.search(detail)
        if match and int(match[2]) < int(match[1]):
            return "moves more for a strictly better balance"
        return "moves more"
    if "exception" in detail or "threw" in detail or "raised" in detail:
        return "exception differs"
    return "result differs"


def run_algorithm(
    algorithm: str,
    count: int,
    seed: int,
    *,
    ref: JavaReference | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> AlgorithmResult:
    """``count`` seeded scenarios of one algorithm; scenario ``i`` is replayable alone."""
    check = CHECKS[algorithm]
    ref = ref or reference()
    result = AlgorithmResult(algorithm)
    started = time.monotonic()
    for index in range(count):
        try:
            scenario, detail = check(ref, scenarios.scenario_rng(seed, algorithm, index))
        except OursUnavailable as exc:
            result.unavailable = str(exc)
            break
        result.scenarios += 1
        if isinstance(detail, Agreement):
            result.agreements[detail] = result.agreements.get(detail, 0) + 1
        elif isinstance(detail, ReferenceAnomaly):
            result.reference_anomalies += 1
            if len(result.anomaly_examples) < MAX_KEPT_MISMATCHES:
                result.anomaly_examples.append(Mismatch(algorithm, index, scenario, detail))
        elif detail is not None:
            result.mismatches += 1
            kind = mismatch_kind(detail)
            result.kinds[kind] = result.kinds.get(kind, 0) + 1
            if len(result.examples) < MAX_KEPT_MISMATCHES:
                result.examples.append(Mismatch(algorithm, index, scenario, detail))
        if progress is not None:
            progress(algorithm, index + 1, count)
    result.seconds = time.monotonic() - started
    return result


def run(
    algorithms: Iterable[str] = ALGORITHMS,
    count: int = 200,
    seed: int = 0,
    *,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[AlgorithmResult]:
    ref = reference()
    return [run_algorithm(a, count, seed, ref=ref, progress=progress) for a in algorithms]


def replay(algorithm: str, seed: int, index: int) -> tuple[Any, str | None]:
    """Re-run one scenario (as printed in a mismatch) for debugging."""
    return CHECKS[algorithm](reference(), scenarios.scenario_rng(seed, algorithm, index))
