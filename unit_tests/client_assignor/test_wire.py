"""Java and Python failover members in one group: each side reads the other's bytes, the member-side checks
and their log lines, the migration rule, and the settings a Java consumer is refused at construction."""

from __future__ import annotations

import logging

import pytest
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription
from unit_tests.client_assignor.harness import ClientHarness, Setting, assign_request, assigned, parse_answer
from unit_tests.client_assignor.wire import (
    Cluster,
    python_leader,
    python_member_receives,
    python_subscription,
    raw_subscription,
)

from kafka_placement.assignment.userdata import encode_failover_assignment, read_priority
from kafka_placement.clients.group_assignor import BROKER_ASSIGNS, CONVERTIBLE
from kafka_placement.clients.kafka_python.assignors import FailoverAssignor

PRIORITIES = [None, 0, 1, -1, 30, 2**31 - 1, -(2**31)]


def java_subscription(harness: ClientHarness, settings: dict[str, Setting]) -> bytes:
    answer = harness.configure(settings)
    assert answer.status == "OK", answer
    return bytes.fromhex(answer.fields[0])


@pytest.mark.parametrize("priority", PRIORITIES)
def test_python_subscription_read_by_the_java_leader(
    client_harness: ClientHarness, priority: int | None
) -> None:
    group = [("py", python_subscription(["t0"], priority))]
    answer = parse_answer(client_harness.ask(assign_request("P", [2], group)))
    (only,) = assigned(answer)
    assert only.user_data == encode_failover_assignment(priority) and only.topics == {0}
    assert answer.warnings() == []


@pytest.mark.parametrize("priority", PRIORITIES)
def test_java_subscription_read_by_python(
    client_harness: ClientHarness, priority: int | None, caplog: pytest.LogCaptureFixture
) -> None:
    settings: dict[str, Setting] = {} if priority is None else {"failover.priority": priority}
    decoded = ConsumerProtocolSubscription.decode(java_subscription(client_harness, settings))
    with caplog.at_level(logging.WARNING):
        assert read_priority(decoded.user_data, member_id="java") == priority
    assert not caplog.records and decoded.topics == ["t0"]
    # a properties file gives every value as a string, as Kafka's tools do
    if priority is not None:
        as_text = java_subscription(client_harness, {"failover.priority": f" {priority} "})
        assert ConsumerProtocolSubscription.decode(as_text).user_data == decoded.user_data


def test_java_assignment_accepted_by_python_members_without_warning(
    client_harness: ClientHarness, caplog: pytest.LogCaptureFixture
) -> None:
    subs = [(f"py{i}", python_subscription(["t0", "t1"], p)) for i, p in enumerate(PRIORITIES)]
    members = assigned(parse_answer(client_harness.ask(assign_request("P", [3, 1], subs))))
    for (mid, _), priority, member in zip(subs, PRIORITIES, members, strict=True):
        assert len(member.user_data or b"") == 7
        records = python_member_receives(member.wire, priority, ready=False, caplog=caplog)
        assert [r for r in records if r.levelno >= logging.WARNING] == [], mid
    best = PRIORITIES.index(max(p for p in PRIORITIES if p is not None))
    assert [m.topics for m in members] == [{0, 1} if i == best else set() for i in range(len(PRIORITIES))]


def test_python_assignment_accepted_by_the_java_member_without_warning(client_harness: ClientHarness) -> None:
    subs = [
        ("java", java_subscription(client_harness, {"failover.priority": 30})),
        ("py", python_subscription(["t0"], 20)),
    ]
    members = [
        type(
            "M",
            (),
            {
                "member_id": mid,
                "group_instance_id": None,
                "metadata": ConsumerProtocolSubscription.decode(wire),
            },
        )()
        for mid, wire in subs
    ]
    result = FailoverAssignor().assign(Cluster([4]), members)
    wire = bytes(result["java"].encode())
    assert client_harness.receive({"failover.priority": 30}, [wire, wire]) == []
    # the same bytes for a member of another priority: one WARN naming both
    logs = client_harness.receive({"failover.priority": 5}, [wire, wire])
    assert len(logs) == 1 and logs[0].startswith("WARN")
    assert "ranked this member with priority 30, but its priority is 5" in logs[0]


def test_member_logs_once_per_change(client_harness: ClientHarness) -> None:
    good = _assignment(encode_failover_assignment(7))
    empty, null = _assignment(b""), _assignment(None)
    sequence = [good, empty, null, empty, good, good, _assignment(b"\0" * 5)]
    logs = client_harness.receive({"failover.priority": 7}, sequence)
    assert [line.split(" ")[0] for line in logs] == ["WARN", "INFO", "WARN"]
    assert "carries no failover userData, so no kafka-placement failover leader computed it" in logs[0]
    assert "comes from a failover leader again (generation 5)" in logs[1]
    # short userData inside a valid assignment is unreadable, never an exception
    assert client_harness.receive({"failover.priority": 7}, [_assignment(b"\0\0\1")])[0].startswith("WARN")
    # a migration-ready member: empty userData is our ready leader (the group may convert), null the broker
    # (the group converted) or a foreign leader; one INFO line each time that changes, never a WARN
    ready = {"failover.priority": 7, "failover.migration.ready": True, "client.rack": "az1#priority=7"}
    logs = client_harness.receive(ready, [good, empty, empty, null, null, empty, good])
    assert [line.split(" - ")[1].split(" (generation")[0] for line in logs] == [
        CONVERTIBLE,
        BROKER_ASSIGNS,
        CONVERTIBLE,
    ]
    assert all(line.startswith("INFO") for line in logs)


def _assignment(user_data: bytes | None) -> bytes:
    assignment = ConsumerProtocolAssignment(version=0, assigned_partitions=[("t0", [0])], user_data=user_data)
    return bytes(assignment.encode())


def test_migration_rule_empty_only_when_every_member_is_visible(
    client_harness: ClientHarness, caplog: pytest.LogCaptureFixture
) -> None:
    ready_java = java_subscription(
        client_harness,
        {"failover.priority": 30, "failover.migration.ready": True, "client.rack": "rack1#priority=30"},
    )
    assert ConsumerProtocolSubscription.decode(ready_java).rack_id == "rack1#priority=30"
    ready_group = [
        ("java", ready_java),
        ("p20", python_subscription(["t0"], 20, ready=True)),
        ("none", python_subscription(["t0"], None, rack="az2", ready=True)),
    ]
    answer = parse_answer(client_harness.ask(assign_request("R", [3], ready_group)))
    # empty, not null: our Python members tell our ready leader's empty userData from the broker's null
    assert [(a.topics, a.user_data) for a in assigned(answer)] == [({0}, b""), (set(), b""), (set(), b"")]
    assert python_leader([3], ready_group, ready=True) == {
        "java": ({0}, b""),
        "p20": (frozenset(), b""),
        "none": (frozenset(), b""),
    }
    # the Python ready member takes the Java leader's empty userData as convertible, without a warning
    records = python_member_receives(assigned(answer)[1].wire, 20, ready=True, caplog=caplog)
    said = [(r.levelname, r.getMessage().split(" (generation")[0]) for r in records]
    assert said == [("INFO", CONVERTIBLE)]
    # one member not ready (protected Python, a mismatching rack, a foreign one): 7 bytes for everybody
    for blocker in [
        python_subscription(["t0"], 10),
        raw_subscription(["t0"], b"\0\0\0\x0a", "#priority=11"),
        raw_subscription(["t0"], b"\0\0\0\x0a", "#priority=ten"),
    ]:
        answer = parse_answer(client_harness.ask(assign_request("R", [3], [*ready_group, ("b", blocker)])))
        assert all(len(a.user_data or b"") == 7 for a in assigned(answer))
        assert [line for line in answer.logs if "stays protected" in line and "member b:" in line]
    # a protected leader never leaves it empty, even when every member is visible
    protected = assigned(parse_answer(client_harness.ask(assign_request("P", [3], ready_group))))
    assert all(a.user_data for a in protected)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"failover.priority": "ten"},
            "Invalid value ten for configuration failover.priority: must be an integer in "
            "[-2147483648, 2147483647]",
        ),
        ({"failover.priority": "2147483648"}, "Invalid value 2147483648 for configuration failover.priority"),
        ({"failover.priority": True}, "Invalid value true for configuration failover.priority"),
        (
            {"failover.migration.ready": "yes"},
            "Invalid value yes for configuration failover.migration.ready: must be true or false",
        ),
        ({"failover.prority": 5}, "configuration failover.prority: unknown failover assignor setting"),
        (
            {"failover.priority": 5, "failover.migration.ready": True, "client.rack": "az1"},
            "failover.migration.ready=true needs client.rack to carry this member's failover.priority (5) "
            "for the broker to read after a move to the consumer protocol: set client.rack=az1#priority=5",
        ),
        ({"failover.priority": 5, "failover.migration.ready": True}, "set client.rack=#priority=5"),
        (
            {"failover.priority": 5, "failover.migration.ready": True, "client.rack": "az1#priority=6"},
            "set client.rack=az1#priority=5",
        ),
        (
            {"failover.priority": 5, "client.rack": "az1#priority=5"},
            "carries a failover priority but failover.migration.ready is not true",
        ),
        (
            {"failover.priority": 5, "failover.migration.ready": True, "client.rack": "az1#priority=+5"},
            "its failover priority is unusable: priority '+5' is not an integer",
        ),
    ],
)
def test_bad_settings_are_a_config_exception_naming_value_and_range(
    client_harness: ClientHarness, settings: dict[str, Setting], message: str
) -> None:
    answer = client_harness.configure(settings)
    assert answer.status == "ERR" and message in answer.fields[0], answer.fields


def test_good_settings_from_a_properties_file(client_harness: ClientHarness) -> None:
    good: list[dict[str, Setting]] = [
        {"failover.priority": "-7", "failover.migration.ready": "TRUE", "client.rack": "#priority=-7"},
        {"failover.migration.ready": "false", "client.rack": "az1"},
        {"failover.migration.ready": True, "client.rack": "az1"},  # no priority: nothing to show
    ]
    for settings in good:
        assert client_harness.configure(settings).status == "OK", settings
