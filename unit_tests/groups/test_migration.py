"""Where a failover group stands in a move between the protocols: who ranks the members, what is left to
move, and what keeps the priorities from being honoured. Expected verdicts are spelled out per case from
Kafka's documented conversion rules (KAFKA-18134: a classic group converts only while no member's assignment
userData is non-empty; a converted group is assigned by the server assignor its members name)."""

from __future__ import annotations

from typing import Any

from kafka_placement.groups.description import DescribedGroup, DescribedMember
from kafka_placement.groups.migration import migration_status


def classic(mid: str, priority: int, *, ready: bool, user_data: str = "failover") -> DescribedMember:
    return DescribedMember(
        mid,
        f"client-{mid}",
        "/127.0.0.1",
        priority=priority,
        priority_source="userData",
        topics=("t",),
        assignment_user_data=user_data,  # type: ignore[arg-type]
        member_protocol="classic",
        migration_problem=None if ready else "its subscription's rack id carries no priority",
    )


def in_consumer_group(mid: str, priority: int | None, protocol: str) -> DescribedMember:
    return DescribedMember(
        mid,
        f"client-{mid}",
        "/127.0.0.1",
        priority=priority,
        priority_source="client.rack" if priority is not None else "none",
        topics=("t",),
        member_protocol=protocol,
    )  # type: ignore[arg-type]


def group(*members: DescribedMember, protocol: str = "classic", assignor: str = "failover") -> DescribedGroup:
    return DescribedGroup("g", protocol, "Stable", assignor, members, {"t": 2})  # type: ignore[arg-type]


def test_old_classic_group_is_protected_and_names_who_to_roll() -> None:
    status = migration_status(group(classic("a", 30, ready=False), classic("b", 20, ready=True)))
    assert status.stage == "classic" and status.convertible is False and status.honoured
    assert dict(status.not_ready) == {"a": "its subscription's rack id carries no priority"}
    assert "roll these members" in status.advice and "a" in status.advice


def test_ready_classic_group_is_convertible() -> None:
    status = migration_status(
        group(
            classic("a", 30, ready=True, user_data="empty"), classic("b", 20, ready=True, user_data="empty")
        )
    )
    assert status.stage == "classic" and status.convertible is True and status.honoured
    assert status.left_to_move == ("a", "b") and status.advice.startswith("ready")


def test_convertible_while_a_priority_is_invisible_is_not_honoured() -> None:
    # another failover implementation leads (empty assignment userData) over a member the broker can't rank
    status = migration_status(
        group(
            classic("a", 30, ready=False, user_data="empty"), classic("b", 20, ready=True, user_data="empty")
        )
    )
    assert status.convertible is True and not status.honoured


def test_mid_migration_counts_classic_members_left() -> None:
    status = migration_status(
        group(
            in_consumer_group("a", 30, "classic"), in_consumer_group("k", 10, "consumer"), protocol="consumer"
        )
    )
    assert status.stage == "mid-migration" and status.left_to_move == ("a",) and status.honoured
    assert status.ranked_by == "the broker's failover assignor"


def test_converted_group_on_another_assignor_is_not_honoured() -> None:
    status = migration_status(
        group(
            in_consumer_group("a", 30, "classic"),
            in_consumer_group("p", None, "consumer"),
            protocol="consumer",
            assignor="uniform",
        )
    )
    assert not status.honoured and "'uniform' assignor, not failover" in status.problems[0]
    assert dict(status.not_ready) == {"p": "no usable priority in its rack id: the broker ranks it last"}


def test_groups_that_are_not_failover_groups_have_no_migration_status() -> None:
    plain = group(DescribedMember("a", "c", "/h", topics=("t",)), assignor="range")
    assert migration_status(plain).stage == "n/a" and migration_status(plain).honoured
    assert migration_status(plain, failover=True).stage == "classic"


def test_join_problem_names_what_to_change() -> None:
    from kafka_placement.groups.migration import join_problem

    plugin = ("uniform", "range", "io.kafkaplacement.broker.FailoverServerAssignor")
    ready = group(
        classic("a", 30, ready=True, user_data="empty"), classic("b", 20, ready=True, user_data="empty")
    )
    protected = group(classic("a", 30, ready=False), classic("b", 20, ready=True))
    assert join_problem("g", "failover", {0: plugin, 1: plugin}, ready) is None
    assert join_problem("g", "failover", None, None) is None  # nothing known, nothing refused
    no_plugin = join_problem("g", "failover", {0: plugin, 1: ("uniform", "range")}, ready)
    assert no_plugin is not None and "broker(s) [1] offer only uniform,range" in no_plugin
    no_assignor = join_problem("g", None, {0: plugin}, ready)
    assert no_assignor is not None and "must set group.remote.assignor=failover" in no_assignor
    refused = join_problem("g", "failover", {0: plugin}, protected)
    assert refused is not None and "roll client-a onto FailoverAssignor(..., migration_ready=True)" in refused
    for problem in (no_plugin, no_assignor, refused):
        assert "\n" not in problem
    # a group that is not a failover group, or a consumer-protocol group, is no business of the check
    plain = group(DescribedMember("a", "c", "/h"), assignor="range")
    assert join_problem("g", None, {0: plugin}, plain) is None
    assert join_problem("g", None, {0: plugin}, group(protocol="consumer", assignor="uniform")) is None


def test_preflight_against_an_unreachable_cluster_is_bounded_and_lets_librdkafka_speak() -> None:
    import time

    from kafka_placement.clients.confluent.join_preflight import consumer_protocol_preflight

    started = time.monotonic()
    consumer_protocol_preflight(
        {
            "bootstrap.servers": "127.0.0.1:1",
            "group.id": "g",
            "group.protocol": "consumer",
            "group.remote.assignor": "failover",
        },
        timeout_s=1.0,
    )
    assert time.monotonic() - started < 5.0


def test_join_problem_when_a_foreign_failover_leader_left_the_group_convertible() -> None:
    from kafka_placement.groups.migration import join_problem

    foreign = group(
        classic("j", 40, ready=False, user_data="empty"), classic("a", 30, ready=True, user_data="empty")
    )
    problem = join_problem("g", "failover", None, foreign)
    assert problem is not None and "could not see the priority of client-j" in problem


def test_server_assignors_asks_one_broker_per_call_as_librdkafka_requires() -> None:
    from concurrent.futures import Future
    from types import SimpleNamespace

    from kafka_placement.clients.confluent.join_preflight import server_assignors

    class Admin:
        def list_topics(self, timeout: float) -> Any:
            return SimpleNamespace(brokers={0: None, 1: None, 2: None})

        def describe_configs(self, resources: list[Any], request_timeout: float) -> dict[Any, Any]:
            # librdkafka: "Only one ConfigResource of type BROKER is allowed per call"
            assert len(resources) == 1, resources
            done: Future[dict[str, Any]] = Future()
            value = "uniform,range" if resources[0].name == "1" else "uniform, range,failover"
            done.set_result({"group.consumer.assignors": SimpleNamespace(value=value)})
            return {resources[0]: done}

    assert server_assignors(Admin()) == {
        0: ("uniform", "range", "failover"),
        1: ("uniform", "range"),
        2: ("uniform", "range", "failover"),
    }


def test_the_group_read_keeps_the_members_client_id_out_of_its_own(monkeypatch: Any) -> None:
    from kafka_placement.clients.confluent import join_preflight
    from kafka_placement.clients.kafka_python import group_description

    seen: dict[str, Any] = {}

    class Admin:
        def __init__(self, **kwargs: Any) -> None:
            seen.update(kwargs)

        def close(self) -> None:
            pass

    monkeypatch.setattr(group_description, "RawGroupsAdmin", Admin)
    monkeypatch.setattr(group_description, "group_type", lambda admin, group_id: None)
    config = {"bootstrap.servers": "127.0.0.1:1", "group.id": "g", "client.id": "member-7"}
    assert join_preflight.described_group(config, "g") is None
    assert seen["client_id"] == "kafka-placement-preflight" and seen["bootstrap_servers"] == ["127.0.0.1:1"]


def test_an_empty_consumer_group_is_not_blamed_on_the_default_assignor_kafka_names() -> None:
    # Kafka describes a group whose members name no server assignor (an empty one too) with its default,
    # "uniform" (ConsumerGroup.asDescribedGroup): a run whose members all died read as a wrong assignor
    status = migration_status(group(protocol="consumer", assignor="uniform"), failover=True)
    assert status.stage == "consumer" and not status.honoured
    assert status.problems == (
        "the group has no member: whether the broker ranks its members by failover cannot be read",
    )
    assert "uniform" not in status.ranked_by and "no member" in status.ranked_by
