"""Live: Java's documented two-step rolling upgrade from ``range`` to ``cooperative-sticky``
(issue 30), with :class:`kafka_placement.clients.confluent.Consumer` members (kafka-python's
coordinator under them, so kafka-python's assignors are the ones proven).

Two members. Step 1 rolls each to ``cooperative-sticky,range`` (Java's rule: the highest protocol
all assignors support, EAGER here; the group switches to the cooperative-sticky assignor once every
member offers it); step 2 rolls each to ``cooperative-sticky`` alone (COOPERATIVE). No partition
has two owners at any moment, nothing produced is lost.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from confluent_workers import (  # the same worker processes and helpers; this directory is on sys.path
    PARTITIONS,
    KeyedProducer,
    Worker,
    spawn,  # noqa: F401  (fixture)
    topic,  # noqa: F401  (fixture)
)
from member_process import wait_until

pytestmark = [pytest.mark.integration]


def _group_protocol(bootstrap: str, group: str) -> str:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    return str(admin.describe_consumer_groups([group])[group].result().partition_assignor)


def _double_owners(workers: list[Worker]) -> list[str]:
    """Replay every member's on_revoke/on_lost/on_assign calls in time order (eager: everything
    revoked, the new set assigned; cooperative: only what moves); at close a member revokes what
    it owns. A partition is never assigned to one member while another still owns it."""
    timeline = sorted(
        (e["t"], w.name, e["ev"], set(e["parts"]))
        for w in workers
        for e in w.snapshot()
        if e["ev"] in ("revoke", "lost", "assign")
    )
    owned: dict[str, set[int]] = {w.name: set() for w in workers}
    problems = []
    for t, name, kind, parts in timeline:
        if kind == "assign":
            for other, theirs in owned.items():
                if other != name and parts & theirs:
                    problems.append(f"{t:.3f}: {name} got {sorted(parts & theirs)} still owned by {other}")
            owned[name] |= parts
        else:
            owned[name] -= parts
    return problems


def _balanced(members: list[Worker]) -> bool:
    owned = [m.owned() for m in members]
    return all(len(o) == PARTITIONS // len(members) for o in owned) and set().union(*owned) == set(
        range(PARTITIONS)
    )


def test_rolling_upgrade_range_to_cooperative_sticky_never_owns_a_partition_twice(
    kafka_cluster: Any,
    topic: str,  # noqa: F811  (fixture)
    spawn: Any,  # noqa: F811  (fixture)
    request: pytest.FixtureRequest,
) -> None:
    bootstrap = kafka_cluster.bootstrap_servers
    group = f"cf-upgrade-{uuid.uuid4().hex[:8]}"
    producer = KeyedProducer(bootstrap, topic, rate_per_s=1000, limit=40_000)
    request.addfinalizer(producer.stop)
    members = [spawn(group, f"{n}0", topic, "range") for n in "ab"]
    everyone = list(members)
    wait_until(lambda: _balanced(members), 90, "two range members with three partitions each")
    assert _group_protocol(bootstrap, group) == "range"

    protocols: dict[tuple[int, str], str] = {}
    settled: dict[tuple[int, str], float] = {}
    for step, strategy in ((1, "cooperative-sticky,range"), (2, "cooperative-sticky")):
        for i, name in enumerate("ab"):
            members[i].close()
            staying = members[:i] + members[i + 1 :]
            wait_until(
                lambda staying=staying: _balanced(staying),
                90,
                f"step {step}: {name} left, the other member owns everything",
            )
            members[i] = spawn(group, f"{name}{step}", topic, strategy)
            everyone.append(members[i])
            wait_until(lambda: _balanced(members), 90, f"step {step}: {name} rolled, group balanced")
            settled[step, name] = time.time()
            protocols[step, name] = _group_protocol(bootstrap, group)
        time.sleep(1)
    # mid step 1 the old members only offer range; once all offer cooperative-sticky first, the
    # broker picks it (run eagerly); step 2 keeps it (now cooperatively)
    assert protocols[1, "a"] == "range"
    assert protocols[1, "b"] == protocols[2, "a"] == protocols[2, "b"] == "cooperative-sticky"

    # on_revoke when the second member joins: step 1 ran EAGER (a1 gives up all six partitions
    # first), step 2 COOPERATIVE (a2 gives up only the three b2 takes)
    def revoked_while_joining(member: Worker, joiner: Worker, step: int) -> list[int]:
        ready, done = joiner.snapshot()[0]["t"], settled[step, "b"]
        return [len(e["parts"]) for e in member.snapshot() if e["ev"] == "revoke" and ready < e["t"] <= done]

    a1, b1, a2, b2 = everyone[2:6]
    assert revoked_while_joining(a1, b1, 1) == [PARTITIONS]
    assert revoked_while_joining(a2, b2, 2) == [PARTITIONS // 2]

    problems = _double_owners(everyone)
    assert not problems, problems[:10]
    producer.stop()
    assert producer.failed == 0
    produced = producer.delivered
    # nothing lost (a record the loaded broker wrote twice for one producer retry is consumed too,
    # so the consumed set may hold more offsets than the delivery reports)
    wait_until(lambda: produced <= {r for w in everyone for r in w.records()}, 60, "every record consumed")
