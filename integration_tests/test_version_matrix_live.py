"""Every Kafka 4.x minor, live (behind ``--full``): failover and the move to the consumer protocol on each.

For the newest patch of every minor from 4.0 to the pin (``kafka_placement.versions.KAFKA_VERSION_MATRIX``) a
small cluster of that version starts (1 controller + 2 brokers, the offline image built for it when missing)
with the broker plugin compiled against that version's group-coordinator API; the Java members run that
version's ``kafka-clients`` with our Java client assignor compiled against it. On each:

(a) failover on the consumer protocol: two confluent-kafka members with priorities 10 and 5; 10 owns every
    partition; a clean close of 10 hands everything to 5 within :data:`FAILOVER_BOUND_S`;
(b) a classic failover group — a Java ``KafkaConsumer`` with our client assignor (30, migration-ready, joined
    first: it leads), kafka-python members 20 and 10 (migration-ready) — replaced lowest first by
    consumer-protocol members (confluent-kafka for 10 and 20, a Java ``KafkaConsumer`` for 30) under steady
    keyed load, judged by ``migration_group.check``: the best live member owns every partition at every
    0.5 s grid point outside takeover windows, no member dies, 0 acknowledged records lost;
(c) what a Java consumer-protocol member of that version shows the broker: from 4.1 its priority (its
    ``client.rack`` in the heartbeat's RackId); on 4.0 nothing — a limitation of Kafka 4.0's Java consumer
    (:data:`JAVA_HEARTBEAT_RACK_FROM`), so on 4.0 (b) replaces the Java member by a confluent-kafka one and
    (c) shows the limitation: the broker ranks the member last (the priorities of the others still hold)
    and ``group describe`` names it as a member whose priority the broker cannot see.

Per version the test prints the cluster's start-up, each takeover (close of the active member → the next
best owns every partition, from the members' own assignment reports) and each step's longest pause.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from group_load import KeyedProducer, set_group_session_timeout  # this directory is on sys.path
from kafka_placement.versions import KAFKA_VERSION_MATRIX
from member_process import create_ready_topic, wait_until
from migration_group import (
    ALL,
    PARTITIONS,
    SESSION_MS,
    MigrationGroup,
    Slot,
    check,
    group_type,
    report,
    run_with_load,
)

pytestmark = [pytest.mark.kafka, pytest.mark.full]

#: Two brokers on two racks: small enough for a shared 2-core machine, and the group coordinator is not
#: necessarily where the partitions lead.
RACKS = {0: "rack1", 1: "rack2"}
#: "Within a few seconds": a clean close reaches the survivor at its next heartbeat (1 s here) plus one
#: assignment round; measured 0.5-1.5 s. Far below the 15 s session timeout a missed handover would take.
FAILOVER_BOUND_S = 5.0
MEMBER_SOURCES = Path(__file__).resolve().parent / "java" / "member"
#: The first Kafka minor whose Java consumer sends ``client.rack`` as the ConsumerGroupHeartbeat's RackId.
#: Kafka 4.0's ``ConsumerHeartbeatRequestManager`` never sets the field (the protocol had it since KIP-848's
#: first version; the client started filling it in KAFKA-17747, apache/kafka#19856, released in 4.1.0), so
#: a 4.0 Java consumer on the consumer protocol cannot carry its failover priority to the broker: the
#: broker's failover assignor ranks it last. Its classic protocol is unaffected (the rack id travels in the
#: subscription, KIP-881), and a 4.1+ Java client works against a 4.0 broker.
JAVA_HEARTBEAT_RACK_FROM = (4, 1)


def java_sends_rack(version: str) -> bool:
    major, minor, _ = (int(part) for part in version.split("."))
    return (major, minor) >= JAVA_HEARTBEAT_RACK_FROM


@dataclass(frozen=True)
class Versioned:
    """One version's cluster and the class path of its Java members."""

    version: str
    cluster: Any
    #: our client assignor's jar for ``version``, that version's kafka-clients (+ slf4j), the test member
    java_class_path: str


def java_class_path(version: str, out: Path) -> str:
    """The test suite's Java member compiled against Kafka ``version``'s kafka-clients, on a class path with
    that kafka-clients and our client assignor built for it (the pinned run's ``java_member_classpath``
    compiles against the pinned jars only)."""
    from kafka_placement.client_assignor.build import BUILD, TEST, build_jar

    javac = shutil.which("javac")
    assert javac is not None, "javac not found: a JDK 17+ is needed to compile the Java member"
    jars = BUILD.resolve(version, TEST)  # kafka-clients, slf4j-api, slf4j-simple of that version's pom
    assert any(jar.name == f"kafka-clients-{version}.jar" for jar in jars), jars
    cp = os.pathsep.join(map(str, jars))
    done = subprocess.run(
        [javac, "-nowarn", "-d", str(out), "-cp", cp, *map(str, sorted(MEMBER_SOURCES.rglob("*.java")))],
        capture_output=True,
        text=True,
        check=False,
        timeout=180,
    )
    assert done.returncode == 0, (
        f"the Java member does not compile against kafka-clients {version}:\n{done.stderr[-3000:]}"
    )
    return os.pathsep.join([str(build_jar(version)), cp, str(out)])


def broker_log(cluster: Any, broker_id: int) -> str:
    from kafka_placement.testing.engine import docker_client

    container = docker_client().containers.get(cluster.state().broker_containers[broker_id])
    return str(container.logs().decode(errors="replace"))


def broker_kafka_version(cluster: Any, broker_id: int = 0) -> str:
    """The version the broker says it runs (Kafka's ``AppInfoParser`` logs ``Kafka version: X`` at start)."""
    text = broker_log(cluster, broker_id)
    found = [
        line.split("Kafka version:", 1)[1].split()[0]
        for line in text.splitlines()
        if "Kafka version:" in line
    ]
    assert found, f"broker {broker_id}'s log names no Kafka version"
    return found[0]


def unknown_properties(cluster: Any) -> dict[str, list[str]]:
    """Per node, the properties the harness set that the node's ``KafkaConfig values:`` dump does not list (a
    Kafka version that does not know a setting ignores it: the harness would silently lose it)."""
    from kafka_placement.testing.engine import docker_client
    from kafka_placement.testing.layout import CONTROLLER_ID, NON_PROPERTY_ENV, env_to_property

    state, layout = cluster.state(), cluster.layout
    nodes = {
        CONTROLLER_ID: (state.controller_container, layout.controller_env()),
        **{b: (state.broker_containers[b], layout.broker_env(b)) for b in cluster.broker_ids},
    }
    unknown = {}
    for node, (container, env) in nodes.items():
        text = docker_client().containers.get(container).logs().decode(errors="replace")
        dump = text[text.index("KafkaConfig values:") :]
        known = set(re.findall(r"^\s+([a-z0-9._-]+) = ", dump, re.M))
        unknown[str(node)] = sorted(
            env_to_property(k)
            for k in env
            if k.startswith("KAFKA_") and k not in NON_PROPERTY_ENV and env_to_property(k) not in known
        )
    return unknown


@pytest.fixture(scope="module", params=KAFKA_VERSION_MATRIX)
def versioned(
    request: pytest.FixtureRequest, kafka_cluster_factory: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Versioned]:
    """A cluster of each version in turn (module scope per param: pytest runs both tests on one version,
    then stops its cluster before the next starts)."""
    version = request.param
    started = time.monotonic()
    cluster = kafka_cluster_factory("plaintext", racks=RACKS, kafka_version=version)
    try:
        print(
            f"\nKafka {version}: cluster {cluster.image} ready in {time.monotonic() - started:.1f}s "
            f"(its own start-up {cluster.startup_seconds:.1f}s)"
        )
        assert broker_kafka_version(cluster) == version
        assert not any(unknown_properties(cluster).values()), unknown_properties(cluster)
        class_path = java_class_path(version, tmp_path_factory.mktemp(f"java-{version}"))
        yield Versioned(version, cluster, class_path)
    finally:
        kafka_cluster_factory.release(cluster)


@pytest.fixture()
def harness(versioned: Versioned, tmp_path: Path) -> Iterator[MigrationGroup]:
    from kafka import KafkaAdminClient

    bootstrap = versioned.cluster.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="version-matrix")
    try:
        topic = create_ready_topic(admin, f"matrix-{versioned.version.replace('.', '-')}", PARTITIONS, 2)
    finally:
        admin.close()
    group = f"matrix-{uuid.uuid4().hex[:8]}"
    # a group config (Kafka 4.0+, KIP-848): consumer-protocol members of this group get the classic
    # members' 15 s session, so a missed handover could not hide inside the broker's 6 s
    set_group_session_timeout(bootstrap, group, SESSION_MS)
    h = MigrationGroup(bootstrap, group, topic, tmp_path)
    h.java_class_path = versioned.java_class_path
    h.start_sampler()
    yield h
    h.stop()
    for slot in h.slots:
        slot.member.kill()


def takeover_s(h: MigrationGroup, old: Slot, since: float) -> float:
    """How long the group had no owner when ``old`` (the active member) handed over: from the moment it lost
    its partitions (closed, or revoked earlier: a replacement of the same priority may win the broker's tie
    before the old one closes) until another member reported owning every partition while nobody else owned
    any (the members' own assignment events, ``since`` the step started)."""
    from migration_group import owned_at

    assert old.gone_at is not None
    revoked = [
        e["t"]
        for e in old.member.snapshot()
        if e["ev"] == "assignment" and e["t"] >= since and owned_at(old.member, e["t"]) != ALL
    ]
    lost = min([old.gone_at, *revoked])
    # the new owner's report may come in before the old one's revocation: judged from ``lost`` on
    times = sorted(
        {lost}
        | {
            e["t"]
            for s in h.slots
            if s is not old
            for e in s.member.snapshot()
            if e["ev"] == "assignment" and e["t"] >= lost
        }
    )
    for t in times:
        owners = {
            s.member.name: owned_at(s.member, t)
            for s in h.slots
            if s is not old and s.seen_at is not None and (s.gone_at is None or s.gone_at > t)
        }
        full = [name for name, parts in owners.items() if parts == ALL]
        if len(full) == 1 and not any(parts for name, parts in owners.items() if name not in full):
            return t - lost
    raise AssertionError(f"nobody took over from {old.member.name}: {h.timeline()}")


def active(h: MigrationGroup, slots: Callable[[], list[Slot]]) -> Slot:
    """The one of ``slots()`` that owns every partition now."""
    from migration_group import owned_at

    now = time.time()
    owning = [s for s in slots() if owned_at(s.member, now) == ALL]
    assert len(owning) == 1, h.timeline()
    return owning[0]


def test_consumer_protocol_failover(versioned: Versioned, harness: MigrationGroup) -> None:
    """(a) Two consumer-protocol members, 10 and 5: 10 owns everything; its clean close hands all to 5."""
    h = harness
    start = time.time()
    taken: list[float] = []

    def move(producer: KeyedProducer) -> None:
        k10 = h.consumer("k10", 10)
        h.consumer("k5", 5)
        h.settle()
        assert active(h, lambda: [s for s in h.slots if s.gone_at is None]) is k10
        step = time.time()
        h.close(k10)
        h.settle()
        h.steps.append(("k10 closed -> k5", step, time.time()))
        taken.append(takeover_s(h, k10, step))
        assert group_type(h) == "CONSUMER"

    producer = run_with_load(h, move)
    print(
        f"\nKafka {versioned.version} (a) consumer protocol 10/5: clean close of 10 -> 5 owns all in "
        f"{taken[0]:.1f}s; {len(producer.delivered):,} records acknowledged, all consumed\n"
        + report(h, start, 0.0)
    )
    check(h, start)
    assert taken[0] <= FAILOVER_BOUND_S, f"takeover took {taken[0]:.1f}s: {h.timeline()}"


def test_classic_group_moves_to_the_consumer_protocol(versioned: Versioned, harness: MigrationGroup) -> None:
    """(b) Java (our client assignor, 30, leads) + kafka-python 20 and 10, all migration-ready, replaced
    lowest first by consumer-protocol members under load; the Java ones run this version's kafka-clients (on
    4.0 the last replacement is a confluent-kafka member: see :data:`JAVA_HEARTBEAT_RACK_FROM` and (c))."""
    h = harness
    start = time.time()
    members = {30: h.java("j30", 30, protocol="classic")}  # first in: the classic group's leader
    members[20] = h.classic("c20", 20, ready=True)
    members[10] = h.classic("c10", 10, ready=True)
    h.settle()
    assert active(h, lambda: list(members.values())) is members[30]
    assert f"Kafka version: {versioned.version}" in (h.log_dir / "j30.log").read_text(errors="replace"), (
        "the Java member does not run the version's kafka-clients"
    )
    assert group_type(h) == "CLASSIC"
    taken: dict[str, float] = {}

    def move(producer: KeyedProducer) -> None:
        for p in (10, 20):
            old = members[p]
            members[p] = h.replace(old, lambda p=p: h.consumer(f"k{p}", p))
            assert group_type(h) == "CONSUMER"  # the first consumer-protocol member converted the group
        old, step = members[30], time.time()
        if java_sends_rack(versioned.version):
            members[30] = h.replace(old, lambda: h.java("jk30", 30, protocol="consumer"))
        else:
            members[30] = h.replace(old, lambda: h.consumer("k30", 30))
        taken[f"{old.member.name} -> {members[30].member.name}"] = takeover_s(h, old, step)
        assert group_type(h) == "CONSUMER"

    producer = run_with_load(h, move)
    if java_sends_rack(versioned.version):
        assert f"Kafka version: {versioned.version}" in (h.log_dir / "jk30.log").read_text(errors="replace")
    print(
        f"\nKafka {versioned.version} (b) classic -> consumer, lowest first (Java 30 leading, kafka-python "
        f"20/10): {len(producer.delivered):,} records acknowledged, all consumed; takeover of the active "
        f"member: " + ", ".join(f"{k} {v:.1f}s" for k, v in taken.items()) + "\n" + report(h, start, 0.0)
    )
    check(h, start)


def test_java_consumer_protocol_member_shows_its_priority_from_4_1(
    versioned: Versioned, harness: MigrationGroup
) -> None:
    """(c) A consumer-protocol failover group of a confluent-kafka member (20) and this version's Java
    ``KafkaConsumer`` (40, ``java_failover_properties``). From 4.1 the broker sees 40 and gives it everything;
    on 4.0 the Java member sends no rack id: the broker's failover assignor ranks it last, ``group describe``
    reports it without priority and not ready, and the confluent member keeps every partition; then a Java
    member on a 4.1+ client (50) joins the 4.0 broker's group: seen with its priority, it takes everything."""
    from migration_group import describe, owned_at

    h = harness
    k20 = h.consumer("k20", 20)
    j40 = h.java("jk40", 40, protocol="consumer")
    assert f"Kafka version: {versioned.version}" in (h.log_dir / "jk40.log").read_text(errors="replace")
    visible = java_sends_rack(versioned.version)
    owner = j40 if visible else k20
    wait_until(
        lambda: owned_at(owner.member, time.time()) == ALL, 30, f"{owner.member.name} to own every partition"
    )
    time.sleep(3)  # and to keep it: the other member owns nothing
    now = time.time()
    other = k20 if visible else j40
    assert owned_at(owner.member, now) == ALL and not owned_at(other.member, now), h.timeline()
    code, described = describe(h)
    java_member = next(m for m in described["members"] if m["client_id"] == "jk40")
    not_ready = described["migration"]["not_ready"]
    if visible:
        assert (java_member["priority"], java_member["priority_source"]) == (40, "client.rack"), described
        assert code == 0 and not not_ready, described
    else:
        assert (java_member["priority"], java_member["priority_source"]) == (None, "none"), described
        # a member without any priority is a legitimate last-ranked standby to the broker (it logs only a
        # malformed one), so the place that says it is group describe, between the steps of a move
        assert "no usable priority" in not_ready[java_member["member_id"]], described
    print(
        f"\nKafka {versioned.version} (c) Java consumer-protocol member 40 next to confluent 20: "
        f"the broker sees priority {java_member['priority']} ({java_member['priority_source']}); "
        f"group describe exit {code}; "
        f"{owner.member.name} owns every partition"
    )
    if not visible:
        # the way out on a 4.0 broker: a 4.1+ Java client, which sends the RackId the 4.0 broker ranks by
        newer = next(v for v in KAFKA_VERSION_MATRIX if java_sends_rack(v))
        h.java_class_path = java_class_path(newer, h.log_dir / f"java-{newer}")
        j50 = h.java("jk50", 50, protocol="consumer")
        assert f"Kafka version: {newer}" in (h.log_dir / "jk50.log").read_text(errors="replace")
        wait_until(lambda: owned_at(j50.member, time.time()) == ALL, 30, "the 4.1+ client to own everything")
        code, described = describe(h)
        newer_member = next(m for m in described["members"] if m["client_id"] == "jk50")
        assert (newer_member["priority"], newer_member["priority_source"]) == (50, "client.rack"), described
        print(
            f"Kafka {versioned.version} (c) a Java {newer} consumer-protocol member 50 joins: the broker "
            f"sees priority 50 (client.rack) and it owns every partition"
        )
