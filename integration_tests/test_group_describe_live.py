"""``kafka-placement group describe`` on the live cluster (Kafka 4.4): a classic failover group, a
consumer-protocol (KIP-848) failover group run by the broker's failover assignor (racks and priorities
read from ConsumerGroupDescribe), a consumer-protocol group whose members carry priorities in
``client.rack`` but run ``uniform`` (and the same without Kafka's message schema), and a classic
failover group whose active member is not its best one, and an id no broker knows.

Expected values come from the test's own setup (which member got which priority, which client ids),
never from the code under test.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from live_group import ConsumerProtocolMember, Worker
from member_process import MemberProcess, create_ready_topic, wait_until

pytestmark = [pytest.mark.integration]

PARTITIONS = 4
HERE = Path(__file__).parent


@pytest.fixture()
def topic(kafka_cluster: Any) -> str:
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap_servers, client_id="describe-live")
    try:
        return create_ready_topic(admin, "describe", PARTITIONS, 2)
    finally:
        admin.close()


@pytest.fixture()
def members() -> Any:
    started: list[MemberProcess] = []
    yield started
    for m in reversed(started):
        m.close(timeout=15)


def run_describe(
    bootstrap: str, group: str, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, Any, str]:
    """``group describe --json``: exit code, the JSON (None when nothing was printed), stderr."""
    from kafka_placement.cli import main

    capsys.readouterr()
    code = main(["group", "describe", group, "--bootstrap-server", bootstrap, "--json", *extra])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out else None, captured.err


def describe(bootstrap: str, group: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, Any]:
    code, out, err = run_describe(bootstrap, group, capsys, *extra)
    assert out is not None, (code, err)  # the one-line error, not a JSONDecodeError (run 18b)
    return code, out


def settled(
    bootstrap: str, group: str, capsys: pytest.CaptureFixture[str], clients: set[str], *extra: str
) -> tuple[int, Any]:
    """The description once the classic group is Stable with exactly ``clients``. The members' own
    view can be of a generation the group is already replacing: kafka-python's leader rejoins when the
    metadata changed while it assigned (run 19b described the group mid-rebalance, PreparingRebalance)."""

    def step() -> Any:
        code, out = describe(bootstrap, group, capsys, *extra)
        stable = out["state"] == "Stable" and {m["client_id"] for m in out["members"]} == clients
        return (code, out) if stable else None

    result: tuple[int, Any] = wait_until(step, 60, f"{group} Stable with {sorted(clients)}")
    return result


def _owned(worker: Worker) -> set[int]:
    return {p for _, p in worker.assignment()} if worker.alive() else set()


def by_client(description: Any) -> dict[str, Any]:
    return {m["client_id"]: m for m in description["members"]}


def test_classic_failover_group(
    kafka_cluster: Any, topic: str, members: list[Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bootstrap = kafka_cluster.bootstrap_servers
    group = f"describe-classic-{uuid.uuid4().hex[:8]}"
    active = Worker(bootstrap, group, "kp-p10", [topic], "failover", str(tmp_path), priority=10)
    standby = Worker(bootstrap, group, "kp-p5", [topic], "failover", str(tmp_path), priority=5)
    members.extend([active, standby])
    everything = set(range(PARTITIONS))
    wait_until(
        lambda: (
            _owned(active) == everything and standby.last("assignment") is not None and not _owned(standby)
        ),
        90,
        "p10 owning every partition, p5 in the group",
    )
    code, out = settled(bootstrap, group, capsys, {"kp-p10", "kp-p5"})
    assert code == 0, out
    assert (out["protocol"], out["assignor"], out["state"]) == ("classic", "failover", "Stable")
    seen = by_client(out)
    assert {c: (m["priority"], m["priority_source"]) for c, m in seen.items()} == {
        "kp-p10": (10, "userData"),
        "kp-p5": (5, "userData"),
    }
    assert seen["kp-p10"]["assignment"] == [f"{topic}-{p}" for p in range(PARTITIONS)]
    assert seen["kp-p5"]["assignment"] == []
    assert {m["assignment_user_data"] for m in seen.values()} == {"failover"}
    check = out["failover"]
    p10 = seen["kp-p10"]["member_id"]
    assert check["applies"] and check["ok"]
    assert check["should_be_active"] == [p10] and check["active"] == [p10]
    assert check["convertible_to_consumer_protocol"] is False


def test_consumer_protocol_failover_group_shows_priorities_and_racks(
    kafka_cluster: Any, topic: str, members: list[Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The broker's failover assignor (``group.remote.assignor=failover``), members with a rack and a
    priority in ``client.rack``: ConsumerGroupDescribe (kafka-python, Kafka's schema from the
    kafka-clients jar) shows each member's rack and priority and names the best live member."""
    bootstrap = kafka_cluster.bootstrap_servers
    group = f"describe-kip848-{uuid.uuid4().hex[:8]}"
    everything = set(range(PARTITIONS))
    high = ConsumerProtocolMember(
        bootstrap,
        group,
        "cp-p10",
        topic,
        tmp_path,
        {"group.remote.assignor": "failover", "client.rack": "rack1#priority=10"},
    )
    members.append(high)
    wait_until(lambda: high.owned() == everything, 60, "priority 10 owning every partition")
    low = ConsumerProtocolMember(
        bootstrap,
        group,
        "cp-p5",
        topic,
        tmp_path,
        {"group.remote.assignor": "failover", "client.rack": "rack2#priority=5"},
    )
    members.append(low)

    def both_listed() -> Any:
        code, out = describe(bootstrap, group, capsys)
        return (code, out) if len(out["members"]) == 2 else None

    code, out = wait_until(both_listed, 60, "both members in ConsumerGroupDescribe")
    assert code == 0, out
    assert (out["protocol"], out["assignor"]) == ("consumer", "failover")
    seen = by_client(out)
    assert {c: (m["rack"], m["priority"], m["priority_source"]) for c, m in seen.items()} == {
        "cp-p10": ("rack1", 10, "client.rack"),
        "cp-p5": ("rack2", 5, "client.rack"),
    }
    assert {c: m["topics"] for c, m in seen.items()} == {"cp-p10": [topic], "cp-p5": [topic]}
    assert seen["cp-p10"]["assignment"] == [f"{topic}-{p}" for p in range(PARTITIONS)]
    assert seen["cp-p10"]["target_assignment"] == seen["cp-p10"]["assignment"]
    assert seen["cp-p5"]["assignment"] == [] and low.owned() == set()
    check = out["failover"]
    assert check["applies"] and check["ok"]
    assert check["should_be_active"] == check["active"] == [seen["cp-p10"]["member_id"]]
    assert not any("not visible" in n for n in out["notes"])

    high.close(timeout=15)  # a clean close: priority 5 is now the best live member and takes over
    wait_until(lambda: low.owned() == everything, 60, "priority 5 owning every partition")
    code, out = wait_until(lambda: _one_member(bootstrap, group, capsys), 60, "priority 10 gone")
    assert code == 0, out
    assert out["failover"]["should_be_active"] == out["failover"]["active"] == [seen["cp-p5"]["member_id"]]


def _one_member(bootstrap: str, group: str, capsys: pytest.CaptureFixture[str]) -> Any:
    code, out = describe(bootstrap, group, capsys)
    return (code, out) if len(out["members"]) == 1 else None


def test_consumer_protocol_group_with_priorities_in_client_rack(
    kafka_cluster: Any,
    topic: str,
    members: list[Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Members carry priorities in ``client.rack`` but the group runs the broker's default ``uniform``
    assignor (``group.remote.assignor`` forgotten), which spreads the partitions whatever the priorities:
    a failover group whose partitions are not on its best member, exit 1. Without Kafka's schema (no
    jar, no network) the description falls back to confluent-kafka and says why."""
    bootstrap = kafka_cluster.bootstrap_servers
    group = f"describe-consumer-{uuid.uuid4().hex[:8]}"
    high = ConsumerProtocolMember(
        bootstrap, group, "cp-p10", topic, tmp_path, {"client.rack": "#priority=10"}
    )
    low = ConsumerProtocolMember(bootstrap, group, "cp-p5", topic, tmp_path, {"client.rack": "#priority=5"})
    members.extend([high, low])
    wait_until(
        lambda: high.owned() and low.owned() and len(high.owned() | low.owned()) == PARTITIONS,
        60,
        "uniform spreading the partitions over both consumer-protocol members",
    )
    code, out = describe(bootstrap, group, capsys)
    assert (out["protocol"], out["assignor"]) == ("consumer", "uniform")
    seen = by_client(out)
    assert set(seen) == {"cp-p10", "cp-p5"}
    for name, member in (("cp-p10", high), ("cp-p5", low)):
        assert member.owned() == {int(p.rsplit("-", 1)[1]) for p in seen[name]["assignment"]}
        assert seen[name]["target_assignment"] is not None
    assert {c: (m["rack"], m["priority"], m["priority_source"]) for c, m in seen.items()} == {
        "cp-p10": (None, 10, "client.rack"),
        "cp-p5": (None, 5, "client.rack"),
    }
    assert code == 1, out  # priorities in client.rack make it a failover group; uniform breaks the rule
    check = out["failover"]
    assert check["should_be_active"] == [seen["cp-p10"]["member_id"]]
    assert sorted(check["active"]) == sorted(m["member_id"] for m in out["members"])
    [topic_check] = check["topics"]
    assert topic_check["ok"] is False and "other than the highest-priority one" in topic_check["reason"]
    code, out = describe(bootstrap, group, capsys, "--no-failover")
    assert code == 0 and not out["failover"]["applies"]

    # offline, no kafka-clients jar anywhere: confluent-kafka's view, priorities not visible, and why
    from kafka_placement.clients.kafka_python import consumer_group_describe, message_schemas

    monkeypatch.setattr(consumer_group_describe, "_classes", {})
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "no-cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "no-home"))
    monkeypatch.setenv("KAFKA_PLACEMENT_JAVA_CACHE", str(tmp_path / "no-java"))
    monkeypatch.setenv(message_schemas.REPOSITORY_ENV, "http://127.0.0.1:9")  # discard port: refused
    code, out = describe(bootstrap, group, capsys)
    seen = by_client(out)
    assert {m["priority_source"] for m in seen.values()} == {"not visible"}
    why = out["notes"][0]
    assert "ConsumerGroupDescribe schema is unavailable (cannot download http://127.0.0.1:9/" in why
    assert code == 0 and not out["failover"]["applies"]  # uniform and no visible priority: not judged
    code, out = describe(bootstrap, group, capsys, "--failover")
    assert code == 1, out
    [topic_check] = out["failover"]["topics"]
    assert topic_check["ok"] is False and sorted(topic_check["owners"]) == sorted(
        m["member_id"] for m in out["members"]
    )


def test_classic_failover_group_whose_active_member_is_not_the_best(
    kafka_cluster: Any, topic: str, members: list[Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A static member (group.instance.id) restarted with a lower priority: Kafka hands a static
    follower that rejoins a Stable group with the same topics its old assignment without a rebalance,
    so the member keeps every partition though another member now ranks above it."""
    bootstrap = kafka_cluster.bootstrap_servers
    group = f"describe-stale-{uuid.uuid4().hex[:8]}"
    everything = set(range(PARTITIONS))
    leader = Worker(bootstrap, group, "kp-p5", [topic], "failover", str(tmp_path), priority=5)
    members.append(leader)
    wait_until(lambda: _owned(leader) == everything, 90, "p5 alone owning every partition")
    static = Worker(
        bootstrap,
        group,
        "kp-static",
        [topic],
        "failover",
        str(tmp_path),
        priority=10,
        group_instance_id="static-1",
        session_timeout_ms=30000,
    )
    members.append(static)
    wait_until(lambda: _owned(static) == everything and not _owned(leader), 90, "static p10 taking over")
    static.kill()  # no LeaveGroup: a static member keeps its place until its session times out
    restarted = Worker(
        bootstrap,
        group,
        "kp-static",
        [topic],
        "failover",
        str(tmp_path),
        priority=1,
        group_instance_id="static-1",
        session_timeout_ms=30000,
    )
    members.append(restarted)
    wait_until(lambda: _owned(restarted) == everything, 60, "the restarted static member back in the group")
    code, out = settled(bootstrap, group, capsys, {"kp-p5", "kp-static"})
    seen = by_client(out)
    assert {c: m["priority"] for c, m in seen.items()} == {"kp-p5": 5, "kp-static": 1}
    assert code == 1, out
    check = out["failover"]
    assert check["should_be_active"] == [seen["kp-p5"]["member_id"]]
    assert check["active"] == [seen["kp-static"]["member_id"]]


def test_share_group_is_recognised_and_failover_does_not_apply(
    kafka_cluster: Any, topic: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from confluent_kafka import ShareConsumer

    bootstrap = kafka_cluster.bootstrap_servers
    group = f"describe-share-{uuid.uuid4().hex[:8]}"
    consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        consumer.subscribe([topic])

        def listed() -> Any:
            consumer.poll(0.5)
            code, out, err = run_describe(bootstrap, group, capsys, "--failover")
            # not known yet: the one-line "does not exist" (anything else is a failure)
            assert out is not None or (code == 2 and "does not exist" in err), (code, err)
            return (code, out) if out is not None else None

        code, out = wait_until(listed, 60, "the share group listed by the brokers")
    finally:
        consumer.close()
    assert code == 0 and out["protocol"] == "share"
    assert not out["failover"]["applies"] and "share group" in out["failover"]["reason"]


def test_a_group_nobody_has_is_one_line_exit_2(
    kafka_cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """An id no broker knows: every broker's ListGroups and then the id's own coordinator are asked
    (a group missed by the sweep because its coordinator moved is found there, run 19a), and the answer
    is one line, exit 2, in seconds."""
    import time

    from kafka_placement.cli import main

    group = f"describe-absent-{uuid.uuid4().hex[:8]}"
    capsys.readouterr()
    started = time.monotonic()
    code = main(["group", "describe", group, "--bootstrap-server", kafka_cluster.bootstrap_servers, "--json"])
    elapsed = time.monotonic() - started
    captured = capsys.readouterr()
    assert (code, captured.out) == (2, "")
    assert captured.err.splitlines() == [
        f"kafka-placement group: error: group {group!r} does not exist on {kafka_cluster.bootstrap_servers} "
        "(neither ListGroups on every broker nor its coordinator lists it)"
    ]
    assert elapsed < 20, elapsed
