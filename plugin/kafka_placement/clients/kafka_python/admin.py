"""kafka-python 3.x ``KafkaAdminClient`` adapter for replica placement (thin: no algorithm here).

* :func:`open_admin` — the one way this project opens a ``KafkaAdminClient`` (its TLS handshakes
  bounded: :mod:`.tls_handshake`);
* :func:`brokers` (from :mod:`.admin_calls`, which :mod:`.reassignment` shares) — the live brokers;
* :func:`snapshot` — racks from ``describe_cluster``, replicas/leaders/ISR from ``describe_topics``;
  :func:`snapshot_seen_by` — the partitions as one broker's own metadata has them;
* :func:`create_topic` — CreateTopics with an explicit replica assignment, validated first (the
  broker does not rack-check explicit assignments);
* :func:`apply_reassignment` — submit and wait (:mod:`.reassignment`), then preferred-leader
  election and verification (the CLI's ``reassign apply`` adds throttles, rollback and log dirs).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka_placement.clients.kafka_python.admin_calls import brokers as brokers
from kafka_placement.clients.kafka_python.admin_calls import retrying
from kafka_placement.errors import ClusterError, InvalidArgumentError, NotAuthorizedError, UnknownTopicError
from kafka_placement.replicas.placement_audit import (
    ClusterSnapshot,
    PartitionState,
    validate_explicit_assignment,
)
from kafka_placement.vocabulary import TopicPartition, group_by_topic

Progress = Callable[[int, int, float], None]
"""``progress(done, total, elapsed_seconds)``."""

INTERNAL_TOPIC_PREFIX = "__"

#: How long a finished reassignment's replica lists may take to reach the broker answering
#: describe_topics (KRaft brokers apply the controller's records asynchronously).
SETTLE_S = 10.0


UNKNOWN_TOPIC_OR_PARTITION = 3
TOPIC_AUTHORIZATION_FAILED = 29
LEADER_NOT_AVAILABLE = 5


def open_admin(settings: Mapping[str, Any], **options: Any) -> Any:
    """kafka-python's ``KafkaAdminClient`` over ``settings`` (its keyword settings) and ``options``,
    with each later connection's TLS handshake held to the connection's setup deadline: kafka-python
    3.0.12 waits for a silent broker's handshake for ever (:mod:`.tls_handshake`), and an audit or a
    reassignment must not."""
    from kafka.admin import KafkaAdminClient

    from kafka_placement.clients.kafka_python.tls_handshake import bound_client_tls_handshakes

    admin = KafkaAdminClient(**settings, **options)
    bound_client_tls_handshakes(admin)
    return admin


def snapshot(
    admin: Any, topics: Iterable[str] | None = None, *, include_internal: bool = False, retry_s: float = 10.0
) -> ClusterSnapshot:
    """Brokers and partitions of ``topics`` (all non-internal topics by default).

    A topic that was just created may be unknown to the broker answering for a moment: unknown-topic
    and leader-not-available answers are retried for ``retry_s`` seconds, then reported."""
    wanted = list(topics) if topics is not None else None
    deadline = time.monotonic() + retry_s
    while True:
        described = admin.describe_topics(wanted)
        transient = [
            t
            for t in described
            if t.get("error_code", 0) in (UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE)
        ]
        if not transient or time.monotonic() >= deadline:
            break
        time.sleep(0.5)
    partitions = _partitions(described, wanted, include_internal)
    return ClusterSnapshot(tuple(brokers(admin)), partitions)


def snapshot_seen_by(
    admin: Any, node_id: int, topics: Iterable[str], *, timeout_ms: int = 5000
) -> ClusterSnapshot:
    """The partitions of ``topics`` as broker ``node_id`` sees them in its own metadata (brokers left
    empty). A broker leads a partition once its own metadata says so, while another broker's metadata
    can lag behind the controller's by many seconds on a loaded cluster; so what one broker leads is
    best asked of that broker. kafka-python's admin has no public way to ask one broker: this uses
    its connection manager, as :mod:`.topic_visibility` does. Raises kafka-python's error when the
    broker does not answer within ``timeout_ms``."""
    from kafka.protocol.metadata import MetadataRequest

    wanted = list(topics)
    manager = admin._manager
    request = MetadataRequest(
        topics=[MetadataRequest.MetadataRequestTopic(name=t) for t in wanted],
        allow_auto_topic_creation=False,
    )

    async def ask() -> Any:
        return await manager.send(request, node_id=node_id, request_timeout_ms=timeout_ms)

    described = manager.run(ask).to_dict()["topics"]
    return ClusterSnapshot((), _partitions(described, wanted, include_internal=True))


def _partitions(
    described: Iterable[Mapping[str, Any]], wanted: list[str] | None, include_internal: bool
) -> dict[TopicPartition, PartitionState]:
    """Metadata's topics (kafka-python's ``to_dict()`` shape) as partition states; a topic's error
    raised (unknown, not authorised, any other code)."""
    partitions: dict[TopicPartition, PartitionState] = {}
    for topic in described:
        name = topic["name"]
        code = topic.get("error_code", 0)
        if code == UNKNOWN_TOPIC_OR_PARTITION:
            raise UnknownTopicError(f"Topic {name} not found.")
        if code == TOPIC_AUTHORIZATION_FAILED:
            raise NotAuthorizedError(
                f"not authorised to Describe topic {name!r} (TOPIC_AUTHORIZATION_FAILED)"
            )
        if code:
            raise ClusterError(f"describe_topics failed for topic {name!r}: error code {code}")
        if (
            wanted is None
            and not include_internal
            and (topic.get("is_internal") or name.startswith(INTERNAL_TOPIC_PREFIX))
        ):
            continue
        for p in topic["partitions"]:
            leader = p.get("leader_id", -1)
            partitions[TopicPartition(name, int(p["partition_index"]))] = PartitionState(
                tuple(p["replica_nodes"]),
                leader if leader is not None and leader >= 0 else None,
                tuple(p["isr_nodes"]),
            )
    return partitions


def partition_sizes(admin: Any, topics: Iterable[str] | None = None) -> dict[TopicPartition, int]:
    """Bytes per partition from ``describe_log_dirs``: the largest replica's size (the leader's log,
    what a new replica has to copy); future (moving) logs are ignored."""
    wanted = set(topics) if topics is not None else None
    sizes: dict[TopicPartition, int] = {}
    for broker in admin.describe_log_dirs(list(wanted) if wanted is not None else None):
        for log_dir in broker.get("log_dirs", []):
            if log_dir.get("error_code", 0):
                continue
            for topic in log_dir.get("topics", []):
                if wanted is not None and topic["name"] not in wanted:
                    continue
                for part in topic.get("partitions", []):
                    if part.get("is_future_key"):
                        continue
                    tp = TopicPartition(topic["name"], int(part["partition_index"]))
                    sizes[tp] = max(sizes.get(tp, 0), int(part["partition_size"]))
    return sizes


def create_topic(
    admin: Any,
    topic: str,
    assignment: Mapping[int, Sequence[int]] | Sequence[Sequence[int]],
    *,
    configs: Mapping[str, str] | None = None,
    require_rack_diversity: bool = True,
    timeout_ms: int = 30000,
) -> dict[int, list[int]]:
    """Create ``topic`` with exactly ``assignment`` (partition → replicas, leader first); return
    once every broker's metadata shows every partition with a leader (bounded by ``timeout_ms`` —
    CreateTopics only says the controller accepted the topic, each broker learns it later), else
    :class:`ClusterError`."""
    checked = validate_explicit_assignment(
        assignment, brokers(admin), require_rack_diversity=require_rack_diversity
    )
    spec: dict[str, Any] = {"assignments": checked}
    if configs:
        spec["configs"] = dict(configs)
    from kafka.errors import KafkaTimeoutError

    # only errors raised before the request left: a CreateTopics sent twice would fail "already exists"
    retrying(
        admin,
        lambda: admin.create_topics({topic: spec}, timeout_ms=timeout_ms),
        retried=("UnknownBrokerIdError", "NodeNotReadyError"),
    )

    from kafka_placement.clients.kafka_python.topic_visibility import wait_for_every_broker

    deadline = time.monotonic() + timeout_ms / 1000
    try:
        admin.wait_for_topics([topic], timeout_ms=timeout_ms)
        # the broker kafka-python asked knows the topic; the next client may ask another one
        wait_for_every_broker(admin, topic, len(checked), deadline=deadline)
    except (KafkaTimeoutError, TimeoutError) as exc:
        raise ClusterError(
            f"topic {topic!r} was created but its metadata is not complete after {timeout_ms} ms "
            f"(want {len(checked)} partitions, each with a leader, on every broker): {exc}"
        ) from exc
    return checked


@dataclass
class ApplyResult:
    """Outcome of :func:`apply_reassignment`."""

    submitted: int
    completed: bool
    seconds: float
    mismatches: dict[TopicPartition, tuple[list[int], list[int]]] = field(default_factory=dict)
    not_preferred_leaders: list[TopicPartition] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.completed and not self.mismatches


def apply_reassignment(
    admin: Any,
    target: Mapping[TopicPartition, Sequence[int]],
    *,
    progress: Progress | None = None,
    timeout_s: float = 300.0,
    poll_s: float = 1.0,
    elect_preferred_leaders: bool = True,
) -> ApplyResult:
    """Submit ``target`` (full replica lists), wait until no partition of it is reassigning, elect
    preferred leaders, and verify the replica lists read back from describe_topics."""
    if not target:
        raise InvalidArgumentError("the reassignment is empty: nothing to apply")
    from kafka_placement.clients.kafka_python import reassignment

    started = time.monotonic()
    reassignment.submit(admin, target)
    total = len(target)

    def report(status: reassignment.Status) -> None:
        if progress is not None:
            progress(status.done, status.total, status.elapsed)

    last = reassignment.wait(admin, sorted(target), {}, timeout_s=timeout_s, on_status=report, poll_s=poll_s)
    completed = not last.in_flight
    result = ApplyResult(total, completed, time.monotonic() - started)
    if completed and elect_preferred_leaders:
        admin.elect_leaders(0, group_by_topic(target), raise_errors=False)
    mismatches, not_preferred = verify(
        admin, target, wait_leaders_s=10.0 if elect_preferred_leaders else 0.0, settle_s=SETTLE_S
    )
    result.mismatches = mismatches
    result.not_preferred_leaders = not_preferred
    result.seconds = time.monotonic() - started
    return result


def settled_snapshot(
    admin: Any,
    target: Mapping[TopicPartition, Sequence[int]],
    *,
    moving: Iterable[TopicPartition] = (),
    settle_s: float = 0.0,
) -> ClusterSnapshot:
    """A snapshot of ``target``'s topics, re-read for up to ``settle_s`` while a partition that is not
    ``moving`` still shows replicas other than its target: a reassignment leaves the controller's
    list before every broker's metadata cache drops the removed replicas, so the broker answering
    describe_topics may still show ``target + removing`` for a moment."""
    topics = sorted({tp.topic for tp in target})
    skip = set(moving)
    deadline = time.monotonic() + settle_s
    while True:
        snap = snapshot(admin, topics)
        differs = any(
            tp not in skip and (snap.partitions[tp].replicas if tp in snap.partitions else ()) != tuple(r)
            for tp, r in target.items()
        )
        if not differs or time.monotonic() >= deadline:
            return snap
        time.sleep(0.5)


def verify(
    admin: Any,
    target: Mapping[TopicPartition, Sequence[int]],
    *,
    wait_leaders_s: float = 0.0,
    settle_s: float = 0.0,
) -> tuple[dict[TopicPartition, tuple[list[int], list[int]]], list[TopicPartition]]:
    """``(partitions whose replicas differ {tp: (expected, actual)}, partitions not led by the
    first replica)`` — reading describe_topics, re-read up to ``settle_s`` for replica lists to
    settle (:func:`settled_snapshot`) and up to ``wait_leaders_s`` for leaders."""
    deadline = time.monotonic() + wait_leaders_s
    settle = settle_s
    while True:
        snap = settled_snapshot(admin, target, settle_s=settle)
        settle = 0.0  # replica lists settle once; the leader wait re-reads plainly
        mismatches: dict[TopicPartition, tuple[list[int], list[int]]] = {}
        not_preferred: list[TopicPartition] = []
        for tp, expected in target.items():
            state = snap.partitions.get(tp)
            actual = list(state.replicas) if state else []
            if actual != list(expected):
                mismatches[tp] = (list(expected), actual)
            elif state is not None and state.leader != expected[0]:
                not_preferred.append(tp)
        if (not not_preferred) or time.monotonic() >= deadline:
            return mismatches, sorted(not_preferred)
        time.sleep(0.5)
