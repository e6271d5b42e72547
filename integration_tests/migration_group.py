"""The harness of the live protocol-migration tests (this directory is on sys.path): a failover group whose
members the test starts, closes and kills one by one — kafka-python, aiokafka, our confluent ``Consumer``
and Java members on the classic protocol, confluent-kafka and Java members on the consumer protocol — with
the broker's view of its membership sampled every 0.5 s, and the judgement of a move
(:meth:`MigrationGroup.violations`, :func:`check`): outside a takeover window after each membership
change the highest-priority live member owns every partition and no other member owns any; consumption
never pauses longer than a takeover; every acknowledged record is consumed; no member process dies.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from group_load import KeyedProducer
from live_group import Worker
from member_process import MemberProcess, wait_until

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
#: how long the broker-view sampler's describes may keep failing before it builds a new admin client
SAMPLER_RENEW_S = 10.0
CONSUMER_PROTOCOL_MEMBER = Path(__file__).with_name("consumer_protocol_member.py")


class LoggedMember(MemberProcess):
    """A member process whose stderr goes to ``log_dir/<name>.log`` (shown when a check fails)."""

    def __init__(self, name: str, argv: list[str], log_dir: Path) -> None:
        self.name = name
        self.log = (log_dir / f"{name}.log").open("w")
        super().__init__(argv, stderr=self.log)

    def log_tail(self, lines: int = 15) -> str:
        with open(self.log.name, errors="replace") as f:
            return "".join(f.readlines()[-lines:])


class ConsumerProtocolFailoverMember(LoggedMember):
    """``consumer_protocol_member.py``: confluent-kafka, ``group.protocol=consumer``, our broker assignor."""

    def __init__(
        self, bootstrap: str, group: str, name: str, topic: str, priority: int, log_dir: Path
    ) -> None:
        config = {"bootstrap": bootstrap, "group": group, "name": name, "topic": topic, "priority": priority}
        super().__init__(name, [sys.executable, str(CONSUMER_PROTOCOL_MEMBER), json.dumps(config)], log_dir)


CLASSIC_SCRIPTS = {"aiokafka": "aiokafka_member.py", "confluent": "confluent_member.py"}


class ClassicMember(LoggedMember):
    """A classic failover member in ``aiokafka_member.py`` or ``confluent_member.py`` (our confluent
    ``Consumer``: kafka-python runs its membership, librdkafka fetches)."""

    def __init__(
        self,
        client: str,
        bootstrap: str,
        group: str,
        name: str,
        topic: str,
        priority: int,
        ready: bool,
        log_dir: Path,
    ) -> None:
        config = {
            "bootstrap": bootstrap,
            "group": group,
            "name": name,
            "topics": [topic],
            "priority": priority,
            "strategy": "failover",
            "migration_ready": ready,
            "session_timeout_ms": SESSION_MS,
        }
        script = Path(__file__).with_name(CLASSIC_SCRIPTS[client])
        super().__init__(name, [sys.executable, str(script), json.dumps(config)], log_dir)


class JavaMember(LoggedMember):
    """The test suite's Java member (``integration_tests/java/member``: a ``KafkaConsumer`` whose settings
    come from a ``.properties`` file; its assignor on the classic protocol is the one the file names)."""

    def __init__(self, class_path: str, properties: Path, name: str, topic: str, log_dir: Path) -> None:
        super().__init__(
            name,
            ["java", "-Xmx192m", "-cp", class_path, JAVA_PROPERTIES_MEMBER, str(properties), name, topic],
            log_dir,
        )


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
    #: the sampler's last failed describe, and how often it renewed its admin client (shown on a timeout)
    sampler_error: str = ""
    sampler_renewals: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)

    def start_sampler(self) -> None:
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self) -> None:
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        failing_since: float | None = None
        while not self._stop.is_set():
            try:
                future = admin.describe_consumer_groups([self.group], request_timeout=5)[self.group]
                description = future.result(10)
            except Exception as e:  # a coordinator moving or loading: the next sample asks again
                now = time.time()
                self.sampler_error = f"{now:.1f}: {type(e).__name__}: {e}"
                with open(self.log_dir / "sampler.log", "a") as log:  # kept for a post-mortem
                    print(self.sampler_error, file=log)
                failing_since = failing_since or now
                if now - failing_since > SAMPLER_RENEW_S:
                    # a CI run once had every describe fail for over 60 s while the group's members
                    # heartbeated fine: a new client (new connections, coordinator looked up afresh)
                    admin = AdminClient({"bootstrap.servers": self.bootstrap})
                    failing_since = now
                    self.sampler_renewals += 1
                time.sleep(GRID_S)
                continue
            failing_since = None
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
            member = Worker(
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
            )
        else:
            member = ClassicMember(
                client, self.bootstrap, self.group, name, self.topic, priority, ready, self.log_dir
            )
        return self._add(Slot(member, priority, "classic"))

    def consumer(self, name: str, priority: int) -> Slot:
        member = ConsumerProtocolFailoverMember(
            self.bootstrap, self.group, name, self.topic, priority, self.log_dir
        )
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
            properties.write_text(
                properties_text(
                    {
                        **base,
                        "session.timeout.ms": str(SESSION_MS),
                        "heartbeat.interval.ms": "1000",
                        **consumer_settings(priority, migration_ready=True),
                    }
                )
            )
        else:
            properties.write_text(java_failover_properties(priority, None, base))
        member = JavaMember(self.java_class_path, properties, name, self.topic, self.log_dir)
        return self._add(Slot(member, priority, protocol))

    def _add(self, slot: Slot) -> Slot:
        slot.started_at = slot.member.started_at
        self.slots.append(slot)
        try:
            wait_until(
                lambda: slot.seen_at is not None or not slot.member.alive(),
                60,
                f"the broker to list {slot.member.name} in the group",
            )
        except AssertionError as e:
            raise AssertionError(
                f"{e} (the sampler's last failed describe: {self.sampler_error or 'none'}; "
                f"admin clients renewed {self.sampler_renewals} times)"
            ) from None
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

    def converted_to_classic_after(self, last_consumer: Slot) -> float:
        """Wait for Kafka to convert the group back to classic once ``last_consumer`` (its last
        consumer-protocol member) has closed; the seconds from that close to the first classic sample.
        Kafka converts on that member's leave heartbeat, or when its session expires if the leave was lost
        (KIP-848's online downgrade, ``group.consumer.migration.policy``), so the bound is a SIGKILL's."""
        closed = last_consumer.gone_at
        assert closed is not None, f"{last_consumer.member.name} was not closed"

        def classic_since() -> float | None:
            return next((t for t, kind in self.group_types if t >= closed and kind == "CLASSIC"), None)

        try:
            wait_until(lambda: classic_since() is not None, KILL_TAKEOVER_S + 5, "Kafka to convert the group")
        except AssertionError as e:
            raise AssertionError(
                f"{e} back to classic after {last_consumer.member.name} closed (types sampled since: "
                f"{[k for t, k in self.group_types if t >= closed][-8:]}); "
                f"its log: {self.tail(last_consumer)}"
            ) from None
        since = classic_since()
        assert since is not None
        return since - closed

    def best_live(self, t: float) -> tuple[int, list[Slot]]:
        live = [
            s
            for s in self.slots
            if s.seen_at is not None and s.seen_at <= t and (s.gone_at is None or s.gone_at > t)
        ]
        top = max((s.priority for s in live), default=0)
        return top, [s for s in live if s.priority == top]

    def settled_now(self) -> bool:
        now = time.time()
        _, best = self.best_live(now)
        owners = {s.member.name: owned_at(s.member, now) for s in self.slots if s.gone_at is None}
        return any(owners.get(b.member.name) == ALL for b in best) and all(
            not parts for name, parts in owners.items() if name not in {b.member.name for b in best}
        )

    def settle(self) -> None:
        wait_until(
            self.settled_now, KILL_TAKEOVER_S + 30, "the best live member to own every partition", step=GRID_S
        )
        time.sleep(2)

    def tail(self, slot: Slot) -> str:
        return slot.member.log_tail(20)

    # --- the judgement ------------------------------------------------------------------------
    def violations(self, start: float, end: float) -> list[str]:
        """Grid points outside takeover windows where the best live member does not own everything, or
        another member owns something; and takeovers that outlasted their bound."""
        # a joining member's takeover can start before the sampler sees it listed: its window opens when
        # its process started and closes a clean takeover after it was listed
        changes = sorted(
            [
                (s.started_at, s.seen_at - s.started_at + CLEAN_TAKEOVER_S)
                for s in self.slots
                if s.seen_at is not None
            ]
            + [
                (s.gone_at, KILL_TAKEOVER_S if s.killed else CLEAN_TAKEOVER_S)
                for s in self.slots
                if s.gone_at is not None
            ]
        )
        problems = []
        t = start
        while t <= end:
            if not any(c <= t < c + bound for c, bound in changes):
                top, best = self.best_live(t)
                if not best:  # before the first member joined
                    t += GRID_S
                    continue
                names = {b.member.name for b in best}
                owners = {
                    s.member.name: owned_at(s.member, t)
                    for s in self.slots
                    if s.seen_at is not None and (s.gone_at is None or s.gone_at > t)
                }
                wrong = {n: sorted(p) for n, p in owners.items() if n not in names and p}
                if not any(owners.get(n) == ALL for n in names) or wrong:
                    problems.append(
                        f"t={t - start:.1f}s best {sorted(names)} (priority {top}); owners "
                        f"{ {n: sorted(p) for n, p in owners.items()} }"
                    )
            t += GRID_S
        return problems

    def longest_pause(self, start: float, end: float) -> float:
        times = sorted(t for s in self.slots for t in consumed_times(s.member) if start <= t <= end)
        edges = [start, *times, end]
        return max(b - a for a, b in itertools.pairwise(edges))

    def timeline(self) -> str:
        events = sorted(
            (e["t"], s.member.name, e["ev"], e)
            for s in self.slots
            for e in s.member.snapshot()
            if e["ev"] in ("assignment", "closed", "closing")
        )
        first = events[0][0] if events else 0.0
        return "; ".join(
            f"{t - first:.1f}s {n} {ev} {sorted(owned_at(s.member, t)) if ev == 'assignment' else ''}"
            for t, n, ev, _ in events
            for s in self.slots
            if s.member.name == n
        )


def run_with_load(harness: MigrationGroup, move: Callable[[KeyedProducer], None]) -> KeyedProducer:
    """Steady keyed load while ``move`` runs; then every acknowledged record must be consumed."""
    producer = KeyedProducer(harness.bootstrap, harness.topic, records=10**9, rate_per_s=RATE_PER_S)
    try:
        move(producer)
    except BaseException:  # the load stops before the topic is deleted under it; the failure is the news
        with contextlib.suppress(Exception):
            producer.finish(top_up=False)
        raise
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
        lines.append(
            f"clean classic takeover (the active member's pre-roll, stop then start): "
            f"{baseline_pause:.1f}s pause"
        )
    return "\n".join(lines)


def check(harness: MigrationGroup, start: float) -> None:
    end = time.time()
    problems = harness.violations(start, end)
    assert not problems, (
        f"{len(problems)} grid points break the failover rule: {problems[:6]}\n{harness.timeline()}"
    )
    for what, a, b in harness.steps:
        pause = harness.longest_pause(a, b)
        bound = KILL_TAKEOVER_S if "SIGKILL" in what else CLEAN_TAKEOVER_S
        assert pause <= bound, (
            f"{what}: consumption paused {pause:.1f}s (bound {bound:.0f}s)\n{harness.timeline()}"
        )
    for slot in harness.slots:
        if not slot.killed:
            assert slot.member.proc.returncode == 0 or slot.gone_at is None, (
                f"{slot.member.name} exited with {slot.member.proc.returncode}: {harness.tail(slot)}"
            )
            assert slot.gone_at is not None or slot.member.alive(), (
                f"{slot.member.name} died: {harness.tail(slot)}"
            )


def describe(harness: MigrationGroup) -> tuple[int, dict[str, Any]]:
    """``kafka-placement group describe GROUP --json`` in a process of its own: exit code and JSON."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kafka_placement.cli",
            "group",
            "describe",
            harness.group,
            "--bootstrap-server",
            harness.bootstrap,
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
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
