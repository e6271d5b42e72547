"""A failover group moved between the classic and the consumer group protocol member by member, live.

Three members with priorities 30/20/10 consume a 6-partition topic under steady keyed load. Each step of a
rolling restart replaces one member the way a Kubernetes Deployment does by default (the new member starts,
and once the group lists it the old one closes): kafka-python classic members with ``FailoverAssignor``
become confluent-kafka consumer-protocol members with ``confluent_failover_config`` (the broker runs our
failover assignor, plugin loaded by the embedded cluster), and back for a rollback. Before the move the
classic members are rolled once onto ``FailoverAssignor(..., migration_ready=True)`` (docs/migration.md).

What is judged, on a 0.5 s grid rebuilt from every member's own assignment reports and the group's
membership read from the broker every 0.5 s:

- outside a takeover window after each membership change, the highest-priority live member owns every
  partition and no other member owns any;
- every takeover ends within its bound (a clean one: ``CLEAN_TAKEOVER_S``; after a SIGKILL: the group's
  session timeout + 3 s), and consumption never pauses longer than that;
- every record the broker acknowledged is consumed; no member process dies (no fatal error).
"""

from __future__ import annotations

import os
import random
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from group_load import KeyedProducer, set_group_session_timeout  # this directory is on sys.path
from live_group import ConsumerProtocolMember
from member_process import MemberProcess, wait_until
from migration_group import (
    PARTITIONS,
    SESSION_MS,
    MigrationGroup,
    Slot,
    by_client,
    check,
    described_as,
    group_type,
    owned_at,
    report,
    run_with_load,
)

pytestmark = pytest.mark.kafka


@pytest.fixture()
def migration(
    kafka_cluster: Any, kafka_topic_factory: Callable[..., str], tmp_path: Path
) -> Iterator[MigrationGroup]:
    topic = kafka_topic_factory(PARTITIONS, 3)
    group = f"migration-{uuid.uuid4().hex[:8]}"
    set_group_session_timeout(kafka_cluster.bootstrap_servers, group, SESSION_MS)
    harness = MigrationGroup(kafka_cluster.bootstrap_servers, group, topic, tmp_path)
    harness.start_sampler()
    yield harness
    harness.stop()
    for slot in harness.slots:
        slot.member.kill()


def test_lowest_first_to_the_consumer_protocol_and_back(migration: MigrationGroup) -> None:
    """Pre-roll onto migration_ready, classic -> consumer lowest priority first, rollback highest first."""
    h = migration
    start = time.time()
    members = {p: h.classic(f"c{p}-old", p, ready=False) for p in (30, 20, 10)}
    h.settle()
    baseline = [0.0]
    converted = [0.0]
    # before the pre-roll: protected, and group describe names every member to roll
    described_as(
        h,
        lambda code, d: (
            code == 0
            and d["migration"]["stage"] == "classic"
            and d["migration"]["convertible"] is False
            and len(d["migration"]["not_ready"]) == 3
        ),
        "group describe: a protected classic group with 3 members to roll",
    )

    def move(producer: KeyedProducer) -> None:
        for p in (10, 20, 30):  # the pre-roll: a plain classic rolling restart, lowest first; the active
            # member stops before its replacement starts, so its step holds two clean classic takeovers
            members[p] = h.replace(members[p], lambda p=p: h.classic(f"c{p}", p, ready=True), surge=p != 30)
        baseline[0] = h.longest_pause(*h.steps[-1][1:])
        assert group_type(h) == "CLASSIC"
        described_as(
            h,
            lambda code, d: (
                code == 0 and d["migration"]["convertible"] is True and not d["migration"]["not_ready"]
            ),
            "group describe: a ready classic group",
        )
        for p in (10, 20, 30):
            members[p] = h.replace(members[p], lambda p=p: h.consumer(f"k{p}", p))
            if p == 10:  # mid-migration: two classic members left, ranked by the broker's failover assignor
                mid = described_as(
                    h,
                    lambda code, d: (
                        code == 0
                        and d["migration"]["stage"] == "mid-migration"
                        and len(d["migration"]["left_to_move"]) == 2
                    ),
                    "group describe: mid-migration with two classic members left",
                )
                clients = by_client(mid)
                assert {c: (m["member_protocol"], m["priority"]) for c, m in clients.items()} == {
                    "c30": ("classic", 30),
                    "c20": ("classic", 20),
                    "k10": ("consumer", 10),
                }, clients
                assert mid["assignor"] == "failover" and mid["failover"]["ok"], mid
        assert group_type(h) == "CONSUMER"
        last_consumer = members[10]
        for p in (30, 20, 10):  # rollback
            members[p] = h.replace(members[p], lambda p=p: h.classic(f"c{p}-back", p, ready=True))
        converted[0] = h.converted_to_classic_after(last_consumer)

    producer = run_with_load(h, move)
    print(
        f"\nmigration lowest first and rollback: {len(producer.delivered):,} records acknowledged, "
        f"all consumed\n"
        + report(h, start, baseline[0])
        + f"\nback to classic {converted[0]:.1f}s after the last consumer-protocol member closed"
    )
    check(h, start)


def test_highest_first_with_the_active_member_killed_midway(migration: MigrationGroup) -> None:
    """classic -> consumer highest priority first; the new active member is SIGKILLed after the first step
    and restarts, as a crashed pod does."""
    h = migration
    start = time.time()
    members = {p: h.classic(f"c{p}", p, ready=True) for p in (30, 20, 10)}
    h.settle()

    def move(producer: KeyedProducer) -> None:
        members[30] = h.replace(members[30], lambda: h.consumer("k30", 30))
        assert group_type(h) == "CONSUMER"
        killed_at = time.time()
        h.kill(members[30])
        h.settle()
        h.steps.append(("SIGKILL k30", killed_at, time.time()))
        takeover = time.time()
        members[30] = h.consumer("k30-restarted", 30)
        h.settle()
        h.steps.append(("k30 restarted", takeover, time.time()))
        for p in (20, 10):
            members[p] = h.replace(members[p], lambda p=p: h.consumer(f"k{p}", p))
        assert group_type(h) == "CONSUMER"

    producer = run_with_load(h, move)
    print(
        f"\nmigration highest first with a SIGKILL: {len(producer.delivered):,} records acknowledged, all "
        f"consumed\n" + report(h, start, 0.0)
    )
    check(h, start)


def test_a_consumer_protocol_member_without_our_assignor_is_loud_and_its_leaving_restores_priorities(
    migration: MigrationGroup,
) -> None:
    """Item 2's first case, shown as it happens: a ready group meets a plain ``group.protocol=consumer``
    member that names no ``group.remote.assignor``. Kafka converts the group and its default ``uniform``
    assignor spreads the partitions — nothing on the classic side can refuse that once the group is
    convertible — so every place a person looks says so: each member the broker gave part of the topic logs
    one ERROR line, and ``group describe`` exits 1 naming the assignor. When the intruder leaves, Kafka
    converts the group back and our failover leader restores the priorities."""
    from kafka_placement.clients.group_assignor import BROKER_ASSIGNS

    h = migration
    members = {p: h.classic(f"c{p}", p, ready=True) for p in (30, 20)}
    h.settle()
    intruder = ConsumerProtocolMember(h.bootstrap, h.group, "plain-consumer", h.topic, h.log_dir)
    try:

        def spread() -> bool:
            owned = [owned_at(s.member, time.time()) for s in members.values()]
            return all(0 < len(parts) < PARTITIONS for parts in owned) or bool(intruder.owned())

        wait_until(spread, 60, "the broker's uniform assignor to spread the partitions")
        for slot in members.values():
            wait_until(
                lambda slot=slot: (
                    "failover priorities are NOT honoured" in slot.member.log_tail(400)
                    or not owned_at(slot.member, time.time())
                ),
                30,
                f"{slot.member.name}'s ERROR line",
            )
        errors = [
            line
            for s in members.values()
            for line in s.member.log_tail(400).splitlines()
            if "failover priorities are NOT honoured" in line
        ]
        assert errors and all(" ERROR " in line for line in errors), errors
        assert all(BROKER_ASSIGNS in s.member.log_tail(400) for s in members.values())
        described = described_as(
            h,
            lambda code, d: code == 1 and bool(d["migration"]["problems"]),
            "group describe: exit 1 naming the assignor",
        )
        assert "'uniform' assignor, not failover" in described["migration"]["problems"][0], described
    finally:
        intruder.close(timeout=30)
    wait_until(lambda: group_type(h) == "CLASSIC", 60, "Kafka to convert the group back to classic")
    h.settle()  # the failover leader assigns again: c30 owns everything, c20 nothing


def test_our_consumer_protocol_member_says_what_to_change_instead_of_harming_the_group(
    migration: MigrationGroup,
) -> None:
    """Item 2, the joining client: our confluent ``Consumer`` checks before it joins. Into a protected group
    (members not yet migration-ready) a failover member would be refused by Kafka with librdkafka's fatal
    'The group id does not exist'; a member without ``group.remote.assignor=failover`` would convert a ready
    group to the default assignor. Each gets one line naming what to change, and the group is untouched."""
    from kafka_placement.clients.confluent import Consumer
    from kafka_placement.clients.consumer_protocol import confluent_failover_config
    from kafka_placement.errors import ConsumerConfigError

    h = migration
    base = {"bootstrap.servers": h.bootstrap, "group.id": h.group}
    members = {p: h.classic(f"c{p}-old", p, ready=False) for p in (30, 20)}
    h.settle()
    started = time.monotonic()
    with pytest.raises(ConsumerConfigError) as refused:
        Consumer.for_consumer_protocol(confluent_failover_config(10, None, base))
    message = str(refused.value)
    assert "\n" not in message and "protected against conversion" in message
    assert "c30-old" in message and "c20-old" in message and time.monotonic() - started < 15
    for p in (30, 20):  # the pre-roll
        members[p] = h.replace(members[p], lambda p=p: h.classic(f"c{p}", p, ready=True))
    with pytest.raises(ConsumerConfigError, match=r"must set group\.remote\.assignor=failover"):
        Consumer.for_consumer_protocol({**base, "group.protocol": "consumer", "client.rack": "#priority=10"})
    time.sleep(3)
    assert group_type(h) == "CLASSIC" and h.settled_now()
    ok = Consumer.for_consumer_protocol(
        confluent_failover_config(10, None, base)
    )  # the right settings pass the check
    ok.close()


JAVA_GROUP_MEMBER = "io.kafkaplacement.conformance.live.GroupMember"


class JavaClassicMember(MemberProcess):
    """The test suite's own Java failover implementation (``integration_tests/java/member``), which, like
    Java's assignors, leaves the assignment userData empty: a failover leader that is not ours."""

    def __init__(
        self, classpath: str, bootstrap: str, group: str, name: str, topic: str, priority: int
    ) -> None:
        self.name = name
        super().__init__(
            [
                "java",
                "-Xmx192m",
                "-cp",
                classpath,
                JAVA_GROUP_MEMBER,
                bootstrap,
                group,
                name,
                topic,
                f"failover:{priority}",
            ],
            stderr=subprocess.DEVNULL,
        )

    def log_tail(self, lines: int = 15) -> str:
        return "(stderr not kept)"


def test_a_failover_leader_that_is_not_ours_is_named_before_anything_moves(
    migration: MigrationGroup,
    java_member_classpath: str,
) -> None:
    """Item 2's last case: another failover implementation leads (priority 40, the test suite's Java
    assignor) and leaves the assignment userData empty, so Kafka would convert the group although the
    broker could not see that member's priority. ``group describe`` exits 1 naming it, and our
    consumer-protocol member refuses to join in one line."""
    from kafka_placement.clients.confluent import Consumer
    from kafka_placement.clients.consumer_protocol import confluent_failover_config
    from kafka_placement.errors import ConsumerConfigError

    h = migration
    java = JavaClassicMember(java_member_classpath, h.bootstrap, h.group, "j40", h.topic, 40)
    h._add(Slot(java, 40, "classic"))  # type: ignore[arg-type]  # first in: it leads
    for p in (30, 20):
        h.classic(f"c{p}", p, ready=True)
    h.settle()
    described = described_as(
        h,
        lambda code, d: code == 1 and bool(d["migration"]["problems"]),
        "group describe: exit 1 naming the member whose priority the broker can't see",
    )
    assert "could not see the priority of 1 member(s)" in described["migration"]["problems"][0], described
    not_ready = described["migration"]["not_ready"]
    assert [by_client(described)[c]["member_id"] for c in ("j40",)] == list(not_ready), not_ready
    with pytest.raises(ConsumerConfigError, match="could not see the priority of j40"):
        Consumer.for_consumer_protocol(
            confluent_failover_config(10, None, {"bootstrap.servers": h.bootstrap, "group.id": h.group})
        )
    assert group_type(h) == "CLASSIC" and h.settled_now()


def test_every_client_moves_together_in_a_random_order(
    migration: MigrationGroup, java_member_classpath: str
) -> None:
    """Every classic client we support in one group, migration-ready: a Java ``KafkaConsumer`` with our Java
    client assignor (40, joined first: it leads), kafka-python (30), aiokafka (20) and our confluent
    ``Consumer`` (10); replaced under load, in an order drawn from a seed (printed), by consumer-protocol
    members — confluent-kafka for the Python ones, a Java ``KafkaConsumer`` for the Java one."""
    from kafka_placement.client_assignor.build import build_jar
    from kafka_placement.versions import KAFKA_VERSION

    h = migration
    h.java_class_path = os.pathsep.join([str(build_jar(KAFKA_VERSION)), java_member_classpath])
    start = time.time()
    members = {
        40: h.java("j40", 40, protocol="classic"),
        30: h.classic("c30", 30, ready=True),
        20: h.classic("a20", 20, ready=True, client="aiokafka"),
        10: h.classic("f10", 10, ready=True, client="confluent"),
    }
    h.settle()
    described_as(
        h,
        lambda code, d: (
            code == 0 and d["migration"]["convertible"] is True and not d["migration"]["not_ready"]
        ),
        "group describe: every client's member ready",
    )

    seed = int(time.time())
    order = random.Random(seed).sample([10, 20, 30, 40], 4)

    def move(producer: KeyedProducer) -> None:
        for p in order:
            if p == 40:
                members[p] = h.replace(members[p], lambda: h.java("jk40", 40, protocol="consumer"))
            else:
                members[p] = h.replace(members[p], lambda p=p: h.consumer(f"k{p}", p))
        assert group_type(h) == "CONSUMER"

    producer = run_with_load(h, move)
    print(
        f"\nevery client, order {order} (seed {seed}): {len(producer.delivered):,} records "
        f"acknowledged, all consumed\n" + report(h, start, 0.0)
    )
    check(h, start)


@pytest.fixture(scope="module")
def plugin_less_cluster(kafka_cluster_factory: Callable[..., Any]) -> Any:
    """One broker without our plugin: what a managed service (Confluent Cloud, MSK, …) offers."""
    return kafka_cluster_factory("plaintext", racks={0: "rack1"}, failover_assignor=False)


def test_on_brokers_without_the_plugin_the_group_stays_classic_and_the_tooling_says_so(
    plugin_less_cluster: Any,
    tmp_path: Path,
) -> None:
    """Item 2, a cluster without the broker plugin. ``group describe`` says to stay classic before any
    member moves; our consumer-protocol member refuses in one line naming the brokers; a plain librdkafka
    member that tries anyway is refused by the broker (it names an assignor the broker does not have)
    and the group keeps its priorities."""
    from kafka import KafkaAdminClient

    from kafka_placement.clients.confluent import Consumer
    from kafka_placement.clients.consumer_protocol import confluent_failover_config
    from kafka_placement.errors import ConsumerConfigError
    from member_process import create_ready_topic

    bootstrap = plugin_less_cluster.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="migration-no-plugin")
    try:
        topic = create_ready_topic(admin, "no-plugin", PARTITIONS, 1)
    finally:
        admin.close()
    h = MigrationGroup(bootstrap, f"no-plugin-{uuid.uuid4().hex[:8]}", topic, tmp_path)
    h.start_sampler()
    intruder: ConsumerProtocolMember | None = None
    try:
        for p in (30, 20):
            h.classic(f"c{p}", p, ready=True)
        h.settle()
        described = described_as(
            h,
            lambda code, d: code == 0 and d["migration"]["brokers_without_failover"] == [0],
            "group describe: the broker lacks the failover assignor",
        )
        advice = described["migration"]["advice"]
        assert advice.startswith("stay classic: broker(s) [0] do not offer"), described
        started = time.monotonic()
        with pytest.raises(ConsumerConfigError) as refused:
            Consumer.for_consumer_protocol(
                confluent_failover_config(10, None, {"bootstrap.servers": bootstrap, "group.id": h.group})
            )
        message = str(refused.value)
        assert "\n" not in message and time.monotonic() - started < 15
        assert message.startswith(
            "group.remote.assignor=failover, but broker(s) [0] offer only uniform,range"
        ), message
        # a plain librdkafka member, no check of ours in front of it
        intruder = ConsumerProtocolMember(
            bootstrap, h.group, "plain-failover", topic, tmp_path, conf=confluent_failover_config(10)
        )
        member = intruder
        wait_until(lambda: member.errors() or member.owned(), 60, "the broker to answer the plain member")
        time.sleep(3)
        assert not member.owned() and member.errors(), member.snapshot()[-5:]
        assert group_type(h) == "CLASSIC" and h.settled_now()
    finally:
        h.stop()
        if intruder is not None:
            intruder.close(timeout=15)
        for slot in h.slots:
            slot.member.kill()
