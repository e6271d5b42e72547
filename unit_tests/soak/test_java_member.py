"""The soak's Java members: the settings each kind runs with (read back as ``java.util.Properties`` would:
``key=value`` lines), the command line and private settings file the member table makes, and the member's
source compiling against the pinned kafka-clients."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from kafka_placement.soak.java_member import MAIN_CLASS, JavaMemberUnavailable, class_path, member_properties
from kafka_placement.soak.members import FULL_GROUPS, Members, active_members, failover_groups

CONNECTION = {"bootstrap.servers": "127.0.0.1:39092", "security.protocol": "PLAINTEXT"}


def read_properties(text: str) -> dict[str, str]:
    """The ``key=value`` lines (no escapes occur in these settings: checked by the caller's values)."""
    return dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))


def test_a_consumer_protocol_member_names_the_brokers_assignor_and_its_priority_in_the_rack() -> None:
    props = read_properties(member_properties("java-consumer", 20, CONNECTION, 6000))
    # docs/consumer-protocol.md: group.protocol=consumer, group.remote.assignor=failover,
    # client.rack=#priority=<n>
    assert props == {
        **CONNECTION,
        "group.protocol": "consumer",
        "group.remote.assignor": "failover",
        "client.rack": "#priority=20",
    }  # no session: the broker decides it


def test_a_classic_member_runs_our_java_client_assignor_with_the_soaks_session() -> None:
    props = read_properties(member_properties("java-classic", 30, CONNECTION, 6000))
    # docs/java-client-assignor.md: partition.assignment.strategy=io.kafkaplacement.client.FailoverAssignor,
    # failover.priority=30; the session as the Python members' (6 s, heartbeat a sixth of it), and their
    # rebalance timeout (30 s instead of Kafka's 300 s)
    assert props == {
        **CONNECTION,
        "group.protocol": "classic",
        "partition.assignment.strategy": "io.kafkaplacement.client.FailoverAssignor",
        "failover.priority": "30",
        "session.timeout.ms": "6000",
        "heartbeat.interval.ms": "1000",
        "max.poll.interval.ms": "30000",
    }


def test_a_kind_that_is_not_java_is_refused() -> None:
    with pytest.raises(ValueError, match="not a Java member kind: 'confluent'"):
        member_properties("confluent", 10, CONNECTION, 6000)


def test_the_full_groups_fail_over_five_groups_through_their_priority_30_members() -> None:
    assert failover_groups(FULL_GROUPS) == ["fo-kp", "fo-cf", "fo-cp", "fo-java", "fo-mig"]
    assert active_members(FULL_GROUPS) == ["kp-high", "cf-high", "cp-high", "jv-high", "mig-high"]


def test_a_java_member_is_started_with_a_private_properties_file(tmp_path: Path) -> None:
    written: list[object] = []
    members = Members(
        tmp_path,
        "kp-soak-x-records",
        {"java-classic": CONNECTION},
        6000,
        "kp-soak-x",
        written.append,
        FULL_GROUPS,
        java_class_path="/jars/a.jar:/jars/b.jar",
    )
    command = members._command("jv-high")
    path = tmp_path / "member-jv-high.properties"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600  # it holds the cluster's credentials
    assert read_properties(path.read_text("latin-1"))["failover.priority"] == "30"
    assert command[command.index("-cp") + 1] == "/jars/a.jar:/jars/b.jar"
    assert command[command.index(MAIN_CLASS) + 1 :] == [
        str(path),
        "kp-soak-x-fo-java",
        "jv-high",
        "kp-soak-x-records",
        str(tmp_path / "member-jv-high.jsonl"),
        "6000",
    ]
    without = Members(tmp_path, "t", {"java-classic": CONNECTION}, 6000, "p", written.append, FULL_GROUPS)
    with pytest.raises(ValueError, match="jv-high is a Java member and no class path was given"):
        without._command("jv-high")


def test_the_member_compiles_against_the_pinned_kafka_clients() -> None:
    try:
        cp = class_path()
    except JavaMemberUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the soak's Java member cannot be built in CI: {exc}")
        pytest.skip(f"no JDK or Kafka's jars here ({exc})")
    jars = cp.split(os.pathsep)
    assert any("kafka-clients" in jar for jar in jars) and all(Path(jar).is_file() for jar in jars)
    assert any(Path(jar).name.startswith("kafka-placement-soak-member-") for jar in jars)
