"""Failover on Kafka's consumer group protocol (KIP-848), live: the broker runs our assignor.

Every broker of the test cluster loads ``FailoverServerAssignor``
(``kafka_placement.testing.failover_plugin``; consumer-protocol session timeout 6 s, heartbeat 1 s); the
test group sets its own session timeout of 15 s (a group config), so load on a 2-core machine does not fence a
live member.
Three members in separate processes, each with
``group.protocol=consumer``, ``group.remote.assignor=failover`` and its priority in ``client.rack``: two
confluent-kafka (priorities 10 and 1, settings from ``confluent_failover_config``) and one Java
``KafkaConsumer`` (priority 5, settings from the ``.properties`` text of ``java_failover_properties``).

- only 10 consumes while it lives;
- SIGKILL 10: the broker fences it when its session expires (the broker's log says when), and 5 owns every
  partition within 3 s of that: our assignor in the broker and the Java member's reconciliation. The
  fence itself is Kafka's timer, the session after 10's last heartbeat; a loaded broker runs it late
  (the whole takeover once took 23.2 s and once 18.1 s in a whole-suite run, 15.1-15.2 s alone), so its
  bound is looser: the session + 10 s;
- a clean close of 5: 1 owns every partition within 3 s;
- 10 comes back and takes everything back;
- 100,000 keyed records produced throughout: none lost; every duplicate is a record the SIGKILLed member
  consumed after its last commit (the at-least-once window: it commits every 0.5 s), none elsewhere.

With racks: a Java member in ``rack2#priority=5`` still fetches from its own rack's replica (KIP-392): the
broker's ``RackPriorityReplicaSelector`` reads the rack before ``#``; the consumer's
``preferred-read-replica`` metric names a rack2 broker for every partition whose leader is elsewhere.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from coordinated_groups import settled_group
from group_load import KeyedProducer, set_group_session_timeout  # this directory is on sys.path
from kafka_placement.clients.consumer_protocol import java_failover_properties
from kafka_placement.testing.failover_plugin import SESSION_TIMEOUT_MS
from member_process import Json, MemberProcess, wait_until

pytestmark = pytest.mark.kafka

PARTITIONS = 6
RECORDS = 100_000
RATE_PER_S = 1_500
MEMBER_SCRIPT = Path(__file__).with_name("consumer_protocol_member.py")
JAVA_MAIN = "io.kafkaplacement.conformance.live.ConsumerProtocolMember"
#: This group's session timeout, set as a group config (KIP-848's ``consumer.session.timeout.ms``, within
#: the broker's minimum of SESSION_TIMEOUT_MS and its 60 s maximum): on a loaded 2-core machine a live member
#: can miss 6 s of heartbeats and be fenced with no fault injected; 15 s keeps the failover in seconds.
GROUP_SESSION_MS = max(SESSION_TIMEOUT_MS, 15_000)
SESSION_S = GROUP_SESSION_MS / 1000
ALL = list(range(PARTITIONS))


class Member(MemberProcess):
    def __init__(self, name: str, argv: list[str], group: str) -> None:
        self.name, self.group = name, group
        super().__init__(argv, stderr=subprocess.DEVNULL)

    def owned(self) -> list[int] | None:
        last = self.last("assignment")
        return None if last is None else list(last["parts"])

    def joined(self) -> bool:
        return any(e["ev"] == "assignment" and e.get("member_id") for e in self.snapshot())

    def owns_since(self, parts: list[int]) -> float | None:
        """When this member's assignment last became exactly ``parts`` (None if it is not now)."""
        last = self.last("assignment")
        return last["t"] if last is not None and last["parts"] == parts else None

    def records(self) -> list[tuple[int, int, str, float]]:
        return [(p, o, k, e["t"]) for e in self.snapshot() if e["ev"] == "recs" for p, o, k in e["items"]]


def group_coordinator(cluster: Any, member: Member) -> str:
    """The group's coordinator and state as the broker describes them now (for a failure message)."""
    from confluent_kafka.admin import AdminClient

    try:
        group = member.group
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
        described = admin.describe_consumer_groups([group], request_timeout=10)[group].result(timeout=15)
        return f"broker {described.coordinator.id}, state {described.state}"
    except Exception as exc:  # a message for a failure already under way: never a second failure
        return f"not read ({exc!r})"


#: what a group coordinator logs when it fences a consumer-protocol member whose session expired
#: (``GroupMetadataManager``, Kafka's group-coordinator module): "[GroupId g] Member m fenced from the
#: group because the member session expired." in Kafka 4.4, "... because its session expired." earlier
FENCED = "Member {} fenced from the group because"
ENGINE_STAMP = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?Z ")


def fenced_at(cluster: Any, member_id: str, since: float) -> float | None:
    """When a broker logged fencing ``member_id`` for its expired session (epoch seconds, the container
    engine's receipt time of the line: the host's clock, as the members' events); None if none did."""
    needle = FENCED.format(member_id)
    for broker in cluster.broker_ids:
        for line in cluster.broker_logs(broker, since=since - 1, timestamps=True).splitlines():
            stamp = ENGINE_STAMP.match(line)
            if stamp is not None and needle in line and "session expired" in line:
                whole = datetime.fromisoformat(stamp[1]).replace(tzinfo=UTC).timestamp()
                return whole + (float(f"0.{stamp[2]}") if stamp[2] else 0.0)
    return None


def timeline(members: list[Member]) -> str:
    """Every member's assignment changes and commits, in time order (for a failure message)."""
    events = sorted(
        (e["t"], e["name"], e["ev"], e.get("parts", e.get("why")))
        for m in members
        for e in m.snapshot()
        if e["ev"] in ("assignment", "ready", "closed")
    )
    first = events[0][0] if events else 0.0
    return "; ".join(f"{t - first:.1f}s {name} {ev} {detail}" for t, name, ev, detail in events)


@pytest.fixture()
def topic(kafka_topic_factory: Callable[..., str]) -> str:
    return kafka_topic_factory(PARTITIONS, 3)


@pytest.fixture()
def spawn(kafka_cluster: Any, java_member_classpath: str, tmp_path: Path) -> Iterator[Callable[..., Member]]:
    members: list[Member] = []
    group = settled_group("kip848-failover", kafka_cluster)  # no coordinator move mid-test
    set_group_session_timeout(kafka_cluster.bootstrap_servers, group, GROUP_SESSION_MS)

    def start(name: str, priority: int, topic: str, *, java: bool = False, rack: str | None = None) -> Member:
        if java:
            properties = tmp_path / f"{name}.properties"
            properties.write_text(
                java_failover_properties(
                    priority, rack, {"bootstrap.servers": kafka_cluster.bootstrap_servers, "group.id": group}
                )
            )
            argv = ["java", "-Xmx192m", "-cp", java_member_classpath, JAVA_MAIN, str(properties), name, topic]
        else:
            config: Json = {
                "name": name,
                "bootstrap": kafka_cluster.bootstrap_servers,
                "group": group,
                "topic": topic,
                "priority": priority,
                "rack": rack,
            }
            argv = [sys.executable, str(MEMBER_SCRIPT), json.dumps(config)]
        member = Member(name, argv, group)
        members.append(member)
        return member

    yield start
    for member in members:
        member.kill()


def test_failover_on_the_consumer_protocol(
    kafka_cluster: Any, topic: str, spawn: Callable[..., Member]
) -> None:
    producer = KeyedProducer(kafka_cluster.bootstrap_servers, topic, records=RECORDS, rate_per_s=RATE_PER_S)
    m10 = spawn("p10", 10, topic)
    wait_until(lambda: m10.owned() == ALL, 90, "priority 10 to own every partition")
    m5 = spawn("p5-java", 5, topic, java=True)
    m1 = spawn("p1", 1, topic)
    wait_until(lambda: m5.joined() and m1.joined(), 90, "priorities 5 and 1 to join")
    time.sleep(3)  # standbys stay idle while 10 lives
    assert m10.owned() == ALL and m5.owned() == [] and m1.owned() == [], timeline([m10, m5, m1])
    assert m5.records() == [] and m1.records() == [], (
        "a standby consumed while priority 10 was alive: " + timeline([m10, m5, m1])
    )
    assert m10.records(), "priority 10 consumed nothing"

    killed = m10.last("assignment")
    assert killed is not None
    killed_at = time.time()
    m10.kill()
    taken = wait_until(lambda: m5.owns_since(ALL), SESSION_S + 30, "priority 5 to take over")
    kill_s = taken - killed_at
    fenced = fenced_at(kafka_cluster, str(killed["member_id"]), killed_at)
    said = (
        f"5 took over {kill_s:.1f}s after the SIGKILL, "
        + ("no broker logged 10's fence" if fenced is None else f"{taken - fenced:.1f}s after 10's fence")
        + f"; coordinator {group_coordinator(kafka_cluster, m5)}; "
        + timeline([m10, m5, m1])
    )
    assert fenced is not None, said
    fence_s, taken_after_fence_s = fenced - killed_at, taken - fenced
    # ours: the failover assignor in the broker, the member's reconciliation
    assert taken_after_fence_s <= 3, said
    assert fence_s <= SESSION_S + 10, said  # Kafka's session timer, on a loaded broker
    assert m1.owned() == []

    m5.close()
    taken = wait_until(lambda: m1.owns_since(ALL), 30, "priority 1 to take over")
    closing = m5.last("closing")
    assert closing is not None, "the Java member did not report its clean close"
    close_s = taken - closing["t"]
    assert close_s <= 3, f"1 took over {close_s:.1f}s after 5 began its clean close"

    back = spawn("p10-again", 10, topic)
    wait_until(lambda: back.owned() == ALL and m1.owned() == [], 60, "priority 10 to take everything back")

    producer.finish()
    members = [m10, m5, m1, back]
    wait_until(
        lambda: producer.delivered <= {(p, o) for m in members for p, o, _, _ in m.records()},
        90,
        "every delivered record to be consumed",
    )
    assert not producer.errors and len(producer.delivered) == RECORDS
    for member in (m1, back):
        member.close()

    consumed = Counter((p, o) for m in members for p, o, _, _ in m.records())
    keys = {(p, o): k for m in members for p, o, k, _ in m.records()}
    assert {k for k in keys.values()} >= {f"k{i}" for i in range(RECORDS)}  # none lost, by key too
    duplicates = {po for po, n in consumed.items() if n > 1}
    # the at-least-once window: what the SIGKILLed member consumed after its last commit
    last_commit = max((e["t"] for e in m10.snapshot() if e["ev"] == "committed"), default=0.0)
    uncommitted = {(p, o) for p, o, _, t in m10.records() if t >= last_commit}
    print(
        f"\nconsumer protocol failover: SIGKILL -> fenced in {fence_s:.1f}s (session {SESSION_S:.0f}s), "
        f"5 owns all {taken_after_fence_s:.1f}s later ({kill_s:.1f}s in all), "
        f"clean close -> 1 owns all in {close_s:.1f}s; {RECORDS:,} records, {len(duplicates)} duplicates, "
        f"bound {len(uncommitted)} (consumed by the killed member after its last commit)"
    )
    assert duplicates <= uncommitted, duplicate_report(duplicates - uncommitted, members)


def duplicate_report(duplicates: set[tuple[int, int]], members: list[Member]) -> str:
    """Who consumed the first few unexplained duplicates, when, and every member's commit outcomes."""
    first = sorted(duplicates)[:5]
    lines = [f"{len(duplicates)} duplicates not consumed by the killed member after its last commit"]
    for po in first:
        seen = [(round(t, 2), m.name) for m in members for p, o, _, t in m.records() if (p, o) == po]
        lines.append(f"{po}: consumed by {sorted(seen)}")
    for m in members:
        commits = [
            (round(e["t"], 2), e["ev"], e.get("why"), e.get("error"))
            for e in m.snapshot()
            if e["ev"] in ("committed", "commit-nothing", "closing", "closed")
        ]
        failed = [c for c in commits if c[1] == "commit-nothing"]
        lines.append(
            f"{m.name}: {len(commits)} commit events, not committed: {failed[:5]}, last: {commits[-3:]}"
        )
    return "\n".join(lines) + "\n" + timeline(members)


def test_fetch_from_follower_with_a_priority_in_the_rack(
    kafka_cluster: Any, topic: str, spawn: Callable[..., Member]
) -> None:
    from confluent_kafka.admin import AdminClient

    racks = kafka_cluster.broker_racks
    rack2 = {b for b, r in racks.items() if r == "rack2"}
    admin = AdminClient({"bootstrap.servers": kafka_cluster.bootstrap_servers})
    metadata = admin.list_topics(topic, timeout=30)
    partitions = metadata.topics[topic].partitions
    assert all(rack2 & set(p.replicas) for p in partitions.values()), "every partition has a rack2 replica"

    java = spawn("p5-rack2", 5, topic, java=True, rack="rack2")
    other = spawn("p1-rack1", 1, topic, rack="rack1")
    wait_until(lambda: java.owned() == ALL, 90, "the rack2 member (priority 5) to own every partition")
    wait_until(lambda: other.joined(), 60, "the rack1 member to join")
    assert other.owned() == []

    def follower_reads() -> dict[int, int] | None:
        last = java.last("replicas")
        chosen = {int(p): int(float(n)) for p, n in (last["map"] if last else {}).items()}
        away = [p for p, meta in partitions.items() if meta.leader not in rack2]
        if away and all(chosen.get(p, -1) in rack2 for p in away):
            return chosen
        return None

    # A priority-carrying rack must still match: a replica in rack2 serves every partition led elsewhere
    # (the leader serves the others, -1 in the metric). Kafka's own RackAwareReplicaSelector would see the
    # rack "rack2#priority=5", match no broker and leave every read on the leader.
    chosen = wait_until(follower_reads, 60, "fetches from rack2 replicas", step=0.5)
    for p, meta in partitions.items():
        if meta.leader in rack2:
            assert chosen.get(p, -1) in (-1, meta.leader)
