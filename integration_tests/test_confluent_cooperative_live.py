"""Live proofs of cooperative-sticky (KIP-429) in :class:`kafka_placement.clients.confluent.Consumer`:
members joining move only what the joiner takes, and a member that lost its membership rejoins claiming
nothing (Java's ``ConsumerCoordinator``: ``onPartitionsLost`` empties the owned partitions its next
subscription reports).

Workers are ``confluent_member.py`` subprocesses (``confluent_workers.py``); a confluent-kafka Producer
in this process writes keyed records throughout.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from typing import Any

import pytest

from confluent_workers import (  # this directory is on sys.path
    COMEBACK_BOUND_S,
    PARTITIONS,
    SESSION_TIMEOUT_S,
    KeyedProducer,
    Worker,
    double_owners,
    spawn,  # noqa: F401  (fixture)
    topic,  # noqa: F401  (fixture)
)
from member_process import wait_until

pytestmark = [pytest.mark.integration]


def test_cooperative_sticky_moves_only_what_the_joiner_takes(
    kafka_cluster: Any,
    topic: str,  # noqa: F811  (fixture)
    spawn: Any,  # noqa: F811  (fixture)
    request: pytest.FixtureRequest,
) -> None:
    group = f"cf-coop-{uuid.uuid4().hex[:8]}"
    # records flow until both joins are done, however long the cluster takes
    producer = KeyedProducer(kafka_cluster.bootstrap_servers, topic, rate_per_s=2000, limit=10**9)
    request.addfinalizer(producer.stop)
    a = spawn(group, "a", topic, "cooperative-sticky")
    wait_until(lambda: a.owned() == set(range(PARTITIONS)), 60, "a owning everything")
    members = [a]
    for joiner, sizes in (("b", [3, 3]), ("c", [2, 2, 2])):
        before = {w.name: w.owned() for w in members}
        joined_at = time.time()
        new = spawn(group, joiner, topic, "cooperative-sticky")
        members.append(new)

        def settled(members: list[Worker] = members, sizes: list[int] = sizes) -> bool:
            owned = [w.owned() for w in members]
            return sorted(map(len, owned)) == sizes and set().union(*owned) == set(range(PARTITIONS))

        wait_until(settled, 60, f"{joiner} joined: sizes {sizes}")
        settled_at = time.time()
        taken = new.owned()
        for w in members[:-1]:
            kept = w.owned()
            assert kept == before[w.name] - taken, f"{w.name} lost more than {joiner} took"
            revoked = {
                p for e in w.snapshot() if e["ev"] == "revoke" and e["t"] >= joined_at for p in e["parts"]
            }
            assert revoked == before[w.name] - kept, f"{w.name} revoked {revoked}"
            # it never stopped: records of the partitions it kept kept coming during the rebalance
            during = {
                p
                for e in w.snapshot()
                if e["ev"] == "recs" and joined_at <= e["t"] <= settled_at
                for p, _, _ in e["items"]
            }
            assert kept <= during, f"{w.name}: nothing from {sorted(kept - during)} while {joiner} joined"
            assert all(e["parts"] for e in w.snapshot() if e["ev"] == "assignment" and e["t"] >= joined_at)
        time.sleep(1)
    assert not double_owners(members)
    producer.stop()
    assert producer.failed == 0
    produced = producer.delivered
    wait_until(lambda: produced <= {r for w in members for r in w.records()}, 60, "every record consumed")
    assert {r for w in members for r in w.records()} == produced


def test_a_member_back_after_losing_its_membership_claims_nothing(
    kafka_cluster: Any,
    topic: str,  # noqa: F811  (fixture)
    spawn: Any,  # noqa: F811  (fixture)
    request: pytest.FixtureRequest,
) -> None:
    """SIGSTOP ``b`` past its session: the broker removes it and ``a`` takes everything. After SIGCONT,
    ``b`` learns it lost its partitions (on_lost) and joins again; that JoinGroup's subscription claims no
    partitions (when a third member joined before, it claimed its own: the tap sees claims), and within
    COMEBACK_BOUND_S the group is back to three partitions each, never one partition with two owners. A
    stale claim there made the cooperative leader withhold partitions the claimer never revoked (soak
    seed 44: 12 partitions without an owner for 79 s)."""
    group = f"cf-coop-lost-{uuid.uuid4().hex[:8]}"
    producer = KeyedProducer(kafka_cluster.bootstrap_servers, topic, rate_per_s=2000, limit=10**9)
    request.addfinalizer(producer.stop)
    a = spawn(group, "a", topic, "cooperative-sticky", report_claims=True)
    wait_until(lambda: a.owned() == set(range(PARTITIONS)), 60, "a owning everything")
    b = spawn(group, "b", topic, "cooperative-sticky", report_claims=True)

    def halves() -> bool:
        return len(a.owned()) == len(b.owned()) == PARTITIONS // 2 and not a.owned() & b.owned()

    wait_until(halves, 60, "a and b owning three partitions each")
    # a third member comes and goes: b rejoins twice while it holds partitions, and claims them (the tap
    # shows claims, so an empty one after the loss means something)
    before_c, c_at = b.owned(), time.time()
    c = spawn(group, "c", topic, "cooperative-sticky")
    wait_until(lambda: len(c.owned()) == 2, 60, "c owning two partitions")
    claims = [e for e in b.snapshot() if e["ev"] == "claim" and e["t"] > c_at]
    assert claims and set(claims[0]["parts"]) == before_c, claims
    c.close(timeout=30)
    wait_until(halves, 60, "a and b owning three partitions each again")
    held = b.owned()
    wait_until(lambda: b.records(), 20, "b consuming")

    os.kill(b.proc.pid, signal.SIGSTOP)
    stopped_at = time.time()
    try:
        wait_until(lambda: a.owned() == set(range(PARTITIONS)), SESSION_TIMEOUT_S + 30, "a owning everything")
        time.sleep(1)
    finally:
        os.kill(b.proc.pid, signal.SIGCONT)
    resumed_at = time.time()
    lost = wait_until(
        lambda: next((e for e in b.snapshot() if e["ev"] == "lost" and e["t"] > stopped_at), None),
        20,
        "b's on_lost",
    )
    assert set(lost["parts"]) == held
    rejoin = wait_until(
        lambda: next((e for e in b.snapshot() if e["ev"] == "claim" and e["t"] > lost["t"]), None),
        30,
        "b's JoinGroup after the loss",
    )
    assert rejoin["parts"] == [], f"b rejoined claiming {rejoin['parts']} it no longer held"
    wait_until(halves, COMEBACK_BOUND_S, f"three partitions each again within {COMEBACK_BOUND_S:.0f}s")
    back_at = time.time()
    # while b was stopped its last report still named its partitions; what matters is that it read none
    # of them between the stop and learning of the loss, and that no two owners overlap after that
    stale = [e for e in b.snapshot() if e["ev"] == "recs" and stopped_at < e["t"] < lost["t"]]
    assert not stale, f"b read {sum(len(e['items']) for e in stale)} records after its session expired"
    given_up = next(e["t"] for e in b.snapshot() if e["ev"] == "assignment" and e["t"] >= lost["t"])
    overlaps = [p for p in double_owners([a, b]) if float(p.split(":")[0]) >= given_up]
    assert not overlaps, overlaps
    print(
        f"\ncooperative member back after a loss: claimed {rejoin['parts']} on rejoining, "
        f"{back_at - resumed_at:.1f}s from SIGCONT to three partitions each"
    )
    producer.stop()
    assert producer.failed == 0
    produced = producer.delivered
    wait_until(lambda: produced <= {r for w in (a, b, c) for r in w.records()}, 60, "every record consumed")
