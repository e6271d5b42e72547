"""A mixed consumer group on the live cluster: a plain Java KafkaConsumer with Kafka's own
``CooperativeStickyAssignor`` and kafka-python consumers with our ``cooperative-sticky`` adapter,
in ONE group (same protocol name, same wire format).

The group leader runs the assignment for everybody, and the leader is the first member of an empty
group (it stays leader while it stays). So each test starts one side first to make it lead, lets
the other side join, then closes the leader so the other side takes over. The Python workers
report when their assignor ran as leader; checked every time:

- every member's assignment is valid (only its subscribed topic), assignments are disjoint and
  together cover every partition once the group is stable, and sizes differ by at most one;
- the listener timeline (revoked/added/lost events of every member, in wall-clock order) never
  shows a partition with two owners at once (KIP-429).

The Java member (``integration_tests/java/member``) is compiled at test time with javac against the
pinned kafka-clients jar. Against the shared dev cluster:
``KAFKA_PLACEMENT_REUSE=1 pytest integration_tests/test_java_mixed_group_live.py``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from member_process import (  # this directory is on sys.path
    Json,
    MemberProcess,
    create_ready_topic,
)

JAVA_MAIN = "io.kafkaplacement.conformance.live.GroupMember"
MEMBER_SCRIPT = Path(__file__).with_name("kafka_python_member.py")
PARTITIONS = 12


# ================================================================================== test side
class Member(MemberProcess):
    """A consumer subprocess (Java or Python) and the JSON events it printed."""

    def __init__(self, name: str, argv: list[str], side: str) -> None:
        self.name = name
        self.side = side
        self.close_requested_at: float | None = None
        super().__init__(argv, stderr=subprocess.DEVNULL)

    def last_assignment(self) -> Json | None:
        return self.last("assignment")

    def led(self) -> list[Json]:
        return [e for e in self.snapshot() if e["ev"] == "led"]

    def recover(self) -> None:
        """Only python workers can be told to replace their consumer."""
        if self.side == "python":
            super().recover()

    def close(self, timeout: float = 20.0) -> None:
        if self.alive():
            self.close_requested_at = time.time()
        super().close(timeout)


STABLE = "<stable>"  # kafka.structs.MemberState.STABLE, as the python workers report it
SESSION_TIMEOUT_S = 6.0
ABSENT_BEFORE_RECOVERY_S = SESSION_TIMEOUT_S + 4.0
RECOVERY_BUDGET_S = 25.0
MAX_RECOVERIES = 6


def describe_group(admin: Any, group: str) -> tuple[str, dict[str, tuple[str, set[tuple[str, int]]]]] | None:
    """DescribeGroups: the group state and, per client id, (member id, assigned partitions)."""
    try:
        raw = admin.describe_groups([group])[group]
    except Exception:
        return None

    def get(obj: Any, name: str) -> Any:
        return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)

    members = {}
    for m in raw.get("members", []):
        assigned = get(m.get("member_assignment"), "assigned_partitions") or []
        parts = {(get(e, "topic"), p) for e in assigned for p in (get(e, "partitions") or [])}
        members[m["client_id"]] = (m["member_id"], parts)
    return str(raw.get("group_state")), members


def stable(
    members: list[Member], topic: str, group: tuple[str, dict[str, Any]] | None = None
) -> dict[str, set[tuple[str, int]]] | None:
    """The members' assignments once all report the same generation, disjoint and complete;
    with ``group`` (a :func:`describe_group` answer) also: the group is Stable with exactly these
    members, each holding what it reports, and every python member is joined (state STABLE)."""
    latest = [m.last_assignment() for m in members]
    if any(e is None or e["gen"] < 1 for e in latest):
        return None
    if len({e["gen"] for e in latest if e is not None}) != 1:
        return None
    result = {m.name: {(t, p) for t, p in e["parts"]} for m, e in zip(members, latest, strict=True) if e}
    everything = [tp for parts in result.values() for tp in parts]
    if len(everything) != len(set(everything)) or set(everything) != {(topic, p) for p in range(PARTITIONS)}:
        return None
    if group is not None:
        state, described = group
        if state != "Stable" or set(described) != {m.name for m in members}:
            return None
        for m, e in zip(members, latest, strict=True):
            assert e is not None
            member_id, assigned = described[m.name]
            if e["member_id"] != member_id or assigned != result[m.name]:
                return None
            if m.side == "python" and e.get("state", STABLE) != STABLE:
                return None
    return result


def double_ownership(members: list[Member]) -> list[str]:
    """Replay every member's listener events in time order; report any partition added to one
    member while another still held it. A member asked to close stops counting as owner then."""
    timeline: list[tuple[float, int, str, str, list[Any]]] = []
    for m in members:
        for e in m.snapshot():
            if e["ev"] in ("revoked", "lost"):
                timeline.append((e["t"], 0, m.name, "drop", e["parts"]))
            elif e["ev"] == "added":
                timeline.append((e["t"], 1, m.name, "add", e["parts"]))
            elif e["ev"] == "recreate":
                # a worker found dropped from the group (kafka-python, see kafka_python_member)
                # replaces its consumer: the broker had taken its partitions already
                timeline.append((e["t"], 0, m.name, "close", []))
        if m.close_requested_at is not None:
            timeline.append((m.close_requested_at, 0, m.name, "close", []))
    owner: dict[tuple[str, int], str] = {}
    problems = []
    for t, _, name, kind, parts in sorted(timeline, key=lambda x: (x[0], x[1])):
        if kind == "close":
            owner = {tp: o for tp, o in owner.items() if o != name}
            continue
        for topic, p in parts:
            tp = (topic, p)
            if kind == "drop":
                if owner.get(tp) == name:
                    del owner[tp]
            else:
                if tp in owner and owner[tp] != name:
                    problems.append(f"{tp} added to {name} at {t:.3f} while {owner[tp]} still owned it")
                owner[tp] = name
    return problems


def check_group(
    admin: Any, group: str, members: list[Member], topic: str, what: str, settle: float = 2.0
) -> dict[str, set[tuple[str, int]]]:
    """Wait for a settled generation — :func:`stable` with DescribeGroups, unchanged (same
    generation, member ids and assignments) for ``settle`` seconds — then judge its balance.

    Cooperative rebalances take two rounds, and a python member reports a new generation (from
    JoinGroup) a moment before its SyncGroup assignment is applied; neither interim state is judged.
    A python member missing from the Stable group for longer than the session timeout + 4 s was
    dropped without noticing (kafka-python, see ``kafka_python_member``): it replaces its consumer;
    every recovery extends the 90 s budget by ``RECOVERY_BUDGET_S``."""
    start = time.monotonic()
    before = {m.name: m.recoveries() for m in members}
    absent_since: dict[str, float] = {}
    recovered_at: dict[str, float] = {}
    settled: list[Any] = [None]
    last: list[Any] = [None]

    def recoveries() -> int:
        return sum(m.recoveries() - before[m.name] for m in members)

    def watch(described: tuple[str, dict[str, Any]]) -> None:
        state, by_client = described
        now = time.monotonic()
        for m in members:
            assert m.alive(), f"{what}: member {m.name} exited"
            if m.name in by_client or not any(e["ev"] == "ready" for e in m.snapshot()):
                absent_since.pop(m.name, None)
                continue
            since = absent_since.setdefault(m.name, now)
            quiet = now - max(since, recovered_at.get(m.name, -1e9))
            if state == "Stable" and quiet > ABSENT_BEFORE_RECOVERY_S:
                recovered_at[m.name] = now
                m.recover()

    while True:
        described = describe_group(admin, group)
        last[0] = described
        if described is not None:
            watch(described)
        result = stable(members, topic, described) if described is not None else None
        if result is not None:
            key = (
                tuple((m.name, m.last_assignment()["gen"]) for m in members),  # type: ignore[index]
                tuple(sorted((n, mid) for n, (mid, _) in described[1].items())),  # type: ignore[index]
                tuple(sorted((n, tuple(sorted(p))) for n, p in result.items())),
            )
            if settled[0] is None or settled[0][0] != key:
                settled[0] = (key, time.monotonic())
            elif time.monotonic() - settled[0][1] >= settle:
                break
        else:
            settled[0] = None
        budget = 90 + RECOVERY_BUDGET_S * min(recoveries(), MAX_RECOVERIES)
        if time.monotonic() - start > budget:
            raise AssertionError(
                f"{what}: timed out after {time.monotonic() - start:.0f}s (90s + {RECOVERY_BUDGET_S:.0f}s "
                f"for each of {recoveries()} recoveries) waiting for a settled group over "
                f"{[m.name for m in members]}; last DescribeGroups {last[0]}; members report "
                f"{ {m.name: m.last_assignment() for m in members} }"
            )
        time.sleep(0.2)
    sizes = sorted(len(parts) for parts in result.values())
    assert sizes[-1] - sizes[0] <= 1, f"{what}: unbalanced {result}"
    led = {m.name: len(m.led()) for m in members if m.side == "python"}
    fired = [
        (m.name, e.get("reason", e["ev"]))
        for m in members
        for e in m.snapshot()
        if e["ev"] in ("unstick", "recreate")
    ]
    print(
        f"{what}: sizes { {n: len(p) for n, p in result.items()} }, python leader runs {led}"
        + (f", kafka-python member recoveries so far {fired}" if fired else "")
    )
    return result


# ================================================================================== fixtures
@pytest.fixture()
def spawn(kafka_cluster: Any, java_member_classpath: str) -> Any:
    started: list[Member] = []

    def start(side: str, name: str, group: str, topic: str) -> Member:
        if side == "java":
            java = shutil.which("java") or "java"
            argv = [
                java,
                "-cp",
                java_member_classpath,
                JAVA_MAIN,
                kafka_cluster.bootstrap_servers,
                group,
                name,
                topic,
            ]
        else:
            config = {
                "bootstrap": kafka_cluster.bootstrap_servers,
                "group": group,
                "name": name,
                "topics": [topic],
                "strategy": "cooperative-sticky",
                "report_leader": True,
            }
            argv = [sys.executable, str(MEMBER_SCRIPT), json.dumps(config)]
        member = Member(name, argv, side)
        started.append(member)
        return member

    yield start
    for m in started:
        m.close(timeout=15)


@pytest.fixture()
def topic(kafka_cluster: Any) -> str:
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap_servers, client_id="mixed-group")
    try:
        return create_ready_topic(admin, "mixed", PARTITIONS, 2)
    finally:
        admin.close()


@pytest.fixture(scope="module")
def admin(kafka_cluster: Any) -> Any:
    from kafka import KafkaAdminClient

    client = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap_servers, client_id="mixed-admin")
    yield client
    client.close()


pytestmark = [pytest.mark.integration, pytest.mark.conformance]


# ================================================================================== tests
def test_java_leader_then_python_leader(spawn: Any, topic: str, admin: Any) -> None:
    group = f"mixed-java-first-{uuid.uuid4().hex[:8]}"
    java = spawn("java", "java-1", group, topic)
    check_group(admin, group, [java], topic, "java alone")
    py1 = spawn("python", "py-1", group, topic)
    py2 = spawn("python", "py-2", group, topic)
    members = [java, py1, py2]
    result = check_group(admin, group, members, topic, "java leads, two python members joined")
    assert all(result[m.name] for m in members), result
    assert not py1.led() and not py2.led(), "the Java member joined first and must have led"
    assert double_ownership(members) == []

    java.close()
    check_group(admin, group, [py1, py2], topic, "java left, python leads")
    assert py1.led() or py2.led(), "after the Java leader left, a python member must lead"
    assert double_ownership(members) == []


def test_python_leader_then_java_leader(spawn: Any, topic: str, admin: Any) -> None:
    group = f"mixed-python-first-{uuid.uuid4().hex[:8]}"
    py1 = spawn("python", "py-1", group, topic)
    check_group(admin, group, [py1], topic, "python alone")
    java = spawn("java", "java-1", group, topic)
    java2 = spawn("java", "java-2", group, topic)
    members = [py1, java, java2]
    result = check_group(admin, group, members, topic, "python leads, two java members joined")
    assert all(result[m.name] for m in members), result
    assert py1.led(), "the python member joined first and must have led"
    led_for = py1.led()[-1]["members"]
    assert len(led_for) == 3, f"python leader assigned for {led_for}"
    assert double_ownership(members) == []

    py1.close()
    led_before = len(py1.led())
    check_group(admin, group, [java, java2], topic, "python left, java leads")
    assert len(py1.led()) == led_before
    assert double_ownership(members) == []
