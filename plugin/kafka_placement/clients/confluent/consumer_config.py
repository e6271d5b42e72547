"""Splitting a confluent-kafka consumer configuration between the two clients the
:class:`~kafka_placement.clients.confluent.consumer.Consumer` runs.

librdkafka fetches (manual ``assign()``, never a group subscription); kafka-python's classic-group
coordinator keeps the membership, runs our assignor and commits. So group settings
(``session.timeout.ms``, ``group.instance.id``, ...) go to kafka-python only, connection settings
go to both, and librdkafka's own committing is switched off. No I/O here: plain functions, tested
without a broker.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka.coordinator.assignors.abstract import RebalanceProtocol

from kafka_placement.clients.group_assignor import rebalance_protocol
from kafka_placement.clients.kafka_python.assignors import ASSIGNOR_CLASSES, CooperativeStickyAssignor
from kafka_placement.errors import ConsumerConfigError, UnknownStrategyError

# librdkafka name -> kafka-python KafkaConsumer keyword, for settings both clients need.
_SHARED = {
    "bootstrap.servers": "bootstrap_servers",
    "client.id": "client_id",
    "security.protocol": "security_protocol",
    "sasl.mechanism": "sasl_mechanism",
    "sasl.mechanisms": "sasl_mechanism",
    "sasl.username": "sasl_plain_username",
    "sasl.password": "sasl_plain_password",
    "ssl.ca.location": "ssl_cafile",
    "ssl.certificate.location": "ssl_certfile",
    "ssl.key.location": "ssl_keyfile",
    "ssl.key.password": "ssl_password",
    "retry.backoff.ms": "retry_backoff_ms",
    "client.rack": "client_rack",
    # how often pattern subscriptions are re-evaluated (both clients' default: 5 minutes)
    "topic.metadata.refresh.interval.ms": "metadata_max_age_ms",
}
# Group membership settings: kafka-python only (librdkafka never joins the group).
_GROUP_ONLY = {
    "group.id": "group_id",
    "group.instance.id": "group_instance_id",
    "session.timeout.ms": "session_timeout_ms",
    "heartbeat.interval.ms": "heartbeat_interval_ms",
    "max.poll.interval.ms": "max_poll_interval_ms",
}
# Ours, not librdkafka's.
_OURS = ("enable.auto.commit", "auto.commit.interval.ms", "enable.auto.offset.store", "on_commit")
# Settings whose meaning we replace; giving them to librdkafka would be silently wrong.
_REFUSED = {
    "group.protocol": "only classic (group.protocol=consumer: Consumer.for_consumer_protocol)",
    "group.remote.assignor": "only the classic group protocol is run (by kafka-python's coordinator)",
    "group.protocol.type": "the group's protocol type is always 'consumer'",
}
_INT_KEYS = (
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "max.poll.interval.ms",
    "auto.commit.interval.ms",
    "retry.backoff.ms",
    "topic.metadata.refresh.interval.ms",
)
_SSL_IDENTIFICATION = "ssl.endpoint.identification.algorithm"

#: librdkafka's defaults for the settings we take over (kafka-python's differ).
DEFAULTS: dict[str, Any] = {
    "session.timeout.ms": 45000,
    "heartbeat.interval.ms": 3000,
    "max.poll.interval.ms": 300000,
    "enable.auto.commit": True,
    "auto.commit.interval.ms": 5000,
    "enable.auto.offset.store": True,
}


@dataclass
class SplitConfig:
    """One confluent-kafka configuration, split: what librdkafka gets, what kafka-python gets,
    and the commit policy the wrapper itself implements."""

    librdkafka: dict[str, Any]
    kafka_python: dict[str, Any]
    assignors: list[Any]
    cooperative: bool  # the rebalance protocol the assignors run (Java's rule)
    auto_commit: bool
    auto_commit_interval_s: float
    auto_offset_store: bool
    on_commit: Callable[..., Any] | None = None
    session_timeout_s: float = 45.0
    extra: dict[str, Any] = field(default_factory=dict)


def _as_bool(key: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ConsumerConfigError(f"{key} must be true or false, got {value!r}")


def _as_int(key: str, value: object) -> int:
    try:
        number: int = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise ConsumerConfigError(f"{key} must be an integer number of milliseconds, got {value!r}") from None
    if isinstance(value, bool) or number < 1 or number > 2**31 - 1:
        raise ConsumerConfigError(f"{key} must be in [1, 2147483647], got {value!r}")
    return number


def kafka_python_connection(config: Mapping[str, Any]) -> dict[str, Any]:
    """The connection settings of confluent-kafka's ``config`` as kafka-python keywords (bootstrap servers,
    TLS, SASL, client id): for a kafka-python admin client that talks to the same cluster."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        name = _SHARED.get(key)
        if name is None or key in ("client.rack", "topic.metadata.refresh.interval.ms", "retry.backoff.ms"):
            if key == _SSL_IDENTIFICATION:
                out["ssl_check_hostname"] = str(value).lower() == "https"
            continue
        if key == "security.protocol" and isinstance(value, str):
            value = value.upper()
        if key == "bootstrap.servers" and isinstance(value, str):
            value = [s.strip() for s in value.split(",") if s.strip()]
        out[name] = value
    return out


def strategy_names(value: object) -> list[str]:
    """``partition.assignment.strategy`` as librdkafka reads it: a comma-separated string (or a
    list of names). Every name must be one of ours."""
    if isinstance(value, str):
        names = [part.strip() for part in value.split(",") if part.strip()]
    elif isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
        names = [str(v).strip() for v in value]
    else:
        raise ConsumerConfigError(
            f"partition.assignment.strategy must be a comma-separated string of names, got {value!r}"
        )
    if not names:
        raise ConsumerConfigError("partition.assignment.strategy is empty")
    for name in names:
        if name not in ASSIGNOR_CLASSES:
            raise UnknownStrategyError(
                f"unknown assignment strategy {name!r}; allowed: {', '.join(ASSIGNOR_CLASSES)}"
            )
    return names


def build_assignors(assignor: object, rack: str | None) -> list[Any]:
    """Our kafka-python assignor instances for the ``assignor=`` argument: one assignor instance
    (``FailoverAssignor(priority=10)``), a strategy name, or a list of those. ``client.rack`` is
    given to every assignor that has none; a different rack on an assignor is refused."""
    items = list(assignor) if isinstance(assignor, (list, tuple)) else [assignor]
    if not items:
        raise ConsumerConfigError("assignor must name at least one strategy")
    result: list[Any] = []
    for item in items:
        if isinstance(item, str):
            if item not in ASSIGNOR_CLASSES:
                raise UnknownStrategyError(
                    f"unknown assignment strategy {item!r}; allowed: {', '.join(ASSIGNOR_CLASSES)}"
                )
            result.append(ASSIGNOR_CLASSES[item](rack=rack))  # type: ignore[index]
        elif isinstance(item, tuple(ASSIGNOR_CLASSES.values())):
            own = getattr(item, "rack", None)
            if own is None:
                item.rack = rack  # type: ignore[attr-defined]
            elif rack is not None and own != rack:
                raise ConsumerConfigError(
                    f"assignor {item!r} has rack {own!r} but client.rack is {rack!r}; give one rack"
                )
            result.append(item)
        else:
            raise ConsumerConfigError(
                f"assignor must be a strategy name ({', '.join(ASSIGNOR_CLASSES)}) or one of the "
                f"kafka_placement assignors, got {item!r}"
            )
    # Java's rule (the highest protocol every assignor supports; kafka-python's coordinator picks
    # the same): cooperative-sticky in a list with eager strategies runs eagerly and must not
    # send owned partitions
    protocol = rebalance_protocol([a.strategy for a in result])
    for item in result:
        if isinstance(item, CooperativeStickyAssignor):
            item.rebalance_protocol = (
                RebalanceProtocol.COOPERATIVE if protocol == "cooperative" else RebalanceProtocol.EAGER
            )
    return result


def split_config(config: Mapping[str, Any], assignor: object | None) -> SplitConfig:
    """Split ``config`` (confluent-kafka's dict) between librdkafka and kafka-python; raise
    :class:`~kafka_placement.errors.ConsumerConfigError` for settings we cannot honour."""
    if not isinstance(config, Mapping):
        raise ConsumerConfigError(f"config must be a dict, got {type(config).__name__}")
    conf = dict(config)
    if str(conf.get("group.protocol", "")).strip().lower() == "classic":
        del conf["group.protocol"]  # what this consumer runs anyway
    for key, reason in _REFUSED.items():
        if key in conf:
            raise ConsumerConfigError(f"{key}={conf[key]!r} is not supported: {reason}")
    if not conf.get("group.id"):
        raise ConsumerConfigError("group.id must be set: this consumer joins a consumer group")
    if not conf.get("bootstrap.servers"):
        raise ConsumerConfigError("bootstrap.servers must be set")
    strategy = conf.pop("partition.assignment.strategy", None)
    if strategy is not None and assignor is not None:
        raise ConsumerConfigError(
            f"partition.assignment.strategy={strategy!r} given together with assignor={assignor!r}; "
            "give one of them (librdkafka's built-in assignors are not used by this consumer)"
        )
    rack = conf.get("client.rack") or None
    if rack is not None and not isinstance(rack, str):
        raise ConsumerConfigError(f"client.rack must be a string, got {rack!r}")
    assignors = build_assignors(
        strategy_names(strategy) if strategy is not None else (assignor if assignor is not None else "range"),
        rack,
    )

    values = {**DEFAULTS, **conf}
    for key in _INT_KEYS:
        if key in values:
            values[key] = _as_int(key, values[key])
    if values["heartbeat.interval.ms"] >= values["session.timeout.ms"]:
        raise ConsumerConfigError(
            f"heartbeat.interval.ms ({values['heartbeat.interval.ms']}) must be lower than "
            f"session.timeout.ms ({values['session.timeout.ms']})"
        )
    auto_commit = _as_bool("enable.auto.commit", values["enable.auto.commit"])
    auto_store = _as_bool("enable.auto.offset.store", values["enable.auto.offset.store"])
    on_commit = conf.get("on_commit")
    if on_commit is not None and not callable(on_commit):
        raise ConsumerConfigError(f"on_commit must be callable, got {on_commit!r}")

    kafka_python: dict[str, Any] = {
        "enable_auto_commit": False,  # the wrapper commits (see Consumer), never kafka-python itself
        # nobody reads this inner client's metrics, and its sensors cost ~0.1-0.3 ms of the IO thread
        # per request (25 sensor records per OffsetCommit, measured): time a synchronous commit waits
        "metrics_enabled": False,
        "partition_assignment_strategy": assignors,
    }
    librdkafka: dict[str, Any] = {}
    for key, value in conf.items():
        if key in _OURS:
            continue
        if key in _GROUP_ONLY:
            kafka_python[_GROUP_ONLY[key]] = values[key] if key in _INT_KEYS else value
            if key == "group.id":
                librdkafka[key] = value  # librdkafka reads committed offsets for assign(OFFSET_INVALID)
            continue
        if key in _SHARED:
            kp_value = values[key] if key in _INT_KEYS else value
            if key == "security.protocol" and isinstance(value, str):
                kp_value = value.upper()
            if key == "bootstrap.servers" and isinstance(value, str):
                kp_value = [s.strip() for s in value.split(",") if s.strip()]
            kafka_python[_SHARED[key]] = kp_value
        elif key == _SSL_IDENTIFICATION:
            kafka_python["ssl_check_hostname"] = str(value).lower() == "https"
        librdkafka[key] = value
    for key in ("session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms"):
        kafka_python[_GROUP_ONLY[key]] = values[key]
    librdkafka["enable.auto.commit"] = False  # librdkafka is never a group member: it must not commit
    librdkafka["enable.auto.offset.store"] = False
    return SplitConfig(
        librdkafka=librdkafka,
        kafka_python=kafka_python,
        assignors=assignors,
        cooperative=rebalance_protocol([a.strategy for a in assignors]) == "cooperative",
        auto_commit=auto_commit,
        auto_commit_interval_s=values["auto.commit.interval.ms"] / 1000,
        auto_offset_store=auto_store,
        on_commit=on_commit,
        session_timeout_s=values["session.timeout.ms"] / 1000,
    )
