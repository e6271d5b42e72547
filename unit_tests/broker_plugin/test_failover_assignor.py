"""The broker-side failover assignor (Java, compiled by our tooling) against the Python rule.

Random groups (members with and without priorities, malformed and over-long racks, ties, astral
characters in ids and racks, topics missing or empty, homogeneous and heterogeneous subscriptions) go
through ``FailoverServerAssignor`` inside the broker's own ``GroupSpecImpl`` and through
:func:`assign_failover` on the priorities :func:`decode_rack_priority` reads: 0 mismatches. 10,000 groups
in CI (``CI=true``) or with ``--full``; a sample otherwise. The parse and the replica selector are held
to the Python decode the same way.
"""

from __future__ import annotations

import os
import random

from unit_tests.broker_plugin.harness import Harness, assign_request, hex_text, owners, parsed

from kafka_placement.assignment.failover import assign_failover
from kafka_placement.assignment.rack_priority import MAX_RACK_CHARS, decode_rack_priority
from kafka_placement.vocabulary import Member

GROUPS = 10_000 if os.environ.get("CI") == "true" else 1_500
SEED = 20261126

ID_ALPHABET = "abcAB01-_é\u00ff\u0100\uffff\U0001f600\U00010000"
RACKS = ["az1", "use1-az2", "/dc1/rack7", "r#x", "", "Ω", "\U0001f600rack"]
MALFORMED = [
    "",
    "-",
    "+5",
    "1.5",
    "ten",
    " 5",
    "5 ",
    "\u0661",
    "٣",
    "--1",
    "-0x1",
    "2147483648",
    "-2147483649",
    "00000000005",
    "99999999999999999999",
    "5#",
    "\U0001d7d9",
]


def random_id(rng: random.Random) -> str:
    return "".join(rng.choice(ID_ALPHABET) for _ in range(rng.randint(1, 6)))


def random_rack(rng: random.Random, priorities: list[int]) -> str | None:
    kind = rng.random()
    rack = rng.choice([*RACKS, ""]) if rng.random() < 0.6 else ""
    if kind < 0.08:
        return None
    if kind < 0.16:
        return rng.choice(RACKS)
    if kind < 0.62:  # well formed; small pool so ties are common
        return f"{rack}#priority={rng.choice(priorities)}"
    if kind < 0.72:
        return f"{rack}#priority={rng.choice(MALFORMED)}"
    if kind < 0.78:  # the last separator wins
        return f"{rack}#priority={rng.choice([*MALFORMED, '3'])}#priority={rng.choice(priorities)}"
    if kind < 0.84:  # around the length limit, astral characters counting once
        suffix = f"#priority={rng.choice(priorities)}"
        filler = rng.choice(["x", "\U0001f600"])
        length = MAX_RACK_CHARS - len(suffix) + rng.choice([-1, 0, 1, 2])
        return filler * length + suffix
    if kind < 0.90:
        edge = rng.choice([2**31 - 1, -(2**31), 0, -1, 1])
        return f"{rack}#priority={edge:+d}".replace("+", "", 1 if rng.random() < 0.9 else 0)
    return f"{rack}#priority={rng.randint(-(2**31), 2**31 - 1)}"


def random_group(rng: random.Random) -> tuple[list[int], list[tuple[str, str | None, list[int]]]]:
    n_topics = rng.randint(1, 6)
    counts = [rng.choice([-1, 0, 1, 2, 3, 7, 16, 50]) for _ in range(n_topics)]
    n_members = rng.choice([1, 2, 3, 4, 6, 10, 25])
    priorities = [rng.randint(-3, 3) for _ in range(rng.randint(1, 3))]
    homogeneous = rng.random() < 0.4
    shared = sorted(rng.sample(range(n_topics), rng.randint(1, n_topics)))
    members: dict[str, tuple[str | None, list[int]]] = {}
    while len(members) < n_members:
        topics = shared if homogeneous else sorted(rng.sample(range(n_topics), rng.randint(1, n_topics)))
        members[random_id(rng)] = (random_rack(rng, priorities), topics)
    return counts, [(mid, rack, topics) for mid, (rack, topics) in members.items()]


Group = list[tuple[str, str | None, list[int]]]


def python_owners(counts: list[int], members: Group) -> list[frozenset[int]]:
    vocabulary = {
        mid: Member([f"t{t}" for t in topics], priority=decode_rack_priority(rack).priority)
        for mid, rack, topics in members
    }
    result = assign_failover({f"t{t}": c for t, c in enumerate(counts)}, vocabulary)
    owners = []
    for mid, _, _ in members:
        by_topic: dict[int, list[int]] = {}
        for tp in result[mid]:
            by_topic.setdefault(int(tp.topic[1:]), []).append(tp.partition)
        for t, partitions in by_topic.items():  # the Python side gives whole topics too
            assert partitions == list(range(counts[t]))
        owners.append(frozenset(by_topic))
    return owners


def test_differential_random_groups(harness: Harness) -> None:
    rng = random.Random(SEED)
    groups = [random_group(rng) for _ in range(GROUPS)]
    requests = [
        assign_request(counts, members, homogeneous=len({tuple(t) for _, _, t in members}) == 1)
        for counts, members in groups
    ]
    answers = harness.ask_many(requests)
    mismatches = []
    for index, ((counts, members), answer) in enumerate(zip(groups, answers, strict=True)):
        java, python = owners(answer), python_owners(counts, members)
        if java != python:
            mismatches.append((index, counts, members, java, python))
    assert not mismatches, f"{len(mismatches)} of {GROUPS} groups differ; first: {mismatches[0]}"


def test_heterogeneous_flag_on_identical_subscriptions_agrees(harness: Harness) -> None:
    # the coordinator may call with HETEROGENEOUS although every member happens to subscribe the same
    members = [("b", "#priority=1", [0, 1]), ("a", "#priority=1", [0, 1]), ("c", None, [0, 1])]
    assert harness.assign([3, 2], members, homogeneous=False) == [frozenset(), frozenset({0, 1}), frozenset()]
    assert harness.assign([3, 2], members, homogeneous=True) == [frozenset(), frozenset({0, 1}), frozenset()]


def test_empty_group_and_unknown_topics(harness: Harness) -> None:
    assert harness.assign([4], [], homogeneous=True) == []
    assert harness.assign([-1, 0], [("m", "#priority=9", [0, 1])], homogeneous=True) == [frozenset()]


def test_parse_matches_python_decode(harness: Harness) -> None:
    rng = random.Random(SEED + 1)
    values: list[str | None] = [
        None,
        "",
        "#priority=",
        "a#priority=5",
        "#priority=-0",
        "x" * 2000,
        "\U0001f600" * 1024,
        "\U0001f600" * 1025,
        "r#priority=\n5",
    ]
    values += [random_rack(rng, [-2, 0, 7]) for _ in range(2_000)]
    answers = harness.ask_many([f"P {hex_text(value)}" for value in values])
    for value, answer in zip(values, answers, strict=True):
        decoded = decode_rack_priority(value)
        assert parsed(answer) == (decoded.priority, decoded.rack, decoded.problem is not None), value


def test_replica_selector_reads_the_rack_before_the_priority(harness: Harness) -> None:
    rng = random.Random(SEED + 2)
    values: list[str | None] = [
        None,
        "",
        "az1",
        "az1#priority=10",
        "#priority=3",
        "az1#priority=x",
        "leader-rack#priority=1",
        "y" * 1100 + "#priority=1",
    ]
    values += [random_rack(rng, [1, 2]) for _ in range(500)]
    for value in values:
        rack = decode_rack_priority(value).rack
        # Kafka's RackAwareReplicaSelector: a replica in the client's rack, the leader when the leader is
        # in it too or when no replica is (or the client names no rack)
        expected = 1 if rack and rack != "leader-rack" else 0
        assert harness.select(value) == expected, value
