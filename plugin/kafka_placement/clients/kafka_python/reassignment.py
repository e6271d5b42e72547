"""kafka-python adapter for executing reassignments safely (thin: what to throttle, and when, is
decided in :mod:`kafka_placement.replicas.throttles` and the CLI).

* :func:`ongoing` — ``ListPartitionReassignments`` as :class:`OngoingReassignment` values;
* :func:`submit` / :func:`cancel` — ``AlterPartitionReassignments`` with replica lists / with null;
* :func:`set_throttles`, :func:`throttles`, :func:`clear_throttles` — the broker and topic throttle
  configs through ``IncrementalAlterConfigs`` / ``DescribeConfigs`` (they live on the cluster, so a
  crashed tool loses nothing: ``verify`` finds and clears them later);
* :func:`replica_dirs`, :func:`alter_log_dirs` — ``DescribeLogDirs`` / ``AlterReplicaLogDirs``;
* :func:`wait` — poll until the partitions are no longer reassigning, reporting bytes still to copy;
* :func:`retrying` (from :mod:`.admin_calls`) — an admin call retried while its broker is unreachable.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_placement.clients.kafka_python.admin_calls import brokers as live_brokers
from kafka_placement.clients.kafka_python.admin_calls import retrying as retrying
from kafka_placement.clients.kafka_python.admin_calls import unreachable as _unreachable
from kafka_placement.errors import ClusterError
from kafka_placement.replicas.throttles import (
    BROKER_THROTTLES,
    FOLLOWER_RATE,
    FOLLOWER_REPLICAS,
    LEADER_RATE,
    LEADER_REPLICAS,
    LOG_DIR_RATE,
    TOPIC_THROTTLES,
    Movement,
    OngoingReassignment,
    bytes_to_copy,
)
from kafka_placement.vocabulary import TopicPartition

#: (topic-partition, broker id): the replica of a partition on one broker.
Replica = tuple[TopicPartition, int]


def _kafka_tp(tp: TopicPartition) -> Any:
    from kafka import TopicPartition as KafkaTopicPartition

    return KafkaTopicPartition(tp.topic, tp.partition)


def _error_text(err: Any) -> str:
    if isinstance(err, str):
        return err
    name = getattr(err, "__name__", None) or type(err).__name__
    description = getattr(err, "description", "") or ""
    return f"{name}: {description}" if description else str(name)


def ongoing(
    admin: Any, partitions: Iterable[TopicPartition] | None = None
) -> dict[TopicPartition, OngoingReassignment]:
    """Reassignments in flight (of ``partitions``, or of the whole cluster)."""
    wanted = None if partitions is None else [_kafka_tp(tp) for tp in partitions]
    if wanted is not None and not wanted:
        return {}
    listed = retrying(admin, lambda: admin.list_partition_reassignments(wanted))
    return {
        TopicPartition(k.topic, k.partition): OngoingReassignment(
            tuple(v["replicas"]), tuple(v["adding_replicas"]), tuple(v["removing_replicas"])
        )
        for k, v in listed.items()
    }


def _alter(admin: Any, request: Mapping[TopicPartition, Sequence[int] | None], what: str) -> None:
    body = {_kafka_tp(tp): r for tp, r in request.items()}
    answers = retrying(admin, lambda: admin.alter_partition_reassignments(body))
    failed = {TopicPartition(k.topic, k.partition): e for k, e in answers.items() if e is not None}
    if failed:
        lines = "; ".join(f"{tp.topic}-{tp.partition}: {_error_text(failed[tp])}" for tp in sorted(failed))
        raise ClusterError(f"Error {what} partition(s): {lines}")


def submit(admin: Any, target: Mapping[TopicPartition, Sequence[int]]) -> None:
    """Start moving every partition of ``target`` to its replica list; the broker's per-partition
    errors are raised together (Kafka's "Error reassigning partition(s)")."""
    if target:
        _alter(admin, {tp: list(r) for tp, r in target.items()}, "reassigning")


def cancel(admin: Any, partitions: Iterable[TopicPartition]) -> None:
    """Cancel the reassignments of ``partitions`` (the controller restores their original lists)."""
    request: dict[TopicPartition, Sequence[int] | None] = {tp: None for tp in partitions}
    if request:
        _alter(admin, request, "cancelling partition reassignment for")


# ---- throttles ------------------------------------------------------------------------------------
def _resource(kind: str, name: str | int, configs: Any = None) -> Any:
    from kafka.admin import ConfigResource, ConfigResourceType

    return ConfigResource(ConfigResourceType[kind], str(name), configs)


def _check_altered(result: Mapping[str, Mapping[str, str]], what: str) -> None:
    failed = [
        f"{kind} {name}: {answer}"
        for kind, answers in result.items()
        for name, answer in answers.items()
        if answer != "OK"
    ]
    if failed:
        raise ClusterError(f"could not {what}: {'; '.join(failed)}")


def _incremental_alter(admin: Any, resources: list[Any], what: str) -> list[int]:
    """Alter topic resources together and each broker on its own; the brokers that could not be
    reached (their configs unchanged)."""
    skipped: list[int] = []
    topics = [r for r in resources if r.resource_type.name == "TOPIC"]
    brokers = [r for r in resources if r.resource_type.name != "TOPIC"]
    # raise_on_unknown would describe every resource first and reject the throttle keys, which
    # brokers accept but do not list as dynamic configs of an unthrottled broker.
    for group in ([topics] if topics else []) + [[b] for b in brokers]:
        try:
            if group is topics:
                answer = retrying(
                    admin, lambda: admin.alter_configs(topics, raise_on_unknown=False, incremental=True)
                )
            else:
                answer = admin.alter_configs(group, raise_on_unknown=False, incremental=True)
            _check_altered(answer, what)
        except Exception as exc:
            if group is topics or not _unreachable(exc):
                raise
            skipped.append(int(group[0].name))
    return skipped


def set_throttles(
    admin: Any,
    *,
    rate: int | None,
    brokers: Iterable[int],
    leader_lists: Mapping[str, str],
    follower_lists: Mapping[str, str],
    log_dir_rate: int | None = None,
    log_dir_brokers: Iterable[int] = (),
) -> None:
    """Set the replication rate on ``brokers`` and the throttled replica lists on their topics (when
    ``rate`` is given), and the log-dir move rate on ``log_dir_brokers`` (when ``log_dir_rate`` is)."""
    resources: list[Any] = []
    by_broker: dict[int, dict[str, Any]] = {}
    if rate is not None:
        for b in brokers:
            by_broker.setdefault(b, {}).update({LEADER_RATE: str(rate), FOLLOWER_RATE: str(rate)})
        topics = sorted(set(leader_lists) | set(follower_lists))
        for topic in topics:
            configs = {
                LEADER_REPLICAS: leader_lists.get(topic, ""),
                FOLLOWER_REPLICAS: follower_lists.get(topic, ""),
            }
            resources.append(_resource("TOPIC", topic, configs))
    if log_dir_rate is not None:
        for b in log_dir_brokers:
            by_broker.setdefault(b, {})[LOG_DIR_RATE] = str(log_dir_rate)
    resources.extend(_resource("BROKER", b, configs) for b, configs in sorted(by_broker.items()))
    skipped = _incremental_alter(admin, resources, "set the reassignment throttles")
    if skipped:
        raise ClusterError(
            f"could not set the reassignment throttles: broker(s) {skipped} unreachable; nothing was "
            "submitted (an unthrottled move is what --throttle is meant to prevent)"
        )


@dataclass(frozen=True)
class Throttles:
    """Throttle configs set on the cluster: broker id → {key: value}, topic → {key: value};
    ``unreachable``: brokers that could not be asked (down or restarting)."""

    brokers: dict[int, dict[str, str]]
    topics: dict[str, dict[str, str]]
    unreachable: tuple[int, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.brokers or self.topics)


def throttles(admin: Any, brokers: Iterable[int], topics: Iterable[str]) -> Throttles:
    """The throttle configs currently set (dynamically) on ``brokers`` and ``topics``."""
    found_brokers: dict[int, dict[str, str]] = {}
    found_topics: dict[str, dict[str, str]] = {}
    unreachable: list[int] = []
    described: dict[str, dict[str, Any]] = {"broker": {}, "topic": {}}
    for b in sorted(set(brokers)):  # one request per broker: a broker that is down only hides itself
        try:
            answer = admin.describe_configs(
                [_resource("BROKER", b, list(BROKER_THROTTLES))], config_filter="modified"
            )
        except Exception as exc:
            if not _unreachable(exc):
                raise
            unreachable.append(b)
            continue
        described["broker"].update(answer.get("broker", {}))
    wanted_topics = [_resource("TOPIC", t, list(TOPIC_THROTTLES)) for t in sorted(set(topics))]
    if wanted_topics:
        answer = retrying(admin, lambda: admin.describe_configs(wanted_topics, config_filter="modified"))
        described["topic"] = answer.get("topic", {})
    for name, configs in described["broker"].items():
        values = {
            k: str(v.get("value"))
            for k, v in configs.items()
            if k in BROKER_THROTTLES and v.get("value") not in (None, "")
        }
        if values:
            found_brokers[int(name)] = values
    for name, configs in described["topic"].items():
        values = {
            k: str(v.get("value"))
            for k, v in configs.items()
            if k in TOPIC_THROTTLES and v.get("value") not in (None, "")
        }
        if values:
            found_topics[name] = values
    return Throttles(found_brokers, found_topics, tuple(unreachable))


def clear_throttles(admin: Any, brokers: Iterable[int], topics: Iterable[str]) -> list[int]:
    """Delete every throttle config from ``brokers`` and ``topics`` (Kafka's ``clearAllThrottles``);
    the brokers that could not be reached (their throttles stay until a later clear)."""
    from kafka.admin import AlterConfigOp

    delete = (AlterConfigOp.DELETE, None)
    resources = [_resource("BROKER", b, {k: delete for k in BROKER_THROTTLES}) for b in sorted(set(brokers))]
    resources += [_resource("TOPIC", t, {k: delete for k in TOPIC_THROTTLES}) for t in sorted(set(topics))]
    return _incremental_alter(admin, resources, "clear the reassignment throttles")


# ---- log dirs -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReplicaDir:
    """Where a replica lives on its broker, where it is moving to (``future``) and its size."""

    current: str | None
    future: str | None
    size: int


def replica_dirs(admin: Any, topics: Iterable[str]) -> dict[Replica, ReplicaDir]:
    """Every replica of ``topics`` on every broker, from ``DescribeLogDirs``."""
    found: dict[Replica, dict[str, Any]] = {}
    wanted = sorted(set(topics))
    if not wanted:
        return {}
    answers: list[dict[str, Any]] = []
    for b in retrying(admin, lambda: live_brokers(admin)):  # one broker at a time: a dead one hides itself
        try:
            answers.extend(admin.describe_log_dirs(wanted, brokers=[b.id]))
        except Exception as exc:
            if not _unreachable(exc):
                raise
    for broker in answers:
        broker_id = int(broker["broker"])
        for log_dir in broker.get("log_dirs", []):
            if log_dir.get("error_code", 0):
                continue
            for topic in log_dir.get("topics", []):
                for part in topic.get("partitions", []):
                    key = (TopicPartition(topic["name"], int(part["partition_index"])), broker_id)
                    entry = found.setdefault(key, {"current": None, "future": None, "size": 0})
                    if part.get("is_future_key"):
                        entry["future"] = log_dir["log_dir"]
                    else:
                        entry["current"] = log_dir["log_dir"]
                        entry["size"] = int(part.get("partition_size", 0))
    return {k: ReplicaDir(v["current"], v["future"], v["size"]) for k, v in found.items()}


#: Errors with which a broker refuses a log-dir move it cannot start yet (the replica is still being
#: created there by the reassignment): retried, as Kafka's tool does.
_NOT_YET = ("ReplicaNotAvailableError", "KafkaStorageError", "NotLeaderOrFollowerError")


def alter_log_dirs(admin: Any, moves: Mapping[Replica, str], *, timeout_s: float = 60.0) -> None:
    """Ask each broker to move (or place) its replica into the given log dir, retrying while the
    replica does not exist there yet; :class:`ClusterError` naming what could not be started."""
    from kafka import TopicPartitionReplica

    pending = dict(moves)
    deadline = time.monotonic() + timeout_s
    last: dict[Replica, str] = {}
    while pending:
        request = {TopicPartitionReplica(tp.topic, tp.partition, b): d for (tp, b), d in pending.items()}
        answers = admin.alter_replica_log_dirs(request)
        for key, err in answers.items():
            replica = (TopicPartition(key.topic, key.partition), int(key.broker_id))
            name = getattr(err, "__name__", "")
            if name == "NoError":
                pending.pop(replica, None)
            elif name in _NOT_YET:
                last[replica] = _error_text(err)
            else:
                raise ClusterError(
                    f"could not move {replica[0].topic}-{replica[0].partition} on broker {replica[1]} "
                    f"to log dir {pending.get(replica)!r}: {_error_text(err)}"
                )
        if pending and time.monotonic() >= deadline:
            by_broker = sorted(pending, key=lambda r: (r[1], r[0]))
            names = ",".join(f"{b}-{tp.topic}-{tp.partition}" for tp, b in by_broker)
            raise ClusterError(f"Timed out before log directory moves could be started for: {names}")
        if pending:
            time.sleep(0.2)


# ---- waiting --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Status:
    """One poll: partitions done of total, bytes still to copy (None when the cluster reports no
    sizes), seconds since the wait began."""

    done: int
    total: int
    bytes_left: int | None
    elapsed: float
    in_flight: tuple[TopicPartition, ...]


def status(
    admin: Any,
    partitions: Sequence[TopicPartition],
    moves: Mapping[TopicPartition, Movement],
    started: float,
) -> Status:
    """Where ``partitions`` stand now: reassigning ones from ListPartitionReassignments, bytes left
    from DescribeLogDirs (partition size minus what each new replica already holds)."""
    in_flight = ongoing(admin, partitions)
    bytes_left: int | None = None
    if in_flight and moves:
        try:
            dirs = replica_dirs(admin, {tp.topic for tp in in_flight})
        except Exception:  # sizes are a courtesy: a broker that cannot answer must not stop the wait
            dirs = {}
        if dirs:
            sizes: dict[TopicPartition, int] = {}
            for (tp, _b), info in dirs.items():
                sizes[tp] = max(sizes.get(tp, 0), info.size)
            copied = {replica: info.size for replica, info in dirs.items()}
            left = {tp: moves[tp] for tp in in_flight if tp in moves}
            bytes_left = bytes_to_copy(left, sizes, copied)
    return Status(
        len(partitions) - len(in_flight),
        len(partitions),
        bytes_left,
        time.monotonic() - started,
        tuple(sorted(in_flight)),
    )


def wait(
    admin: Any,
    partitions: Sequence[TopicPartition],
    moves: Mapping[TopicPartition, Movement],
    *,
    timeout_s: float,
    on_status: Callable[[Status], None] | None = None,
    poll_s: float = 1.0,
) -> Status:
    """Poll until none of ``partitions`` is reassigning or ``timeout_s`` passed; the last status."""
    started = time.monotonic()
    while True:
        now = status(admin, partitions, moves, started)
        if on_status is not None:
            on_status(now)
        if not now.in_flight or now.elapsed >= timeout_s:
            return now
        time.sleep(min(poll_s, max(0.05, timeout_s - now.elapsed)))
