"""A ``confluent_kafka.Producer`` (a true subclass) that places records with our partitioners.

confluent-kafka has no Python partitioner callback (librdkafka partitions on its own threads), so the
supported way is to compute the partition and pass ``partition=`` to ``produce()``. This subclass does
that for ``produce`` and ``produce_batch`` from a per-topic metadata cache
(:mod:`kafka_placement.clients.confluent.topic_metadata`); everything else — ``poll``, ``flush``,
transactions, ``len()``, ``with Producer(...) as p`` — is confluent's own.

Native mode: a scheme *name* that librdkafka implements itself (``murmur2``, ``murmur2_random``,
``consistent``, ``consistent_random``, ``fnv1a``, ``fnv1a_random``, ``random``) is handed to librdkafka
(its ``partitioner`` setting) and ``produce``/``produce_batch`` are confluent's own C methods — plain
confluent-kafka speed. Keyed records land exactly where our scheme puts them (librdkafka's hashes are the
ones our schemes reproduce, Java's murmur2 included); keyless records follow librdkafka's stickiness
(``sticky.partitioning.linger.ms``) instead of Java's ``batch.size`` stickiness. ``native=False`` keeps
Java's keyless semantics through our partitioner; ``jump``, rack-aware or custom partitioners always run
here. Then ``produce(topic, value[, key])`` without a callback is taken by the C record router
(:mod:`kafka_placement.partitioning.routing`): keyed records hashed in C, keyless ones under a sticky
lease, the same partitions as the Python path below, which takes every other call.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import confluent_kafka

from kafka_placement.clients.confluent.topic_metadata import TopicMetadataCache, topic_view_from_metadata
from kafka_placement.errors import ConnectionFailedError, InvalidArgumentError, UnknownTopicError
from kafka_placement.partitioning import routing
from kafka_placement.partitioning.availability import PartitionAvailability
from kafka_placement.partitioning.record import RecordPartitioner, default_partitioner, scheme_partitioner
from kafka_placement.partitioning.routing import (
    grant_lease,
    record_router,
    routable,
    set_route,
    take_lease,
)
from kafka_placement.partitioning.schemes import Scheme
from kafka_placement.partitioning.sticky import UniformSticky, unmodified_sticky
from kafka_placement.partitioning.topicview import TopicView
from kafka_placement.partitioning.validation import check_explicit_partition, check_key

if TYPE_CHECKING:
    from kafka_placement.partitioning._native import Router as RecordRouter

__all__ = ["DEFAULT_METADATA_TIMEOUT_S", "LIBRDKAFKA_PARTITIONERS", "Producer", "topic_view_from_metadata"]

#: How long the first record of a topic may wait for its metadata when neither ``metadata_timeout_s``
#: nor the config's ``socket.timeout.ms`` says otherwise.
DEFAULT_METADATA_TIMEOUT_S = 10.0

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

DeliveryCallback = Callable[[Any, Any], None]

#: Partitioner names librdkafka implements itself (its ``partitioner`` setting), with our schemes' semantics.
LIBRDKAFKA_PARTITIONERS = frozenset(
    {"murmur2", "murmur2_random", "consistent", "consistent_random", "fnv1a", "fnv1a_random", "random"}
)


class Producer(confluent_kafka.Producer):
    """``confluent_kafka.Producer`` with partition placement by a :class:`RecordPartitioner`.

    ``partitioner``: a RecordPartitioner, or a scheme name (``"murmur2_random"`` = Java,
    ``"consistent_random"`` = librdkafka default, …; keyless records uniform sticky). Default: the Java
    producer's (murmur2 keyed, uniform sticky keyless). ``metadata_timeout_s`` bounds the wait for a
    topic's metadata on its first record (default: the config's ``socket.timeout.ms``, else
    :data:`DEFAULT_METADATA_TIMEOUT_S`); ``metadata_max_age_s`` how old a cached view may get before a
    background refresh. ``broker_racks``: broker id → rack, needed only for rack-aware strategies
    (confluent's metadata does not carry racks). ``native``: let librdkafka place records (default: yes
    for a librdkafka partitioner given by name, see the module docstring). ``availability_timeout_s``:
    Java's ``partitioner.availability.timeout.ms`` in seconds (KIP-794; 0 = off), for our partitioner.
    """

    def __init__(
        self,
        config: Mapping[str, Any] | None = None,
        *,
        partitioner: RecordPartitioner | str | Scheme | None = None,
        metadata_max_age_s: float = 5.0,
        metadata_timeout_s: float | None = None,
        broker_racks: Mapping[int, str | None] | None = None,
        native: bool | None = None,
        availability_timeout_s: float = 0.0,
        **kwargs: Any,
    ) -> None:
        conf = dict(config or {})
        scheme_name = partitioner.name if isinstance(partitioner, Scheme) else partitioner
        nameable = isinstance(scheme_name, str) and scheme_name in LIBRDKAFKA_PARTITIONERS
        if native is None:
            native = nameable and broker_racks is None and not availability_timeout_s
        if native and availability_timeout_s:
            raise InvalidArgumentError(
                "availability_timeout_s (KIP-794) needs our partitioner: pass native=False "
                "(librdkafka has no such setting)"
            )
        if native:
            if not nameable:
                raise InvalidArgumentError(
                    f"native=True needs a partitioner librdkafka implements, one of "
                    f"{', '.join(sorted(LIBRDKAFKA_PARTITIONERS))}; got {partitioner!r}"
                )
            configured = {**conf, **kwargs}.get("partitioner")
            if configured not in (None, scheme_name):
                raise InvalidArgumentError(
                    f"partitioner={scheme_name!r} but the config says partitioner={configured!r}; give one"
                )
            conf["partitioner"] = scheme_name
            kwargs.pop("partitioner", None)
        super().__init__(conf, **kwargs)
        settings = {**conf, **kwargs}
        self.native: bool = bool(native)
        # confluent's config-level delivery callback: a record we give our own callback must still reach it
        default = settings.get("on_delivery")
        self._default_delivery: DeliveryCallback | None = default if callable(default) else None
        if self.native:
            # librdkafka places every record: the C methods themselves, no Python per record
            self.__dict__["produce"] = confluent_kafka.Producer.produce.__get__(self)
            self.__dict__["produce_batch"] = confluent_kafka.Producer.produce_batch.__get__(self)
        if partitioner is None:
            partitioner = default_partitioner(int(settings.get("batch.size", 1000000)))
        elif not isinstance(partitioner, RecordPartitioner):
            partitioner = scheme_partitioner(partitioner)
        self.partitioner: RecordPartitioner = partitioner
        if metadata_timeout_s is None:
            socket_ms = settings.get("socket.timeout.ms")
            metadata_timeout_s = (
                int(socket_ms) / 1000 if socket_ms is not None else DEFAULT_METADATA_TIMEOUT_S
            )
        self.metadata_timeout_s: float = metadata_timeout_s
        self.bootstrap_servers = str(
            settings.get("bootstrap.servers", settings.get("metadata.broker.list", ""))
        )
        self.broker_racks = dict(broker_racks) if broker_racks else None
        self.metadata = TopicMetadataCache(self._fetch_view, metadata_max_age_s)
        self.availability = PartitionAvailability(availability_timeout_s) if availability_timeout_s else None
        self.router: RecordRouter | None = None
        self._leasing: UniformSticky | None = None
        self._routes: dict[str, tuple[TopicView, float]] = {}  # topic → (view routed, until)
        if not self.native:
            self._install_router()

    def _install_router(self) -> None:
        """Let the C record router take ``produce`` calls it can place exactly (see
        :mod:`kafka_placement.partitioning.routing`) — unless something needs every record in Python."""
        if (
            self.availability is not None  # it counts every record sent
            or type(self.partitioner) is not RecordPartitioner  # a subclass may place keyed records its way
            or not routable(self.partitioner.scheme)
            or type(self).produce is not Producer.produce  # a subclass's own produce stays in charge
        ):
            return
        c_produce = confluent_kafka.Producer.produce.__get__(self)
        self.router = record_router(c_produce, Producer.produce.__get__(self))  # slow path: the Python one
        if self.router is None:  # no C accelerator
            return
        self.__dict__["produce"] = self.router
        self._leasing = unmodified_sticky(self.partitioner.keyless)  # keyless records under a lease

    # --- metadata -------------------------------------------------------------------------------
    def _fetch_view(self, topic: str) -> TopicView:
        try:
            md = self.list_topics(topic, timeout=self.metadata_timeout_s)
        except confluent_kafka.KafkaException as exc:
            err = exc.args[0] if exc.args else exc
            reason = err.str() if hasattr(err, "str") else str(err)
            raise ConnectionFailedError(
                f"no metadata for topic {topic!r} from {self.bootstrap_servers or '(no bootstrap.servers)'} "
                f"within {self.metadata_timeout_s:g} s: {reason}"
            ) from exc
        tmd = md.topics.get(topic)
        if tmd is None or tmd.error is not None or not tmd.partitions:
            reason = (
                "absent" if tmd is None else (str(tmd.error) if tmd.error is not None else "no partitions")
            )
            raise UnknownTopicError(f"topic {topic!r} is unknown to the cluster metadata ({reason})")
        return topic_view_from_metadata(tmd, self.broker_racks)

    def topic_view(self, topic: str) -> TopicView:
        """The cached view of ``topic`` (fetched synchronously only the first time)."""
        return self.metadata.view(topic)

    def refresh_metadata(self, topic: str) -> TopicView:
        """Fetch ``topic``'s metadata now (blocking)."""
        return self.metadata.fetch(topic)

    @property
    def metadata_fetches(self) -> int:
        return self.metadata.fetches

    # --- placement ------------------------------------------------------------------------------
    def _place(self, topic: str, key: Any, value: Any, partition: int | None) -> tuple[int, Any]:
        """``(partition, key as confluent-kafka takes it)`` for one record."""
        key_bytes = check_key(key)  # the bytes every adapter hashes; str as UTF-8, like confluent-kafka
        view = self.metadata.view(topic)
        if self.router is not None:
            self._renew_route(topic, view)
        if partition is not None and partition != -1:
            if (
                isinstance(partition, int)
                and not isinstance(partition, bool)
                and partition >= view.num_partitions
            ):
                view = self.metadata.fetch(topic)  # maybe the topic grew: one metadata call, error path only
            chosen = check_explicit_partition(partition, view.num_partitions)
        else:
            size = (len(key_bytes) if key_bytes else 0) + (len(value) if value is not None else 0)
            leased = self._leasing is not None and self.partitioner.scheme.is_keyless(key_bytes)
            if leased:
                take_lease(self.router, topic, self._leasing)  # type: ignore[arg-type]
            chosen = self.partitioner.partition(view, key_bytes, size, availability=self.availability)
            if leased:
                grant_lease(self.router, topic, self._leasing)  # type: ignore[arg-type]
        if self.availability is not None:
            self.availability.sent(topic, chosen)
        # confluent-kafka takes bytes or str keys only: a bytearray/memoryview goes as the bytes we hashed
        return chosen, (key if key is None or isinstance(key, bytes | str) else key_bytes)

    def _renew_route(self, topic: str, view: TopicView) -> None:
        """Let the router place ``topic``'s keyed records by ``view`` for the next ``ROUTE_TTL_S``."""
        assert self.router is not None
        now = time.monotonic()
        routed = self._routes.get(topic)
        if routed is not None and routed[0] is view and routed[1] > now:
            return
        if self._leasing is not None:  # count its bytes; the next keyless record asks the strategy anew
            take_lease(self.router, topic, self._leasing)
        until = now + routing.ROUTE_TTL_S
        set_route(self.router, topic, self.partitioner.scheme, view.partitions, until)
        self._routes[topic] = (view, until)

    def _on_delivery(self, topic: str, callback: DeliveryCallback | None) -> DeliveryCallback:
        def on_delivery(err: Any, msg: Any) -> None:
            if self.availability is not None and msg is not None and msg.partition() is not None:
                self.availability.delivered(topic, msg.partition())
            if err is not None and err.code() in _STALE_ERRORS:
                self.metadata.mark_stale(topic)
            if callback is not None:
                callback(err, msg)

        return on_delivery

    # --- produce --------------------------------------------------------------------------------
    def produce(  # type: ignore[override]  # the C kwlist's order (on_delivery, callback); the stub swaps them
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int | None = -1,
        on_delivery: DeliveryCallback | None = None,
        callback: DeliveryCallback | None = None,
        timestamp: int = 0,
        headers: Any = None,
    ) -> None:
        """Same signature and semantics as ``confluent_kafka.Producer.produce``; the partition is ours."""
        chosen, sent = self._place(topic, key, value, partition)
        kwargs: dict[str, Any] = {
            "partition": chosen,
            "on_delivery": self._on_delivery(topic, on_delivery or callback or self._default_delivery),
        }
        if timestamp:
            kwargs["timestamp"] = timestamp
        if headers is not None:
            kwargs["headers"] = headers
        super().produce(topic, value, sent, **kwargs)

    def produce_batch(
        self,
        topic: str,
        messages: list[dict[str, Any]],
        partition: int = -1,
        callback: DeliveryCallback | None = None,
        on_delivery: DeliveryCallback | None = None,
    ) -> int:
        """``confluent_kafka.Producer.produce_batch`` with each message placed by our partitioner (a
        message's own ``partition``, else the batch's ``partition``, is validated and kept).

        confluent-kafka hands the whole batch to librdkafka with one partition for all (it does not pass
        ``RD_KAFKA_MSG_F_PARTITION``: a message's own ``partition`` is ignored), so the messages are
        grouped by the partition we chose, in their order, and each group goes as one batch. Returns how
        many were enqueued; a message that was not gets an ``_error`` entry, as with confluent-kafka."""
        batch_callback = on_delivery or callback or self._default_delivery
        groups: dict[int, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
        for message in messages:
            wanted = message.get("partition", -1)
            if wanted is None or wanted == -1:
                wanted = partition
            chosen, sent = self._place(topic, message.get("key"), message.get("value"), wanted)
            own = message.get("on_delivery") or message.get("callback") or batch_callback
            entry = {k: v for k, v in message.items() if k not in ("callback", "on_delivery", "partition")}
            entry.update(key=sent, callback=self._on_delivery(topic, own))
            groups.setdefault(chosen, []).append((message, entry))
        enqueued = 0
        for chosen, pairs in groups.items():
            entries = [entry for _, entry in pairs]
            enqueued += int(super().produce_batch(topic, entries, partition=chosen))
            for message, entry in pairs:
                if "_error" in entry:
                    message["_error"] = entry["_error"]
        return enqueued
