"""The Java client-side failover assignor against our Python leader, on the same JoinGroup bytes.

Random groups (priorities absent, edge and tied; userData of every length, hostile included; member ids from
all of Unicode; unequal subscriptions; topics unknown or empty; racks with and without a visible priority) go
as v3 subscriptions through Kafka's own ``ConsumerProtocol`` into
``io.kafkaplacement.client.FailoverAssignor`` and, decoded by kafka-python, into our kafka-python
``FailoverAssignor``: every member's topics and assignment userData agree, for a protected and a
migration-ready leader. Expected values come from our Python leader, itself held to an independent Java oracle
(unit_tests/conformance, integration_tests/test_java_mixed_group_live.py); that oracle, the test suite's own
Java ``FailoverAssignor``, is compared directly where it applies (userData it reads the same: none, empty or 4
bytes). 10,000 groups in CI (``CI=true``); a sample otherwise.
"""

from __future__ import annotations

import os
import random

from unit_tests.client_assignor.harness import ClientHarness, assign_request, assigned, parse_answer
from unit_tests.client_assignor.wire import python_leader, python_subscription, raw_subscription

from kafka_placement.assignment.userdata import encode_priority

GROUPS = 10_000 if os.environ.get("CI") == "true" else 1_500
SEED = 20261129
EDGES = [2**31 - 1, -(2**31), 0, -1, 1]
RACKS = [None, "az1", "", "r#x", "\U0001f600rack"]


def random_id(rng: random.Random) -> str:
    """1-6 code points from all of Unicode but the surrogates (a Java String of UTF-16 units either way)."""
    chars = []
    for _ in range(rng.randint(1, 6)):
        kind = rng.random()
        if kind < 0.4:
            chars.append(rng.choice("abcAB01-_"))
        elif kind < 0.7:
            chars.append(chr(rng.choice([rng.randint(0x80, 0xD7FF), rng.randint(0xE000, 0xFFFF)])))
        else:
            chars.append(chr(rng.randint(0x10000, 0x10FFFF)))
    return "".join(chars)


def random_member(rng: random.Random, topics: list[str], pool: list[int]) -> tuple[bytes, bool]:
    """(subscription bytes, whether the oracle reads its userData as we do)."""
    kind = rng.random()
    rack = rng.choice(RACKS)
    priority: int | None = rng.choice([*pool, *pool, rng.choice(EDGES), None])
    if kind < 0.55:  # one of our Python members, protected or migration-ready
        ready = rng.random() < 0.5 and (rack is None or "#" not in rack)
        plain = None if "#" in (rack or "") else rack
        return python_subscription(topics, priority, rack=plain, ready=ready), True
    if kind < 0.7:  # a rack id that carries a priority, matching or not
        seen = rng.choice([priority, rng.choice(pool), None])
        rack_id = f"{rack or ''}#priority={seen}" if seen is not None else rack
        data = None if priority is None else encode_priority(priority)
        return raw_subscription(topics, data, rack_id), True
    if kind < 0.8:
        return raw_subscription(topics, rng.choice([None, b""]), rack), True
    length = rng.choice([1, 2, 3, 5, 6, 7, 8, 64, rng.randint(9, 3000)])  # hostile or foreign userData
    return raw_subscription(topics, rng.randbytes(length), rack), False


def random_group(rng: random.Random) -> tuple[list[int], list[tuple[str, bytes]], bool]:
    n_topics = rng.randint(1, 5)
    counts = [rng.choice([-1, 0, 1, 2, 3, 7, 16]) for _ in range(n_topics)]
    pool = [rng.randint(-3, 3) for _ in range(rng.randint(1, 3))]
    members: dict[str, bytes] = {}
    oracle_applies = True
    for _ in range(rng.choice([1, 2, 3, 4, 6, 10])):
        topics = sorted(rng.sample([f"t{t}" for t in range(n_topics)], rng.randint(1, n_topics)))
        wire, same = random_member(rng, topics, pool)
        members[random_id(rng)] = wire
        oracle_applies &= same
    return counts, list(members.items()), oracle_applies


def test_differential_against_our_python_leader_and_the_java_oracle(client_harness: ClientHarness) -> None:
    rng = random.Random(SEED)
    groups = [(random_group(rng), rng.random() < 0.5) for _ in range(GROUPS)]
    requests = [assign_request("R" if ready else "P", counts, subs) for (counts, subs, _), ready in groups]
    oracle = [
        (i, assign_request("O", counts, subs))
        for i, ((counts, subs, applies), _) in enumerate(groups)
        if applies
    ]
    answers = client_harness.ask_many(requests)
    oracle_lines = client_harness.ask_many([r for _, r in oracle])
    oracle_answers = dict(zip([i for i, _ in oracle], oracle_lines, strict=True))
    mismatches, oracle_mismatches, empty = [], [], 0
    for index, (((counts, subs, _), ready), line) in enumerate(zip(groups, answers, strict=True)):
        java = assigned(parse_answer(line))
        python = python_leader(counts, subs, ready=ready)
        for (mid, _), got in zip(subs, java, strict=True):
            topics, user_data = python[mid]
            if (got.topics, got.user_data) != (topics, user_data):  # empty is not null (ours vs the broker)
                mismatches.append((index, counts, mid, got, python[mid]))
            empty += not got.user_data
        if index in oracle_answers:
            theirs = assigned(parse_answer(oracle_answers[index]))
            if [a.topics for a in theirs] != [a.topics for a in java]:
                oracle_mismatches.append((index, counts, subs))
    assert not mismatches, f"{len(mismatches)} members differ from our Python leader; first: {mismatches[0]}"
    assert not oracle_mismatches, (
        f"{len(oracle_mismatches)} groups differ from the oracle: {oracle_mismatches[0]}"
    )
    # the sample exercised both outcomes of the migration rule and the oracle on most groups
    assert 0 < empty < sum(len(subs) for (_, subs, _), _ in groups)
    assert len(oracle_answers) > GROUPS // 3


def test_hostile_userdata_never_throws_and_warns_once_per_member(client_harness: ClientHarness) -> None:
    rng = random.Random(SEED + 1)
    for length in [1, 2, 3, 5, 7, 8, 100, 70_000]:
        subs = [
            ("good", python_subscription(["t0"], 1)),
            ("bad", raw_subscription(["t0"], rng.randbytes(length), None)),
        ]
        answer = parse_answer(client_harness.ask(assign_request("P", [3], subs)))
        good, bad = assigned(answer)
        assert good.topics == {0} and bad.topics == set()  # the hostile member ranks last, even below 1
        warnings = answer.warnings()
        assert len(warnings) == 1 and "member bad sent unusable failover priority userData" in warnings[0]
        assert f"got {length} bytes" in warnings[0]
    # alone, it still gets everything (ranked last is still a rank), and the leader says why once
    alone = [("bad", raw_subscription(["t0"], b"\1", None))]
    answer = parse_answer(client_harness.ask(assign_request("R", [2], alone)))
    assert [a.topics for a in assigned(answer)] == [{0}] and len(answer.warnings()) == 1
