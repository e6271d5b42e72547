"""The Java client-side failover assignor (``kafka-placement client-assignor``) in a live classic group with
our Python members, under steady keyed load.

A Java ``KafkaConsumer`` whose ``partition.assignment.strategy`` is
``io.kafkaplacement.client.FailoverAssignor`` (the jar our tooling builds for the pinned Kafka version, the
settings the command prints) joins first, so it leads; kafka-python members with our ``FailoverAssignor`` join
it.

- protected (the default): the Java member (priority 30) owns every partition, 20 and 10 none and consume
  nothing; DescribeGroups shows every member's assignment userData in our 7-byte format with the priority the
  Java leader read from it; ``group describe`` reads the three priorities and exits 0; no Python member led,
  no member logged a failover warning; a clean close of the Java member hands everything to 20 within
  ``CLEAN_TAKEOVER_S``; every acknowledged record is consumed.
- a kafka-python member (20) leading: the Java member (30) joins and is assigned everything by it, without a
  warning on either side.
- migration-ready on every member (``client.rack=#priority=30`` on the Java one): the Java leader leaves every
  assignment userData empty, each member logs that its group may convert; a confluent-kafka consumer-protocol
  member (priority 5, ``confluent_failover_config``) joins, Kafka converts the group, the broker's failover
  assignor reads the Java member's priority from its subscription's rack and the Java member (30) keeps every
  partition; the newcomer never owns or consumes anything.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from group_load import KeyedProducer, set_group_session_timeout  # this directory is on sys.path
from live_group import Worker
from member_process import MemberProcess, wait_until

pytestmark = pytest.mark.kafka

PARTITIONS = 6
ALL = list(range(PARTITIONS))
RATE_PER_S = 300
#: Every member's session (classic) and the group's (consumer protocol, a group config): long enough that a
#: loaded 2-core machine does not fence a live member.
SESSION_MS = 15_000
#: A clean takeover: the leaving member's LeaveGroup, a heartbeat interval (1 s) and a rebalance; measured
#: 1-4 s here, bounded well under the session timeout.
CLEAN_TAKEOVER_S = 12.0
JAVA_MAIN = "io.kafkaplacement.conformance.live.ConsumerProtocolMember"  # settings from a .properties file
CONSUMER_PROTOCOL_MEMBER = Path(__file__).with_name("consumer_protocol_member.py")
#: The assignor's own lines at INFO, Kafka's from WARN (slf4j-simple, first on the class path, wins over nop).
JAVA_LOGGING = [
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
    "-Dorg.slf4j.simpleLogger.log.io.kafkaplacement=info",
    "-Dorg.slf4j.simpleLogger.showDateTime=true",
]


class Process(MemberProcess):
    """A member subprocess (Java, or confluent-kafka on the consumer protocol) logging to
    ``log_dir/name.log``; a kafka-python ``Worker`` has the same ``name`` and ``log``."""

    def __init__(self, name: str, argv: list[str], log_dir: Path) -> None:
        self.name = name
        self.log = (log_dir / f"{name}.log").open("w")
        super().__init__(argv, stderr=self.log)


AnyMember = Process | Worker


def owned(member: AnyMember) -> list[int]:
    """The partitions ``member`` last reported owning (kafka-python reports [topic, p], the others p)."""
    last = member.last("assignment")
    return [] if last is None else sorted(p[1] if isinstance(p, list) else p for p in last["parts"])


def ever_owned(member: AnyMember) -> bool:
    return any(e["ev"] == "assignment" and e["parts"] for e in member.snapshot())


def consumed(member: AnyMember) -> list[tuple[int, int]]:
    return [(i[0], i[1]) for e in member.snapshot() if e["ev"] == "recs" for i in e["items"]]


def log_lines(member: AnyMember, *needles: str) -> list[str]:
    text = Path(member.log.name).read_text(errors="replace")
    return [line for line in text.splitlines() if all(n in line for n in needles)]


def failover_warnings(member: AnyMember) -> list[str]:
    """The member-side check's WARN lines (Java: slf4j-simple's ``WARN``; Python: logging's ``WARNING``)."""
    return [line for line in log_lines(member, "WARN") if "failover" in line and "assignment" in line]


@dataclass
class Group:
    bootstrap: str
    group: str
    topic: str
    log_dir: Path
    class_path: str
    members: list[AnyMember] = field(default_factory=list)

    def java(self, name: str, priority: int, *, ready: bool) -> Process:
        from kafka_placement.broker_plugin.settings import properties_text
        from kafka_placement.client_assignor.build import consumer_settings

        settings = {
            "bootstrap.servers": self.bootstrap,
            "group.id": self.group,
            "session.timeout.ms": str(SESSION_MS),
            "heartbeat.interval.ms": "1000",
            **consumer_settings(priority, migration_ready=ready),
        }
        properties = self.log_dir / f"{name}.properties"
        properties.write_text(properties_text(settings))
        argv = [
            "java",
            "-Xmx192m",
            *JAVA_LOGGING,
            "-cp",
            self.class_path,
            JAVA_MAIN,
            str(properties),
            name,
            self.topic,
        ]
        return self._add(Process(name, argv, self.log_dir))

    def python(self, name: str, priority: int, *, ready: bool) -> Worker:
        return self._add(
            Worker(
                self.bootstrap,
                self.group,
                name,
                [self.topic],
                "failover",
                str(self.log_dir),
                priority=priority,
                migration_ready=ready,
                session_timeout_ms=SESSION_MS,
                report_records=True,
                report_leader=True,
            )
        )

    def consumer_protocol(self, name: str, priority: int) -> Process:
        config = {
            "bootstrap": self.bootstrap,
            "group": self.group,
            "name": name,
            "topic": self.topic,
            "priority": priority,
        }
        argv = [sys.executable, str(CONSUMER_PROTOCOL_MEMBER), json.dumps(config)]
        return self._add(Process(name, argv, self.log_dir))

    def _add(self, member: Any) -> Any:
        self.members.append(member)
        return member

    def owners(self) -> dict[str, list[int]]:
        return {m.name: owned(m) for m in self.members if m.alive()}

    def timeline(self) -> str:
        events = sorted(
            (e["t"], m.name, e["ev"], e.get("parts"))
            for m in self.members
            for e in m.snapshot()
            if e["ev"] in ("assignment", "closed", "led")
        )
        first = events[0][0] if events else 0.0
        return "; ".join(
            f"{t - first:.1f}s {n} {ev} {parts if parts is not None else ''}" for t, n, ev, parts in events
        )

    def described(self) -> dict[str, tuple[bytes, bytes, bytes]]:
        """DescribeGroups, raw: client id -> (subscription userData, rack id, assignment userData)."""
        from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

        from kafka_placement.clients.kafka_python.group_description import RawGroupsAdmin

        admin = RawGroupsAdmin(bootstrap_servers=self.bootstrap, client_id="java-client-assignor-live")
        try:
            raw = admin.describe_groups([self.group])[self.group]
        finally:
            admin.close()
        out = {}
        for m in raw.members:
            if not m.member_metadata or not m.member_assignment:
                continue
            subscription = ConsumerProtocolSubscription.decode(bytes(m.member_metadata))
            assignment = ConsumerProtocolAssignment.decode(bytes(m.member_assignment))
            out[str(m.client_id)] = (
                bytes(subscription.user_data or b""),
                subscription.rack_id,
                bytes(assignment.user_data or b""),
            )
        return out


@pytest.fixture()
def group(
    kafka_cluster: Any, kafka_topic_factory: Callable[..., str], java_member_classpath: str, tmp_path: Path
) -> Iterator[Group]:
    from kafka_placement.client_assignor.build import BUILD, TEST, build_jar
    from kafka_placement.versions import KAFKA_VERSION

    simple = next(j for j in BUILD.resolve(KAFKA_VERSION, TEST) if j.name.startswith("slf4j-simple-"))
    class_path = os.pathsep.join([str(simple), str(build_jar(KAFKA_VERSION)), java_member_classpath])
    name = f"java-failover-{uuid.uuid4().hex[:8]}"
    set_group_session_timeout(kafka_cluster.bootstrap_servers, name, SESSION_MS)  # after a conversion
    topic = kafka_topic_factory(PARTITIONS, 3)
    made = Group(kafka_cluster.bootstrap_servers, name, topic, tmp_path, class_path)
    yield made
    for member in made.members:
        member.kill()


def settled(g: Group, active: AnyMember, *, hold_s: float = 3.0) -> None:
    """Wait until ``active`` owns every partition and every other live member none, for ``hold_s``."""
    since: list[float] = []

    def check() -> bool:
        owners = g.owners()
        right = owners.get(active.name) == ALL and not any(p for n, p in owners.items() if n != active.name)
        if not right:
            since.clear()
            return False
        since[:] = since or [time.monotonic()]
        return time.monotonic() - since[0] >= hold_s

    try:
        wait_until(check, 90, f"{active.name} to own every partition alone", step=0.2)
    except AssertionError as exc:
        raise AssertionError(f"{exc}: {g.owners()}; {g.timeline()}") from None


def described_when(
    g: Group, expected: Callable[[dict[str, tuple[bytes, bytes, bytes]]], bool], what: str
) -> dict[str, tuple[bytes, bytes, bytes]]:
    seen: list[Any] = [None]

    def ask() -> bool:
        try:
            seen[0] = g.described()
        except Exception as exc:  # a coordinator moving or a rebalance in flight: asked again
            seen[0] = exc
            return False
        return expected(seen[0])

    try:
        wait_until(ask, 60, what, step=1.0)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last DescribeGroups: {seen[0]}") from None
    return seen[0]  # type: ignore[no-any-return]


def test_java_leader_protects_a_mixed_group_and_hands_over_on_close(group: Group) -> None:
    from kafka_placement.assignment.userdata import encode_failover_assignment, encode_priority

    g = group
    producer = KeyedProducer(g.bootstrap, g.topic, records=10**9, rate_per_s=RATE_PER_S)
    java = g.java("java30", 30, ready=False)
    settled(g, java, hold_s=0.5)  # alone: it leads the group from here on
    p20, p10 = g.python("py20", 20, ready=False), g.python("py10", 10, ready=False)
    wait_until(lambda: all(m.last("assignment") for m in (p20, p10)), 90, "20 and 10 to join")
    settled(g, java)
    described = described_when(g, lambda d: set(d) == {"java30", "py20", "py10"}, "all three described")
    assert described["java30"][0] == encode_priority(30)
    for name, priority in [("java30", 30), ("py20", 20), ("py10", 10)]:
        assert described[name][2] == encode_failover_assignment(priority), (name, described[name])
    assert not [e for m in (p20, p10) for e in m.snapshot() if e["ev"] == "led"], "a Python member led"
    seen: list[Any] = []

    def describes_the_priorities() -> bool:  # asked again while a rebalance is in flight
        seen[:] = [_group_describe(g)]
        code, description = seen[0]
        return code == 0 and {m["client_id"]: m["priority"] for m in description.get("members", [])} == {
            "java30": 30,
            "py20": 20,
            "py10": 10,
        }

    try:
        wait_until(describes_the_priorities, 60, "group describe to read the three priorities", step=1.0)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last: {seen}") from None
    assert consumed(p20) == [] and consumed(p10) == [], g.timeline()
    assert consumed(java), "the active Java member consumed nothing"

    closed_at = time.monotonic()
    java.close(timeout=30)
    wait_until(
        lambda: owned(p20) == ALL and owned(p10) == [],
        CLEAN_TAKEOVER_S,
        "20 to own every partition after the Java member's clean close",
    )
    takeover_s = time.monotonic() - closed_at
    settled(g, p20)
    producer.finish(top_up=False)
    everyone = lambda: set(consumed(java)) | set(consumed(p20)) | set(consumed(p10))  # noqa: E731
    wait_until(lambda: producer.delivered <= everyone(), 90, "every acknowledged record to be consumed")
    assert not producer.errors, producer.errors[:5]
    assert consumed(p10) == [] and not ever_owned(p10)
    for member in (java, p20, p10):
        assert failover_warnings(member) == [], (member.name, failover_warnings(member))
    print(
        f"\nJava-led failover group: {len(producer.delivered):,} records acknowledged, all consumed; "
        f"clean close of the Java member -> 20 owns all in {takeover_s:.1f}s"
    )


def test_python_leader_assigns_the_java_member(group: Group) -> None:
    """The other direction: a kafka-python member (20) leads, the Java member (30) joins and is assigned
    everything by it, and reads the Python leader's userData without a warning."""
    from kafka_placement.assignment.userdata import encode_failover_assignment

    g = group
    producer = KeyedProducer(g.bootstrap, g.topic, records=10**9, rate_per_s=RATE_PER_S)
    p20 = g.python("py20", 20, ready=False)
    settled(g, p20, hold_s=0.5)
    java = g.java("java30", 30, ready=False)
    wait_until(lambda: java.last("assignment") is not None, 90, "the Java member to join")
    settled(g, java)
    described = described_when(g, lambda d: set(d) == {"java30", "py20"}, "both described")
    assert described["java30"][2] == encode_failover_assignment(30), described
    assert [e for e in p20.snapshot() if e["ev"] == "led" and len(e["members"]) == 2], (
        "the Python member never led a generation with the Java member: " + g.timeline()
    )
    producer.finish(top_up=False)
    wait_until(
        lambda: producer.delivered <= set(consumed(java)) | set(consumed(p20)),
        90,
        "every acknowledged record to be consumed",
    )
    for member in (java, p20):
        assert failover_warnings(member) == [], (member.name, failover_warnings(member))


def test_migration_ready_java_member_keeps_its_partitions_through_the_conversion(group: Group) -> None:
    from kafka_placement.clients.group_assignor import CONVERTIBLE

    g = group
    producer = KeyedProducer(g.bootstrap, g.topic, records=10**9, rate_per_s=RATE_PER_S)
    java = g.java("java30", 30, ready=True)
    settled(g, java, hold_s=0.5)
    p20, p10 = g.python("py20", 20, ready=True), g.python("py10", 10, ready=True)
    wait_until(lambda: all(m.last("assignment") for m in (p20, p10)), 90, "20 and 10 to join")
    settled(g, java)
    described = described_when(g, lambda d: set(d) == {"java30", "py20", "py10"}, "all three described")
    assert described["java30"][1] == "#priority=30", described
    assert all(entry[2] == b"" for entry in described.values()), described  # convertible: nobody protects it
    # every member, Python ones included, takes the Java leader's empty userData for ours (null would be the
    # broker's or a foreign leader's)
    for member in (java, p20, p10):
        wait_until(
            lambda m=member: log_lines(m, "INFO", CONVERTIBLE), 30, f"{member.name} to log {CONVERTIBLE!r}"
        )

    k5 = g.consumer_protocol("k5", 5)
    wait_until(lambda: k5.last("assignment") is not None or not k5.alive(), 90, "5 to join")
    assert k5.alive(), log_lines(k5, "")[-20:]
    wait_until(lambda: _group_type(g) == "CONSUMER", 60, "Kafka to convert the group")
    settled(g, java, hold_s=5.0)
    assert not ever_owned(k5) and consumed(k5) == [], g.timeline()
    producer.finish(top_up=False)
    everyone = lambda: set().union(*(set(consumed(m)) for m in g.members))  # noqa: E731
    wait_until(lambda: producer.delivered <= everyone(), 90, "every acknowledged record to be consumed")
    assert consumed(p20) == [] and consumed(p10) == [], g.timeline()
    for member in (java, p20, p10):
        assert failover_warnings(member) == [], (member.name, failover_warnings(member))
    print(
        f"\nmigration-ready Java-led group converted by a consumer-protocol member: "
        f"{len(producer.delivered):,} records acknowledged, all consumed, the Java member (30) kept all"
    )


def _group_describe(g: Group) -> tuple[int, dict[str, Any]]:
    """``kafka-placement group describe GROUP --json``, run in this process: exit code and JSON."""
    from kafka_placement.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["group", "describe", g.group, "--bootstrap-server", g.bootstrap, "--json"])
    return code, json.loads(out.getvalue()) if out.getvalue().strip() else {}


def _group_type(g: Group) -> str:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": g.bootstrap})
    try:
        return str(admin.describe_consumer_groups([g.group], request_timeout=5)[g.group].result(10).type.name)
    except Exception:  # a coordinator moving or loading: asked again
        return "?"
