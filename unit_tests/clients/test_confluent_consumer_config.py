"""Splitting a confluent-kafka consumer config between librdkafka and kafka-python (no broker)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.coordinator.assignors.abstract import RebalanceProtocol

from kafka_placement.clients.confluent.consumer_config import split_config, strategy_names
from kafka_placement.clients.kafka_python.assignors import (
    CooperativeStickyAssignor,
    FailoverAssignor,
    RangeAssignor,
)
from kafka_placement.errors import ConsumerConfigError, InvalidArgumentError, UnknownStrategyError

BASE = {"bootstrap.servers": "127.0.0.1:9092,127.0.0.1:9093", "group.id": "billing"}


def test_group_settings_go_to_kafka_python_only_and_librdkafka_never_commits() -> None:
    split = split_config(
        {
            **BASE,
            "session.timeout.ms": "6000",
            "group.instance.id": "a-1",
            "auto.offset.reset": "earliest",
            "fetch.min.bytes": 1,
        },
        FailoverAssignor(priority=3),
    )
    assert split.librdkafka == {
        "bootstrap.servers": BASE["bootstrap.servers"],
        "group.id": "billing",
        "auto.offset.reset": "earliest",
        "fetch.min.bytes": 1,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
    }
    kp = split.kafka_python
    assert kp["bootstrap_servers"] == ["127.0.0.1:9092", "127.0.0.1:9093"]
    assert kp["group_id"] == "billing" and kp["group_instance_id"] == "a-1"
    assert kp["session_timeout_ms"] == 6000  # the string, as librdkafka accepts it, parsed
    assert kp["heartbeat_interval_ms"] == 3000 and kp["max_poll_interval_ms"] == 300000  # librdkafka defaults
    assert kp["enable_auto_commit"] is False
    assert kp["metrics_enabled"] is False  # nobody reads them; each request would pay for them
    assert [type(a) for a in kp["partition_assignment_strategy"]] == [FailoverAssignor]
    assert split.auto_commit is True and split.auto_commit_interval_s == 5.0  # librdkafka's defaults
    assert split.session_timeout_s == 6.0


def test_client_rack_reaches_the_assignor_and_both_clients() -> None:
    split = split_config({**BASE, "client.rack": "az2"}, "cooperative-sticky")
    (assignor,) = split.assignors
    assert isinstance(assignor, CooperativeStickyAssignor) and assignor.rack == "az2"
    assert split.librdkafka["client.rack"] == "az2" and split.kafka_python["client_rack"] == "az2"
    given = FailoverAssignor(priority=1)
    assert split_config({**BASE, "client.rack": "az1"}, given).assignors[0].rack == "az1"
    with pytest.raises(ConsumerConfigError, match=r"rack 'az3' but client\.rack is 'az1'"):
        split_config({**BASE, "client.rack": "az1"}, FailoverAssignor(priority=1, rack="az3"))


def test_strategy_from_config_or_argument_but_never_both() -> None:
    split = split_config({**BASE, "partition.assignment.strategy": "range, roundrobin"}, None)
    assert [a.name for a in split.assignors] == ["range", "roundrobin"]
    assert "partition.assignment.strategy" not in split.librdkafka
    assert [type(a) for a in split_config(BASE, None).assignors] == [RangeAssignor]  # librdkafka's default
    with pytest.raises(ConsumerConfigError, match="given together with assignor"):
        split_config({**BASE, "partition.assignment.strategy": "range"}, "sticky")


@pytest.mark.parametrize("bad", ["Range", "range,bogus", "org.apache.kafka.clients.consumer.RangeAssignor"])
def test_unknown_strategy_names_are_refused_naming_the_allowed_ones(bad: str) -> None:
    with pytest.raises(UnknownStrategyError, match="allowed: range, roundrobin, sticky, cooperative-sticky"):
        strategy_names(bad)
    with pytest.raises(UnknownStrategyError):
        split_config(BASE, bad.split(",")[-1])


def test_a_list_runs_the_protocol_java_would_run() -> None:
    """Java's ConsumerCoordinator: the highest protocol every assignor supports."""
    from kafka_placement.clients.kafka_python import CooperativeStickyAssignor

    mixed = split_config(BASE, ["cooperative-sticky", "range"])
    assert not mixed.cooperative
    (coop,) = [a for a in mixed.assignors if isinstance(a, CooperativeStickyAssignor)]
    assert coop.rebalance_protocol == RebalanceProtocol.EAGER
    alone = split_config({**BASE, "partition.assignment.strategy": "cooperative-sticky"}, None)
    assert alone.cooperative and alone.assignors[0].rebalance_protocol == RebalanceProtocol.COOPERATIVE
    assert not split_config(BASE, ["sticky", "range"]).cooperative


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"group.id": ""}, "group.id must be set"),
        ({"bootstrap.servers": None}, "bootstrap.servers must be set"),
        ({"group.protocol": "consumer"}, "group.protocol='consumer' is not supported"),
        ({"session.timeout.ms": "soon"}, "session.timeout.ms must be an integer"),
        ({"session.timeout.ms": 0}, r"session.timeout.ms must be in \[1, 2147483647\], got 0"),
        ({"heartbeat.interval.ms": 10000, "session.timeout.ms": 6000}, "must be lower than session"),
        ({"enable.auto.commit": "yes"}, "enable.auto.commit must be true or false, got 'yes'"),
        ({"on_commit": 3}, "on_commit must be callable"),
        ({"client.rack": 7}, "client.rack must be a string"),
    ],
)
def test_bad_settings_are_typed_errors_naming_the_value(extra: dict[str, object], message: str) -> None:
    with pytest.raises(ConsumerConfigError, match=message) as info:
        split_config({**BASE, **extra}, None)
    assert isinstance(info.value, InvalidArgumentError)


def test_assignor_argument_must_be_ours() -> None:
    with pytest.raises(ConsumerConfigError, match="assignor must be a strategy name"):
        split_config(BASE, object())
    with pytest.raises(ConsumerConfigError, match="at least one strategy"):
        split_config(BASE, [])


def test_auto_commit_policy_is_kept_for_the_wrapper_not_passed_on() -> None:
    split = split_config(
        {
            **BASE,
            "enable.auto.commit": "false",
            "auto.commit.interval.ms": 250,
            "enable.auto.offset.store": False,
        },
        None,
    )
    assert split.auto_commit is False and split.auto_commit_interval_s == 0.25
    assert split.auto_offset_store is False
    assert split.librdkafka["enable.auto.commit"] is False
    assert "auto.commit.interval.ms" not in split.librdkafka


def test_tls_and_sasl_settings_reach_kafka_python() -> None:
    split = split_config(
        {
            **BASE,
            "security.protocol": "sasl_ssl",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "u",
            "sasl.password": "p",
            "ssl.ca.location": "/ca.pem",
            "ssl.endpoint.identification.algorithm": "none",
        },
        None,
    )
    kp = split.kafka_python
    assert kp["security_protocol"] == "SASL_SSL" and kp["sasl_mechanism"] == "SCRAM-SHA-512"
    assert kp["sasl_plain_username"] == "u" and kp["sasl_plain_password"] == "p"
    assert kp["ssl_cafile"] == "/ca.pem" and kp["ssl_check_hostname"] is False
    assert split.librdkafka["sasl.password"] == "p"


_OWN_KEYS = {
    "group.instance.id",
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "max.poll.interval.ms",
    "enable.auto.commit",
    "auto.commit.interval.ms",
    "enable.auto.offset.store",
    "on_commit",
    "partition.assignment.strategy",
    "group.protocol",
    "group.remote.assignor",
    "group.protocol.type",
}


def _not_ours(key: str) -> bool:
    return key not in _OWN_KEYS


@given(
    extra=st.dictionaries(
        st.from_regex(r"[a-z]{1,8}(\.[a-z]{1,8}){1,3}", fullmatch=True).filter(_not_ours),
        st.one_of(st.integers(), st.text(max_size=10), st.booleans()),
        max_size=6,
    ),
    auto_commit=st.booleans(),
)
def test_librdkafka_gets_its_settings_unchanged_and_never_joins_or_commits(
    extra: dict[str, object], auto_commit: bool
) -> None:
    conf = {**extra, **BASE, "enable.auto.commit": auto_commit, "session.timeout.ms": 10000}
    split = split_config(conf, "roundrobin")
    for key, value in extra.items():
        if key not in BASE and key != "client.rack":
            assert split.librdkafka[key] == value
    assert split.librdkafka["enable.auto.commit"] is False
    assert split.librdkafka["enable.auto.offset.store"] is False
    assert not (_OWN_KEYS - {"enable.auto.commit", "enable.auto.offset.store"}) & set(split.librdkafka)
    assert split.auto_commit is auto_commit and split.kafka_python["enable_auto_commit"] is False
    assert split.kafka_python["session_timeout_ms"] == 10000
