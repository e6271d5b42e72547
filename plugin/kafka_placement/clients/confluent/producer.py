"""A drop-in ``confluent_kafka.Producer`` that places records with our partitioners.

confluent-kafka has no Python partitioner callback (librdkafka partitions on its own threads), so the
supported way is to compute the partition and pass ``partition=`` to ``produce()``. This wrapper does that
from a per-topic metadata cache:

- the first record of a topic fetches its metadata once (``list_topics(topic)``); afterwards the hot path
  never waits for metadata: entries older than ``metadata_max_age_s`` are refreshed by a background thread
  while records keep using the cached view;
- a delivery report with a partition/leader error (unknown partition, leader not available, not leader,
  timed out…) marks the topic stale so the background refresh runs at once — partition-count changes and
  partitions that lost their leader are picked up without a metadata call per record;
- an explicit ``partition=`` is validated (Java's message) and passed through; ``str`` keys are encoded to
  UTF-8 exactly as confluent-kafka itself does, other non-bytes keys are refused.

Every other ``Producer`` method (``poll``, ``flush``, transactions, ``len()``…) is delegated unchanged.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import confluent_kafka

from kafka_placement.errors import UnknownTopicError
from kafka_placement.partitioning.record import RecordPartitioner, default_partitioner
from kafka_placement.partitioning.schemes import Scheme, get_scheme
from kafka_placement.partitioning.sticky import UniformSticky
from kafka_placement.partitioning.topicview import TopicView
from kafka_placement.partitioning.validation import check_explicit_partition, check_key

__all__ = ["Producer", "topic_view_from_metadata"]

_STALE_ERRORS = frozenset(
    code
    for code in (
        getattr(confluent_kafka.KafkaError, name, None)
        for name in (
            "_UNKNOWN_PARTITION",
            "_UNKNOWN_TOPIC",
            "UNKNOWN_TOPIC_OR_PART",
            "LEADER_NOT_AVAILABLE",
            "NOT_LEADER_FOR_PARTITION",
            "NOT_LEADER_OR_FOLLOWER",
            "_MSG_TIMED_OUT",
            "_TRANSPORT",
            "_ALL_BROKERS_DOWN",
        )
    )
    if code is not None
)


def topic_view_from_metadata(
    topic_metadata: Any, broker_racks: Mapping[int, str | None] | None = None
) -> TopicView:
    """A :class:`TopicView` from a confluent ``TopicMetadata``: available = has a leader and no error."""
    parts = topic_metadata.partitions
    available = [p.id for p in parts.values() if p.leader is not None and p.leader >= 0 and p.error is None]
    racks = {}
    if broker_racks:
        racks = {p.id: broker_racks.get(p.leader) for p in parts.values() if p.leader is not None}
    return TopicView(topic_metadata.topic, tuple(sorted(parts)), tuple(sorted(available)), racks)


@dataclass(frozen=True)
class _Entry:
    view: TopicView
    fetched_at: float
    stale: bool = False


class Producer:
    """``confluent_kafka.Producer`` with partition placement by a :class:`RecordPartitioner`.

    ``partitioner``: a RecordPartitioner, or a scheme name (``"murmur2_random"`` = Java,
    ``"consistent_random"`` = librdkafka default, …; keyless records uniform sticky). Default: the Java
    producer's (murmur2 keyed, uniform sticky keyless). ``broker_racks``: broker id → rack, needed only
    for rack-aware strategies (confluent's metadata does not carry racks).
    """

    def __init__(
        self,
        config: Mapping[str, Any] | None = None,
        *,
        partitioner: RecordPartitioner | str | Scheme | None = None,
        metadata_max_age_s: float = 5.0,
        metadata_timeout_s: float = 10.0,
        broker_racks: Mapping[int, str | None] | None = None,
        **kwargs: Any,
    ) -> None:
        conf = dict(config or {})
        self._producer = confluent_kafka.Producer(conf, **kwargs)
        if partitioner is None:
            batch_size = int(conf.get("batch.size", kwargs.get("batch.size", 1000000)))
            partitioner = default_partitioner(batch_size)
        elif not isinstance(partitioner, RecordPartitioner):
            sch = get_scheme(partitioner)
            partitioner = RecordPartitioner(sch, None if sch.always_random else UniformSticky())
        self.partitioner: RecordPartitioner = partitioner
        self.metadata_max_age_s = metadata_max_age_s
        self.metadata_timeout_s = metadata_timeout_s
        self.broker_racks = dict(broker_racks) if broker_racks else None
        self._cache: dict[str, _Entry] = {}
        self._refreshing: set[str] = set()
        self._lock = threading.Lock()
        self.metadata_fetches = 0  # observable: how many list_topics calls were made

    # --- metadata -------------------------------------------------------------------------------
    def _fetch(self, topic: str) -> TopicView:
        self.metadata_fetches += 1
        md = self._producer.list_topics(topic, timeout=self.metadata_timeout_s)
        tmd = md.topics.get(topic)
        if tmd is None or tmd.error is not None or not tmd.partitions:
            reason = (
                "absent" if tmd is None else (str(tmd.error) if tmd.error is not None else "no partitions")
            )
            raise UnknownTopicError(f"topic {topic!r} is unknown to the cluster metadata ({reason})")
        view = topic_view_from_metadata(tmd, self.broker_racks)
        self._cache[topic] = _Entry(view, time.monotonic())
        return view

    def _refresh_in_background(self, topic: str) -> None:
        with self._lock:
            if topic in self._refreshing:
                return
            self._refreshing.add(topic)

        def run() -> None:
            try:
                self._fetch(topic)
            except Exception:  # keep serving the cached view; the next expiry retries
                entry = self._cache.get(topic)
                if entry is not None:
                    self._cache[topic] = _Entry(entry.view, time.monotonic(), entry.stale)
            finally:
                with self._lock:
                    self._refreshing.discard(topic)

        threading.Thread(target=run, name=f"kafka-placement-metadata-{topic}", daemon=True).start()

    def topic_view(self, topic: str) -> TopicView:
        """The cached view of ``topic`` (fetched synchronously only the first time)."""
        entry = self._cache.get(topic)
        if entry is None:
            return self._fetch(topic)
        if entry.stale or time.monotonic() - entry.fetched_at > self.metadata_max_age_s:
            self._refresh_in_background(topic)
        return entry.view

    def mark_stale(self, topic: str) -> None:
        """Refresh ``topic``'s metadata in the background at the next record."""
        entry = self._cache.get(topic)
        if entry is not None:
            self._cache[topic] = _Entry(entry.view, entry.fetched_at, True)

    def refresh_metadata(self, topic: str) -> TopicView:
        """Fetch ``topic``'s metadata now (blocking)."""
        return self._fetch(topic)

    # --- produce --------------------------------------------------------------------------------
    def _wrap(self, topic: str, callback: Callable[..., Any] | None) -> Callable[[Any, Any], None]:
        def on_delivery(err: Any, msg: Any) -> None:
            if err is not None and err.code() in _STALE_ERRORS:
                self.mark_stale(topic)
            if callback is not None:
                callback(err, msg)

        return on_delivery

    def produce(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int | None = -1,
        on_delivery: Callable[..., Any] | None = None,
        callback: Callable[..., Any] | None = None,
        timestamp: int = 0,
        headers: Any = None,
    ) -> None:
        """Same signature and semantics as ``confluent_kafka.Producer.produce``; ``partition`` is ours."""
        key_bytes = check_key(key)  # the bytes every adapter hashes; str as UTF-8, like confluent-kafka
        view = self.topic_view(topic)
        if partition is not None and partition != -1:
            if (
                isinstance(partition, int)
                and not isinstance(partition, bool)
                and partition >= view.num_partitions
            ):
                view = self._fetch(topic)  # maybe the topic grew: one metadata call, error path only
            chosen = check_explicit_partition(partition, view.num_partitions)
        else:
            size = (len(key_bytes) if key_bytes else 0) + (len(value) if value is not None else 0)
            chosen = self.partitioner.partition(view, key_bytes, size)
        kwargs: dict[str, Any] = {
            "partition": chosen,
            "on_delivery": self._wrap(topic, on_delivery or callback),
        }
        if timestamp:
            kwargs["timestamp"] = timestamp
        if headers is not None:
            kwargs["headers"] = headers
        # confluent-kafka takes bytes or str keys only: a bytearray/memoryview goes as the bytes we hashed
        sent = key if key is None or isinstance(key, bytes | str) else key_bytes
        self._producer.produce(topic, value, sent, **kwargs)

    # --- everything else is confluent's ---------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        if name == "_producer":  # not constructed (yet): no recursion
            raise AttributeError(name)
        return getattr(self._producer, name)

    def __len__(self) -> int:
        return len(self._producer)

    def __bool__(self) -> bool:
        return True
