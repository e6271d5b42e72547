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

import itertools
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from group_load import KeyedProducer, set_group_session_timeout  # this directory is on sys.path
from live_group import ConsumerProtocolMember, Worker
from member_process import MemberProcess, wait_until

pytestmark = pytest.mark.kafka

PARTITIONS = 6
ALL = frozenset(range(PARTITIONS))
RATE_PER_S = 300
#: Classic members' session timeout and the consumer-protocol group's (a group config): long enough that a
#: loaded 2-core machine does not fence a live member, so any pause near it would show a missed handover.
SESSION_MS = 15_000
SESSION_S = SESSION_MS / 1000
#: A clean takeover: a heartbeat interval (1 s on both protocols here) and a rebalance. Measured 1-3 s; the
#: bound leaves room for a loaded machine and stays well under the session timeout.
CLEAN_TAKEOVER_S = 10.0
KILL_TAKEOVER_S = SESSION_S + 3.0
GRID_S = 0.5
CONSUMER_PROTOCOL_MEMBER = Path(__file__).with_name("consumer_protocol_member.py")


class ConsumerProtocolFailoverMember(MemberProcess):
    """``consumer_protocol_member.py``: confluent-kafka, ``group.protocol=consumer``, our broker assignor."""

    def __init__(self, bootstrap: str, group: str, name: str, topic: str, priority: int,
                 log_dir: Path) -> None:
        self.name = name
        self.log = (log_dir / f"{name}.log").open("w")
        config = {"bootstrap": bootstrap, "group": group, "name": name, "topic": topic, "priority": priority}
        super().__init__([sys.executable, str(CONSUMER_PROTOCOL_MEMBER), json.dumps(config)], stderr=self.log)

    def log_tail(self, lines: int = 15) -> str:
        with open(self.log.name, errors="replace") as f:
            return "".join(f.readlines()[-lines:])


CLASSIC_SCRIPTS = {"aiokafka": "aiokafka_member.py", "confluent": "confluent_member.py"}


class ClassicMember(MemberProcess):
    """A classic failover member in ``aiokafka_member.py`` or ``confluent_member.py`` (our confluent
    ``Consumer``: kafka-python runs its membership, librdkafka fetches)."""


    def __init__(self, client: str, bootstrap: str, group: str, name: str, topic: str, priority: int,
                 ready: bool, log_dir: Path) -> None:
        self.name = name
        self.log = (log_dir / f"{name}.log").open("w")
        config = {"bootstrap": bootstrap, "group": group, "name": name, "topics": [topic],
                  "priority": priority, "strategy": "failover", "migration_ready": ready,
                  "session_timeout_ms": SESSION_MS}
        script = Path(__file__).with_name(CLASSIC_SCRIPTS[client])
        super().__init__([sys.executable, str(script), json.dumps(config)], stderr=self.log)

    def log_tail(self, lines: int = 15) -> str:
        with open(self.log.name, errors="replace") as f:
            return "".join(f.readlines()[-lines:])


class JavaMember(MemberProcess):
    """The test suite's Java member (``integration_tests/java/member``: a ``KafkaConsumer`` whose settings
    come from a ``.properties`` file; its assignor on the classic protocol is the one the file names)."""

    def __init__(self, class_path: str, properties: Path, name: str, topic: str, log_dir: Path) -> None:
        self.name = name
        self.log = (log_dir / f"{name}.log").open("w")
        super().__init__(["java", "-Xmx192m", "-cp", class_path, JAVA_PROPERTIES_MEMBER, str(properties),
                          name, topic], stderr=self.log)

    def log_tail(self, lines: int = 15) -> str:
        with open(self.log.name, errors="replace") as f:
            return "".join(f.readlines()[-lines:])


JAVA_PROPERTIES_MEMBER = "io.kafkaplacement.conformance.live.ConsumerProtocolMember"
AnyMember = Worker | ConsumerProtocolFailoverMember | ClassicMember | JavaMember


def owned_at(member: AnyMember, t: float) -> frozenset[int]:
    """The partitions ``member`` reported owning at time ``t`` (its last assignment event before ``t``)."""
    parts: frozenset[int] = frozenset()
    for event in member.snapshot():
        if event["t"] > t:
            break
        if event["ev"] == "assignment":
            parts = frozenset(p[1] if isinstance(p, list) else p for p in event["parts"])
    return parts


def consumed_times(member: AnyMember) -> list[float]:
    return [e["t"] for e in member.snapshot() if e["ev"] == "recs"]


def consumed(member: AnyMember) -> set[tuple[int, int]]:
    return {(item[0], item[1]) for e in member.snapshot() if e["ev"] == "recs" for item in e["items"]}


@dataclass
class Slot:
    """One member process of the group and what the test knows of its life."""

    member: AnyMember
    priority: int
    protocol: str
    started_at: float = 0.0  # when the test started its process
    seen_at: float | None = None  # first time the broker listed it in the group
    gone_at: float | None = None  # when the test closed or killed it
    killed: bool = False


@dataclass
class MigrationGroup:
    """The group under test: its members, a sampler of the broker's view, and the steps taken."""

    bootstrap: str
    group: str
    topic: str
    log_dir: Path
    slots: list[Slot] = field(default_factory=list)
    steps: list[tuple[str, float, float]] = field(default_factory=list)  # (what, start, end)
    group_types: list[tuple[float, str]] = field(default_factory=list)
    #: class path of the Java members (our client assignor's jar, the test suite's member), when used
    java_class_path: str | None = None
    _stop: threading.Event = field(default_factory=threading.Event)

    def start_sampler(self) -> None:
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self) -> None:
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        while not self._stop.is_set():
            try:
                future = admin.describe_consumer_groups([self.group], request_timeout=5)[self.group]
                description = future.result(10)
            except Exception:  # a coordinator moving or loading: the next sample asks again
                time.sleep(GRID_S)
                continue
            now = time.time()
            self.group_types.append((now, description.type.name))
            listed = {m.client_id for m in description.members}
            for slot in self.slots:
                if slot.seen_at is None and slot.gone_at is None and slot.member.name in listed:
                    slot.seen_at = now
            time.sleep(GRID_S)

    def stop(self) -> None:
        self._stop.set()

    def classic(self, name: str, priority: int, *, ready: bool, client: str = "kafka-python") -> Slot:
        """A classic failover member: kafka-python (``Worker``), aiokafka or our confluent ``Consumer``."""
        member: AnyMember
        if client == "kafka-python":
            member = Worker(self.bootstrap, self.group, name, [self.topic], "failover", str(self.log_dir),
                            priority=priority, migration_ready=ready, session_timeout_ms=SESSION_MS,
                            report_records=True)
        else:
            member = ClassicMember(client, self.bootstrap, self.group, name, self.topic, priority, ready,
                                   self.log_dir)
        return self._add(Slot(member, priority, "classic"))

    def consumer(self, name: str, priority: int) -> Slot:
        member = ConsumerProtocolFailoverMember(self.bootstrap, self.group, name, self.topic, priority,
                                                self.log_dir)
        return self._add(Slot(member, priority, "consumer"))

    def java(self, name: str, priority: int, *, protocol: str) -> Slot:
        """A Java ``KafkaConsumer``: classic with our Java client assignor (migration-ready; settings from
        ``client_assignor.build.consumer_settings``) or consumer protocol (``java_failover_properties``)."""
        from kafka_placement.broker_plugin.settings import properties_text
        from kafka_placement.client_assignor.build import consumer_settings
        from kafka_placement.clients.consumer_protocol import java_failover_properties

        assert self.java_class_path is not None, "the test did not ask for java_class_path"
        base = {"bootstrap.servers": self.bootstrap, "group.id": self.group}
        properties = self.log_dir / f"{name}.properties"
        if protocol == "classic":
            properties.write_text(properties_text({**base, "session.timeout.ms": str(SESSION_MS),
                                                   "heartbeat.interval.ms": "1000",
                                                   **consumer_settings(priority, migration_ready=True)}))
        else:
            properties.write_text(java_failover_properties(priority, None, base))
        member = JavaMember(self.java_class_path, properties, name, self.topic, self.log_dir)
        return self._add(Slot(member, priority, protocol))

    def _add(self, slot: Slot) -> Slot:
        slot.started_at = slot.member.started_at
        self.slots.append(slot)
        wait_until(lambda: slot.seen_at is not None or not slot.member.alive(), 60,
                   f"the broker to list {slot.member.name} in the group")
        assert slot.member.alive(), f"{slot.member.name} exited: {self.tail(slot)}"
        return slot

    def close(self, slot: Slot) -> None:
        slot.gone_at = time.time()
        slot.member.close(timeout=30)

    def kill(self, slot: Slot) -> None:
        slot.gone_at = time.time()
        slot.killed = True
        slot.member.kill()

    def replace(self, old: Slot, make: Callable[[], Slot], *, surge: bool = True) -> Slot:
        """One step of a rolling restart, then wait for the best live member to own everything. ``surge``:
        the new member joins, then the old one closes (a Deployment's default); else the old one closes
        first and the new one starts once the group has settled without it (a StatefulSet's order)."""
        start = time.time()
        if surge:
            new = make()
            time.sleep(2)
            self.close(old)
        else:
            self.close(old)
            self.settle()
            new = make()
        self.settle()
        self.steps.append((f"{old.member.name} -> {new.member.name}", start, time.time()))
        return new

    def best_live(self, t: float) -> tuple[int, list[Slot]]:
        live = [s for s in self.slots if s.seen_at is not None and s.seen_at <= t
                and (s.gone_at is None or s.gone_at > t)]
        top = max((s.priority for s in live), default=0)
        return top, [s for s in live if s.priority == top]

    def settled_now(self) -> bool:
        now = time.time()
        _, best = self.best_live(now)
        owners = {s.member.name: owned_at(s.member, now) for s in self.slots if s.gone_at is None}
        return (any(owners.get(b.member.name) == ALL for b in best)
                and all(not parts for name, parts in owners.items()
                        if name not in {b.member.name for b in best}))

    def settle(self) -> None:
        wait_until(self.settled_now, KILL_TAKEOVER_S + 30, "the best live member to own every partition",
                   step=GRID_S)
        time.sleep(2)

    def tail(self, slot: Slot) -> str:
        return slot.member.log_tail(20)

    # --- the judgement ------------------------------------------------------------------------
    def violations(self, start: float, end: float) -> list[str]:
        """Grid points outside takeover windows where the best live member does not own everything, or
        another member owns something; and takeovers that outlasted their bound."""
        # a joining member's takeover can start before the sampler sees it listed: its window opens when
        # its process started and closes a clean takeover after it was listed
        changes = sorted([(s.started_at, s.seen_at - s.started_at + CLEAN_TAKEOVER_S)
                          for s in self.slots if s.seen_at is not None]
                         + [(s.gone_at, KILL_TAKEOVER_S if s.killed else CLEAN_TAKEOVER_S)
                            for s in self.slots if s.gone_at is not None])
        problems = []
        t = start
        while t <= end:
            if not any(c <= t < c + bound for c, bound in changes):
                top, best = self.best_live(t)
                if not best:  # before the first member joined
                    t += GRID_S
                    continue
                names = {b.member.name for b in best}
                owners = {s.member.name: owned_at(s.member, t) for s in self.slots
                          if s.seen_at is not None and (s.gone_at is None or s.gone_at > t)}
                wrong = {n: sorted(p) for n, p in owners.items() if n not in names and p}
                if not any(owners.get(n) == ALL for n in names) or wrong:
                    problems.append(f"t={t - start:.1f}s best {sorted(names)} (priority {top}); owners "
                                    f"{ {n: sorted(p) for n, p in owners.items()} }")
            t += GRID_S
        return problems

    def longest_pause(self, start: float, end: float) -> float:
        times = sorted(t for s in self.slots for t in consumed_times(s.member) if start <= t <= end)
        edges = [start, *times, end]
        return max(b - a for a, b in itertools.pairwise(edges))

    def timeline(self) -> str:
        events = sorted((e["t"], s.member.name, e["ev"], e) for s in self.slots
                        for e in s.member.snapshot() if e["ev"] in ("assignment", "closed", "closing"))
        first = events[0][0] if events else 0.0
        return "; ".join(f"{t - first:.1f}s {n} {ev} "
                         f"{sorted(owned_at(s.member, t)) if ev == 'assignment' else ''}"
                         for t, n, ev, _ in events for s in self.slots if s.member.name == n)


@pytest.fixture()
def migration(kafka_cluster: Any, kafka_topic_factory: Callable[..., str],
              tmp_path: Path) -> Iterator[MigrationGroup]:
    topic = kafka_topic_factory(PARTITIONS, 3)
    group = f"migration-{uuid.uuid4().hex[:8]}"
    set_group_session_timeout(kafka_cluster.bootstrap_servers, group, SESSION_MS)
    harness = MigrationGroup(kafka_cluster.bootstrap_servers, group, topic, tmp_path)
    harness.start_sampler()
    yield harness
    harness.stop()
    for slot in harness.slots:
        slot.member.kill()


def run_with_load(harness: MigrationGroup, move: Callable[[KeyedProducer], None]) -> KeyedProducer:
    """Steady keyed load while ``move`` runs; then every acknowledged record must be consumed."""
    producer = KeyedProducer(harness.bootstrap, harness.topic, records=10**9, rate_per_s=RATE_PER_S)
    move(producer)
    producer.finish(top_up=False)
    everyone = lambda: set().union(*(consumed(s.member) for s in harness.slots))  # noqa: E731
    wait_until(lambda: producer.delivered <= everyone(), 90, "every acknowledged record to be consumed")
    assert not producer.errors, producer.errors[:5]
    return producer


def report(harness: MigrationGroup, start: float, baseline_pause: float) -> str:
    lines = [f"{'step':<24} {'s':>6} {'longest pause':>14}"]
    for what, a, b in harness.steps:
        lines.append(f"{what:<24} {b - a:6.1f} {harness.longest_pause(a, b):13.1f}s")
    if baseline_pause:
        lines.append(f"clean classic takeover (the active member's pre-roll, stop then start): "
                     f"{baseline_pause:.1f}s pause")
    return "\n".join(lines)


def check(harness: MigrationGroup, start: float) -> None:
    end = time.time()
    problems = harness.violations(start, end)
    assert not problems, (f"{len(problems)} grid points break the failover rule: {problems[:6]}\n"
                          f"{harness.timeline()}")
    for what, a, b in harness.steps:
        pause = harness.longest_pause(a, b)
        bound = KILL_TAKEOVER_S if "SIGKILL" in what else CLEAN_TAKEOVER_S
        assert pause <= bound, (f"{what}: consumption paused {pause:.1f}s (bound {bound:.0f}s)\n"
                                f"{harness.timeline()}")
    for slot in harness.slots:
        if not slot.killed:
            assert slot.member.proc.returncode == 0 or slot.gone_at is None, (
                f"{slot.member.name} exited with {slot.member.proc.returncode}: {harness.tail(slot)}")
            assert slot.gone_at is not None or slot.member.alive(), (
                f"{slot.member.name} died: {harness.tail(slot)}")


def describe(harness: MigrationGroup) -> tuple[int, dict[str, Any]]:
    """``kafka-placement group describe GROUP --json`` in a process of its own: exit code and JSON."""
    done = subprocess.run([sys.executable, "-m", "kafka_placement.cli", "group", "describe", harness.group,
                           "--bootstrap-server", harness.bootstrap, "--json"],
                          capture_output=True, text=True, timeout=120, check=False)
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else {"stderr": done.stderr}


def described_as(harness: MigrationGroup, expected: Callable[[int, dict[str, Any]], bool], what: str) -> Any:
    """Describe until ``expected(exit code, json)`` holds (a rebalance in flight is asked again), 60 s."""
    seen: list[Any] = []

    def ask() -> bool:
        seen[:] = [describe(harness)]
        return expected(*seen[0])

    try:
        wait_until(ask, 60, what, step=1.0)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last description: {seen}") from None
    return seen[0][1]


def by_client(description: dict[str, Any]) -> dict[str, Any]:
    return {m["client_id"]: m for m in description.get("members", [])}


def group_type(harness: MigrationGroup) -> str:
    return harness.group_types[-1][1] if harness.group_types else "?"


def test_lowest_first_to_the_consumer_protocol_and_back(migration: MigrationGroup) -> None:
    """Pre-roll onto migration_ready, classic -> consumer lowest priority first, rollback highest first."""
    h = migration
    start = time.time()
    members = {p: h.classic(f"c{p}-old", p, ready=False) for p in (30, 20, 10)}
    h.settle()
    baseline = [0.0]
    # before the pre-roll: protected, and group describe names every member to roll
    described_as(h, lambda code, d: code == 0 and d["migration"]["stage"] == "classic"
                 and d["migration"]["convertible"] is False and len(d["migration"]["not_ready"]) == 3,
                 "group describe: a protected classic group with 3 members to roll")

    def move(producer: KeyedProducer) -> None:
        for p in (10, 20, 30):  # the pre-roll: a plain classic rolling restart, lowest first; the active
            # member stops before its replacement starts, so its step holds two clean classic takeovers
            members[p] = h.replace(members[p], lambda p=p: h.classic(f"c{p}", p, ready=True), surge=p != 30)
        baseline[0] = h.longest_pause(*h.steps[-1][1:])
        assert group_type(h) == "CLASSIC"
        described_as(h, lambda code, d: code == 0 and d["migration"]["convertible"] is True
                     and not d["migration"]["not_ready"], "group describe: a ready classic group")
        for p in (10, 20, 30):
            members[p] = h.replace(members[p], lambda p=p: h.consumer(f"k{p}", p))
            if p == 10:  # mid-migration: two classic members left, ranked by the broker's failover assignor
                mid = described_as(h, lambda code, d: code == 0 and d["migration"]["stage"] == "mid-migration"
                                   and len(d["migration"]["left_to_move"]) == 2,
                                   "group describe: mid-migration with two classic members left")
                clients = by_client(mid)
                assert {c: (m["member_protocol"], m["priority"]) for c, m in clients.items()} == {
                    "c30": ("classic", 30), "c20": ("classic", 20), "k10": ("consumer", 10)}, clients
                assert mid["assignor"] == "failover" and mid["failover"]["ok"], mid
        assert group_type(h) == "CONSUMER"
        for p in (30, 20, 10):  # rollback
            members[p] = h.replace(members[p], lambda p=p: h.classic(f"c{p}-back", p, ready=True))
        time.sleep(3)
        assert group_type(h) == "CLASSIC", h.group_types[-5:]

    producer = run_with_load(h, move)
    print(f"\nmigration lowest first and rollback: {len(producer.delivered):,} records acknowledged, "
          f"all consumed\n" + report(h, start, baseline[0]))
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
    print(f"\nmigration highest first with a SIGKILL: {len(producer.delivered):,} records acknowledged, all "
          f"consumed\n" + report(h, start, 0.0))
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
            wait_until(lambda slot=slot: "failover priorities are NOT honoured" in slot.member.log_tail(400)
                       or not owned_at(slot.member, time.time()), 30, f"{slot.member.name}'s ERROR line")
        errors = [line for s in members.values() for line in s.member.log_tail(400).splitlines()
                  if "failover priorities are NOT honoured" in line]
        assert errors and all(" ERROR " in line for line in errors), errors
        assert all(BROKER_ASSIGNS in s.member.log_tail(400) for s in members.values())
        described = described_as(h, lambda code, d: code == 1 and bool(d["migration"]["problems"]),
                                 "group describe: exit 1 naming the assignor")
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
        Consumer(confluent_failover_config(10, None, base))
    message = str(refused.value)
    assert "\n" not in message and "protected against conversion" in message
    assert "c30-old" in message and "c20-old" in message and time.monotonic() - started < 15
    for p in (30, 20):  # the pre-roll
        members[p] = h.replace(members[p], lambda p=p: h.classic(f"c{p}", p, ready=True))
    with pytest.raises(ConsumerConfigError, match=r"must set group\.remote\.assignor=failover"):
        Consumer({**base, "group.protocol": "consumer", "client.rack": "#priority=10"})
    time.sleep(3)
    assert group_type(h) == "CLASSIC" and h.settled_now()
    ok = Consumer(confluent_failover_config(10, None, base))  # the right settings pass the check
    ok.close()


JAVA_GROUP_MEMBER = "io.kafkaplacement.conformance.live.GroupMember"


class JavaClassicMember(MemberProcess):
    """The test suite's own Java failover implementation (``integration_tests/java/member``), which, like
    Java's assignors, leaves the assignment userData empty: a failover leader that is not ours."""

    def __init__(self, classpath: str, bootstrap: str, group: str, name: str, topic: str,
                 priority: int) -> None:
        self.name = name
        super().__init__(["java", "-Xmx192m", "-cp", classpath, JAVA_GROUP_MEMBER, bootstrap, group, name,
                          topic, f"failover:{priority}"], stderr=subprocess.DEVNULL)

    def log_tail(self, lines: int = 15) -> str:
        return "(stderr not kept)"


def test_a_failover_leader_that_is_not_ours_is_named_before_anything_moves(
    migration: MigrationGroup, java_member_classpath: str,
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
    described = described_as(h, lambda code, d: code == 1 and bool(d["migration"]["problems"]),
                             "group describe: exit 1 naming the member whose priority the broker can't see")
    assert "could not see the priority of 1 member(s)" in described["migration"]["problems"][0], described
    not_ready = described["migration"]["not_ready"]
    assert [by_client(described)[c]["member_id"] for c in ("j40",)] == list(not_ready), not_ready
    with pytest.raises(ConsumerConfigError, match="could not see the priority of j40"):
        Consumer(confluent_failover_config(10, None, {"bootstrap.servers": h.bootstrap, "group.id": h.group}))
    assert group_type(h) == "CLASSIC" and h.settled_now()


def test_every_client_moves_together(migration: MigrationGroup, java_member_classpath: str) -> None:
    """Every classic client we support in one group, migration-ready: a Java ``KafkaConsumer`` with our Java
    client assignor (40, joined first: it leads), kafka-python (30), aiokafka (20) and our confluent
    ``Consumer`` (10); replaced lowest first under load by consumer-protocol members — confluent-kafka for
    the Python ones, a Java ``KafkaConsumer`` for the Java one."""
    from kafka_placement.client_assignor.build import build_jar
    from kafka_placement.versions import KAFKA_VERSION

    h = migration
    h.java_class_path = os.pathsep.join([str(build_jar(KAFKA_VERSION)), java_member_classpath])
    start = time.time()
    members = {40: h.java("j40", 40, protocol="classic"),
               30: h.classic("c30", 30, ready=True),
               20: h.classic("a20", 20, ready=True, client="aiokafka"),
               10: h.classic("f10", 10, ready=True, client="confluent")}
    h.settle()
    described_as(h, lambda code, d: code == 0 and d["migration"]["convertible"] is True
                 and not d["migration"]["not_ready"], "group describe: every client's member ready")

    def move(producer: KeyedProducer) -> None:
        for p in (10, 20, 30):
            members[p] = h.replace(members[p], lambda p=p: h.consumer(f"k{p}", p))
        members[40] = h.replace(members[40], lambda: h.java("jk40", 40, protocol="consumer"))
        assert group_type(h) == "CONSUMER"

    producer = run_with_load(h, move)
    print(f"\nevery client, lowest first: {len(producer.delivered):,} records acknowledged, all consumed\n"
          + report(h, start, 0.0))
    check(h, start)


@pytest.fixture(scope="module")
def plugin_less_cluster(kafka_cluster_factory: Callable[..., Any]) -> Any:
    """One broker without our plugin: what a managed service (Confluent Cloud, MSK, …) offers."""
    return kafka_cluster_factory("plaintext", racks={0: "rack1"}, failover_assignor=False)


def test_on_brokers_without_the_plugin_the_group_stays_classic_and_the_tooling_says_so(
    plugin_less_cluster: Any, tmp_path: Path,
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
        described = described_as(h, lambda code, d: code == 0 and d["migration"]["brokers_without_failover"]
                                 == [0], "group describe: the broker lacks the failover assignor")
        advice = described["migration"]["advice"]
        assert advice.startswith("stay classic: broker(s) [0] do not offer"), described
        started = time.monotonic()
        with pytest.raises(ConsumerConfigError) as refused:
            Consumer(confluent_failover_config(10, None, {"bootstrap.servers": bootstrap,
                                                          "group.id": h.group}))
        message = str(refused.value)
        assert "\n" not in message and time.monotonic() - started < 15
        assert message.startswith("group.remote.assignor=failover, but broker(s) [0] offer only "
                                  "uniform,range"), message
        # a plain librdkafka member, no check of ours in front of it
        intruder = ConsumerProtocolMember(bootstrap, h.group, "plain-failover", topic, tmp_path,
                                          conf=confluent_failover_config(10))
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
