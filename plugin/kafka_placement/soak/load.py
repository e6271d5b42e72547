"""The soak's producers: threads sending at a fixed rate through our partitioners, ``acks=all`` with
idempotence, each record's value ``{"p": producer, "s": sequence, "pp": predicted partition}``; every
acknowledgement is logged as an :class:`~kafka_placement.soak.events.Ack`.

The predicted partition of a keyed record is our scheme's index of its key (``Scheme.index``), computed
here before the send; the partition Kafka acknowledged is the client's. Keyless records predict nothing.
"""

from __future__ import annotations

import collections
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafka_placement.partitioning.schemes import get_scheme
from kafka_placement.soak.events import Ack, Event

__all__ = ["FULL_PRODUCERS", "PRODUCERS", "ProducerSpec", "ProducerThread", "record_identity"]


@dataclass(frozen=True)
class ProducerSpec:
    name: str
    client: str  # "kafka-python", "confluent" or "aiokafka"
    scheme: str  # our scheme name (keyed placement)
    keyed: bool
    native: bool = False  # confluent: librdkafka places the records itself


#: How long a producer's final flush waits (its delivery timeout, 120 s, bounds every record).
FLUSH_S = 120.0

#: kafka-python (Java's default: murmur2, uniform sticky keyless), confluent native murmur2, confluent
#: through our Python path (jump keyed; Java's keyless stickiness).
PRODUCERS = (
    ProducerSpec("kp-java-keyed", "kafka-python", "murmur2_random", keyed=True),
    ProducerSpec("kp-java-keyless", "kafka-python", "murmur2_random", keyed=False),
    ProducerSpec("cf-native-keyed", "confluent", "murmur2_random", keyed=True, native=True),
    ProducerSpec("cf-jump-keyed", "confluent", "jump", keyed=True),
    ProducerSpec("cf-sticky-keyless", "confluent", "murmur2_random", keyed=False),
)
#: The full profile adds aiokafka through our partitioner (Java's default: murmur2 keyed, uniform sticky
#: keyless) on our ``AIOKafkaProducer``; the quick profile's producers stay what CI ran.
FULL_PRODUCERS = (
    *PRODUCERS,
    ProducerSpec("aio-java-keyed", "aiokafka", "murmur2_random", keyed=True),
    ProducerSpec("aio-java-keyless", "aiokafka", "murmur2_random", keyed=False),
)


def record_identity(value: bytes | None) -> tuple[str, int]:
    """(producer, sequence) of a record's value as :meth:`ProducerThread._record` wrote it: how the
    members and the readback name what they read."""
    body = json.loads(value or b"{}")
    return str(body["p"]), int(body["s"])


class ProducerThread(threading.Thread):
    """Sends ``rate`` records per second until :meth:`stop`; ``sent``/``acked``/``failed`` counted."""

    def __init__(
        self,
        spec: ProducerSpec,
        topic: str,
        partitions: int,
        rate: float,
        connection: dict[str, Any],
        write: Callable[[Event], None],
        client_log: logging.Logger | None = None,
    ) -> None:
        super().__init__(name=f"soak-{spec.name}", daemon=True)
        self.spec, self.topic, self.partitions, self.rate = spec, topic, partitions, rate
        self.connection, self.write = connection, write
        self.client_log = client_log  # librdkafka's log lines (else its own: stderr)
        self.sent = self.acked = 0
        #: failed records by the client's reason (an exception's class, librdkafka's error name): what a
        #: stalled producer was told (seed 51's aiokafka producer failed 74,906 records, reasons unknown)
        self.failed_by: collections.Counter[str] = collections.Counter()
        self.unresolved_at_stop = 0  # records neither acknowledged nor failed when the producer stopped
        self._stop_requested = threading.Event()
        self._scheme = get_scheme(spec.scheme)

    def stop(self) -> None:
        self._stop_requested.set()

    def _record(self, sequence: int) -> tuple[bytes | None, bytes, int | None]:
        key = f"key-{sequence % 997}".encode() if self.spec.keyed else None
        predicted = self._scheme.index(key, self.partitions) if key is not None else None
        value = json.dumps({"p": self.spec.name, "s": sequence, "pp": predicted}).encode()
        return key, value, predicted

    def _ack(
        self, sequence: int, key: bytes | None, predicted: int | None, partition: int, offset: int
    ) -> None:
        self.acked += 1
        self.write(
            Ack(
                self.spec.name,
                sequence,
                key.decode() if key else None,
                predicted,
                partition,
                offset,
                time.time(),
            )
        )

    def run(self) -> None:  # pragma: no cover - live (integration tests)
        if self.spec.client == "kafka-python":
            self._run_kafka_python()
        elif self.spec.client == "aiokafka":
            import asyncio

            asyncio.run(self._run_aiokafka())
        else:
            self._run_confluent()

    def _paced(self) -> Any:
        started, sequence = time.monotonic(), 0
        while not self._stop_requested.is_set():
            due = started + sequence / self.rate
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(min(delay, 0.5))
                continue
            yield sequence
            sequence += 1

    def _run_kafka_python(self) -> None:  # pragma: no cover - live
        from kafka.errors import KafkaTimeoutError

        from kafka_placement.clients.kafka_python.partitioners import (
            JavaDefaultPartitioner,
            SchemePartitioner,
        )
        from kafka_placement.clients.kafka_python.producer import KafkaProducer

        partitioner = (
            JavaDefaultPartitioner()
            if self.spec.scheme == "murmur2_random"
            else SchemePartitioner(self.spec.scheme)
        )
        producer = KafkaProducer(
            **self.connection,
            acks="all",
            enable_idempotence=True,
            linger_ms=5,
            partitioner=partitioner,
            request_timeout_ms=15000,
            retries=2**31 - 1,
            delivery_timeout_ms=120000,
        )
        for sequence in self._paced():
            key, value, predicted = self._record(sequence)
            future = producer.send(self.topic, value=value, key=key)
            self.sent += 1
            future.add_callback(
                lambda md, s=sequence, k=key, p=predicted: self._ack(s, k, p, md.partition, md.offset)
            )
            future.add_errback(lambda exc: self._failed(type(exc).__name__))
        try:
            producer.flush(timeout=FLUSH_S)
        except KafkaTimeoutError:
            # records neither acknowledged nor failed past the delivery timeout: a stuck sender (seen
            # after a 5-minute outage at load ~130). kafka-python's close(timeout) flushes first and
            # raises the same; abort the stuck batches (they fail, and are counted) so it can close.
            self.unresolved_at_stop = self._unresolved
            producer._sender.force_close()
            producer._sender.join(30)
        try:
            producer.close(timeout=30)
        except KafkaTimeoutError:
            self.unresolved_at_stop = self._unresolved

    @property
    def _unresolved(self) -> int:
        """Records sent and neither acknowledged nor failed yet."""
        return self.sent - self.acked - self.failed

    @property
    def failed(self) -> int:
        """Records the client reported as not written."""
        return sum(self.failed_by.values())

    def _failed(self, reason: str) -> None:
        self.failed_by[reason] += 1

    def _run_confluent(self) -> None:  # pragma: no cover - live
        from kafka_placement.clients.confluent.producer import Producer

        # debug "eos": librdkafka's idempotence decisions in librdkafka.log — among them DUPSEQ, a batch
        # acknowledged without an offset (the broker said its sequence was already written); session 16's
        # 30-minute run had two such records missing from the topic
        config = {
            **self.connection,
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 5,
            "debug": "eos",
        }
        if self.client_log is not None:
            config["logger"] = self.client_log
        producer = Producer(config, partitioner=self.spec.scheme, native=self.spec.native)
        for sequence in self._paced():
            key, value, predicted = self._record(sequence)

            def delivered(
                err: Any, msg: Any, s: int = sequence, k: bytes | None = key, p: int | None = predicted
            ) -> None:
                if err is None:
                    self._ack(s, k, p, msg.partition(), msg.offset())
                else:
                    self._failed(str(err.name()))

            producer.produce(self.topic, value=value, key=key, on_delivery=delivered)
            self.sent += 1
            producer.poll(0)
        self.unresolved_at_stop = producer.flush(FLUSH_S)  # librdkafka: the messages still queued

    async def _run_aiokafka(self) -> None:  # pragma: no cover - live
        """``connection`` is aiokafka's keyword arguments (``ConnectionSettings.aiokafka()``: TLS through an
        ``ssl.SSLContext``). aiokafka has no delivery timeout: a batch expires after ``request_timeout_ms``
        (its records fail, and are counted), so it is set to the other producers' 120 s."""
        import asyncio

        from kafka_placement.clients.aiokafka.partitioner import PlacementPartitioner
        from kafka_placement.clients.aiokafka.producer import AIOKafkaProducer

        settings = {**self.connection, "request_timeout_ms": 120000}
        producer = AIOKafkaProducer(
            **settings, acks="all", enable_idempotence=True, linger_ms=5, partitioner=PlacementPartitioner()
        )
        await producer.start()
        pending: set[asyncio.Future[Any]] = set()

        def done(future: asyncio.Future[Any], s: int, k: bytes | None, p: int | None) -> None:
            pending.discard(future)
            if future.cancelled():
                self._failed("cancelled")
            elif (error := future.exception()) is not None:
                self._failed(type(error).__name__)
            else:
                md = future.result()
                self._ack(s, k, p, md.partition, md.offset)

        try:
            for sequence in self._paced_async():
                if isinstance(sequence, float):  # not due yet: let the loop deliver meanwhile
                    await asyncio.sleep(sequence)
                    continue
                key, value, predicted = self._record(sequence)
                try:
                    future = await producer.send(self.topic, value=value, key=key)
                except Exception as error:  # raised before the record is queued (no metadata in time)
                    self.sent += 1
                    self._failed(f"{type(error).__name__} (before queued)")
                    continue
                self.sent += 1
                pending.add(future)
                future.add_done_callback(lambda f, s=sequence, k=key, p=predicted: done(f, s, k, p))
            if pending:
                await asyncio.wait(set(pending), timeout=FLUSH_S)
            self.unresolved_at_stop = self._unresolved
        finally:
            await producer.stop()

    def _paced_async(self) -> Any:
        """:meth:`_paced` for a coroutine: yields a sequence number when one is due, else the seconds to
        wait (the coroutine awaits them, so acknowledgements are delivered meanwhile)."""
        started, sequence = time.monotonic(), 0
        while not self._stop_requested.is_set():
            delay = started + sequence / self.rate - time.monotonic()
            if delay > 0:
                yield min(delay, 0.5)
                continue
            yield sequence
            sequence += 1
