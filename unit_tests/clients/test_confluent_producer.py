"""The confluent Producer subclass: a real ``confluent_kafka.Producer`` whose records carry our partition.

The broker is unreachable (127.0.0.1:1) and topic metadata comes from a stand-in ``fetch_view``; records
then time out in librdkafka's queue within ``message.timeout.ms`` and their delivery reports show the
partition each record was given — the one librdkafka would have sent it to.
"""

from __future__ import annotations

import inspect
import random
import time
from dataclasses import dataclass, field
from typing import Any

import confluent_kafka
import pytest

from kafka_placement.clients.confluent.producer import DEFAULT_METADATA_TIMEOUT_S, Producer
from kafka_placement.errors import (
    ConnectionFailedError,
    InvalidArgumentError,
    InvalidPartitionError,
    KeyTypeError,
    UnknownTopicError,
)
from kafka_placement.partitioning import RecordPartitioner, RoundRobin, native, partition_key, routing
from kafka_placement.partitioning.sticky import UniformSticky
from kafka_placement.partitioning.topicview import TopicView

UNREACHABLE = {"bootstrap.servers": "127.0.0.1:1", "message.timeout.ms": 100, "log_level": 0}


@dataclass
class Cluster:
    """Serves topic views: partition counts and the partitions without a leader."""

    counts: dict[str, int]
    down: set[int] = field(default_factory=set)
    calls: int = 0

    def view(self, topic: str) -> TopicView:
        self.calls += 1
        if topic not in self.counts:
            raise UnknownTopicError(f"topic {topic!r} is unknown to the cluster metadata (absent)")
        parts = tuple(range(self.counts[topic]))
        return TopicView(topic, parts, tuple(p for p in parts if p not in self.down), {})


@dataclass
class Reports:
    got: list[tuple[Any, int, Any]] = field(default_factory=list)

    def __call__(self, err: Any, msg: Any) -> None:
        self.got.append((err, msg.partition(), msg.key()))

    def wait(self, producer: Producer, count: int) -> list[tuple[Any, int, Any]]:
        deadline = time.monotonic() + 10
        while len(self.got) < count and time.monotonic() < deadline:
            producer.poll(0.05)
        assert len(self.got) == count, self.got
        return self.got


def producer(counts: dict[str, int], **kwargs: Any) -> tuple[Producer, Cluster]:
    prod = Producer(UNREACHABLE, **kwargs)
    cluster = Cluster(counts)
    prod.metadata.fetch_view = cluster.view
    return prod, cluster


def test_it_is_a_confluent_producer_and_a_context_manager() -> None:
    prod, _ = producer({"t": 3})
    assert isinstance(prod, confluent_kafka.Producer)
    with Producer(UNREACHABLE) as inside:
        assert isinstance(inside, Producer)


def test_signature_matches_confluent_produce() -> None:
    ours = list(inspect.signature(Producer.produce).parameters)[1:]
    # confluent's C kwlist order (positional use must keep working)
    assert ours == ["topic", "value", "key", "partition", "on_delivery", "callback", "timestamp", "headers"]


def test_keyed_records_get_our_partition_and_the_rest_passes_through() -> None:
    prod, cluster = producer({"t": 12})
    reports = Reports()
    prod.produce("t", b"v", b"user-1", on_delivery=reports, timestamp=123, headers=[("h", b"1")])
    prod.produce("t", value=b"v", key="user-1", callback=reports)  # str keys: UTF-8, like confluent
    prod.produce("t", b"v", bytearray(b"user-2"), on_delivery=reports)
    got = reports.wait(prod, 3)
    assert [p for _, p, _ in got] == [partition_key(b"user-1", 12)] * 2 + [partition_key(b"user-2", 12)]
    assert [k for _, _, k in got] == [b"user-1", b"user-1", b"user-2"]
    assert all(err.code() == confluent_kafka.KafkaError._MSG_TIMED_OUT for err, _, _ in got)
    assert cluster.calls == 1


def test_no_metadata_call_per_record() -> None:
    prod, cluster = producer({"t": 6}, metadata_max_age_s=3600)
    for i in range(2000):
        prod.produce("t", b"v", f"k{i}".encode())
    assert cluster.calls == 1 and prod.metadata_fetches == 1
    prod.purge()


def test_produce_batch_places_every_message() -> None:
    prod, _ = producer({"t": 7})
    reports = Reports()
    keys = [f"batch-{i}".encode() for i in range(40)]
    messages = [{"key": k, "value": b"v"} for k in keys] + [{"key": b"pinned", "value": b"v", "partition": 5}]
    assert prod.produce_batch("t", messages, on_delivery=reports) == 41
    got = reports.wait(prod, 41)
    placed = {k: p for _, p, k in got}
    assert placed == {**{k: partition_key(k, 7) for k in keys}, b"pinned": 5}
    with pytest.raises(InvalidPartitionError, match=r"9 is not in the range \[0\.\.\.7\]"):
        prod.produce_batch("t", [{"key": b"k", "value": b"v", "partition": 9}])


def test_delivery_errors_refresh_metadata_and_keyless_records_avoid_leaderless_partitions() -> None:
    prod, cluster = producer(
        {"t": 6}, partitioner=RecordPartitioner("murmur2_random", RoundRobin(0)), metadata_max_age_s=3600
    )
    reports = Reports()
    prod.produce("t", b"v", None, on_delivery=reports)
    cluster.down = {1, 4}
    reports.wait(prod, 1)  # _MSG_TIMED_OUT: the topic's view is marked stale
    prod.produce("t", b"v", None)  # starts the background refresh
    deadline = time.monotonic() + 5
    while prod.topic_view("t").available != (0, 2, 3, 5) and time.monotonic() < deadline:
        time.sleep(0.02)
    got = set()
    for _ in range(12):
        got.add(prod._place("t", None, b"v", -1)[0])
    assert got == {0, 2, 3, 5}
    prod.purge()


def test_explicit_partition_validated_with_javas_message() -> None:
    prod, _ = producer({"t": 3})
    reports = Reports()
    prod.produce("t", b"v", b"k", 2, on_delivery=reports)
    assert reports.wait(prod, 1)[0][1] == 2
    with pytest.raises(
        InvalidPartitionError,
        match=r"^Invalid partition given with record: 3 is not in the range \[0\.\.\.3\]\.$",
    ):
        prod.produce("t", b"v", b"k", partition=3)


def test_scheme_by_name_and_errors() -> None:
    prod, _ = producer({"t": 7}, partitioner="consistent_random", native=False)
    assert prod._place("t", b"abc", b"v", -1)[0] == confluent_kafka.consistent(b"abc", 7)
    with pytest.raises(KeyTypeError, match="got int"):
        prod.produce("t", b"v", 12)
    with pytest.raises(UnknownTopicError, match="'missing' is unknown"):
        prod.produce("missing", b"v", b"k")


def test_an_unreachable_cluster_fails_the_first_record_within_the_bound() -> None:
    prod = Producer(UNREACHABLE, metadata_timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(
        ConnectionFailedError, match=r"no metadata for topic 't' from 127\.0\.0\.1:1 within 0\.5 s"
    ):
        prod.produce("t", b"v", b"k")
    assert time.monotonic() - started < 3
    assert Producer({**UNREACHABLE, "socket.timeout.ms": 700}).metadata_timeout_s == 0.7
    assert Producer(UNREACHABLE).metadata_timeout_s == DEFAULT_METADATA_TIMEOUT_S


def test_constructor_accepts_confluent_styles() -> None:
    by_kwargs = Producer(**{"bootstrap.servers": "127.0.0.1:1", "log_level": 0, "batch.size": 4096})
    assert by_kwargs.partitioner.keyless.batch_size == 4096  # type: ignore[attr-defined]
    by_dict = Producer({"bootstrap.servers": "127.0.0.1:1", "log_level": 0, "batch.size": 2048})
    assert by_dict.partitioner.keyless.batch_size == 2048  # type: ignore[attr-defined]
    # librdkafka's own default batch.size when the config does not name one
    by_default = Producer({"bootstrap.servers": "127.0.0.1:1", "log_level": 0})
    assert by_default.partitioner.keyless.batch_size == 1000000  # type: ignore[attr-defined]


def test_librdkafka_schemes_by_name_run_natively() -> None:
    prod = Producer(UNREACHABLE, partitioner="murmur2_random")
    assert prod.native and "produce" in vars(prod) and "produce_batch" in vars(prod)  # confluent's C methods
    assert prod.produce.__qualname__ == confluent_kafka.Producer.produce.__qualname__
    for partitioner in (None, "jump", RecordPartitioner("murmur2_random", RoundRobin(0))):
        assert not Producer(UNREACHABLE, partitioner=partitioner).native
    assert not Producer(UNREACHABLE, partitioner="fnv1a", native=False).native
    assert not Producer(UNREACHABLE, partitioner="fnv1a", broker_racks={0: "r1"}).native  # rack-aware: ours
    with pytest.raises(InvalidArgumentError, match="native=True needs a partitioner librdkafka implements"):
        Producer(UNREACHABLE, partitioner="jump", native=True)
    with pytest.raises(
        InvalidArgumentError, match="partitioner='fnv1a' but the config says partitioner='random'"
    ):
        Producer({**UNREACHABLE, "partitioner": "random"}, partitioner="fnv1a")


def test_kip794_keyless_records_skip_partitions_that_stopped_taking_data() -> None:
    prod, _ = producer(
        {"t": 4},
        partitioner=RecordPartitioner("murmur2_random", RoundRobin(0)),
        availability_timeout_s=0.2,
        metadata_max_age_s=3600,
    )
    first = [prod._place("t", None, b"v", -1)[0] for _ in range(2)]  # each counted as sent
    assert first == [0, 1]
    time.sleep(0.3)  # nothing delivered (no broker): partitions 0 and 1 have stalled past the timeout
    later = [prod._place("t", None, b"v", -1)[0] for _ in range(4)]
    assert set(later) == {2, 3}
    assert prod._place("t", b"k", b"v", -1)[0] == partition_key(b"k", 4)  # keyed records: unaffected
    prod.availability.delivered("t", 0)  # type: ignore[union-attr]  # partition 0 moves again
    assert 0 in {prod._place("t", None, b"v", -1)[0] for _ in range(6)}
    with pytest.raises(
        InvalidArgumentError, match=r"availability_timeout_s \(KIP-794\) needs our partitioner"
    ):
        Producer(UNREACHABLE, partitioner="murmur2_random", native=True, availability_timeout_s=1.0)
    assert not Producer(UNREACHABLE, partitioner="murmur2_random", availability_timeout_s=1.0).native


@pytest.mark.skipif(native.native_module() is None, reason="the C accelerator is not built")
@pytest.mark.parametrize(
    ("scheme", "route_ttl_s"),
    [
        ("murmur2_random", 0.5),
        ("murmur2", 0.5),
        ("consistent_random", 0.5),
        ("fnv1a", 0.5),
        ("jump", 0.5),
        ("murmur2_random", 0.0002),
    ],  # routes renewed (and leases taken back) every few records
)
def test_routed_records_land_where_the_python_path_puts_them(
    scheme: str, route_ttl_s: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The C router (keyed records, keyless ones under a sticky lease) against the same producer built
    with the C accelerator off, record by record: every record's delivery report names its partition."""
    monkeypatch.setattr(routing, "ROUTE_TTL_S", route_ttl_s)
    rng = random.Random(7)
    records = []
    for i in range(3000):
        size = rng.randrange(0, 120)
        kind = rng.random()
        key: bytes | str | None = (
            None
            if kind < 0.4
            else b""
            if kind < 0.45
            else f"user-{rng.randrange(500)}"
            if kind < 0.6
            else f"user-{rng.randrange(500)}".encode()
        )
        records.append((f"{i:05d}".encode() + b"x" * size, key))

    def run(seed: int) -> tuple[dict[bytes, int], Producer]:
        reports = Reports()
        partitioner = RecordPartitioner(scheme, UniformSticky(300, rng=random.Random(seed)))
        prod = Producer(
            {**UNREACHABLE, "on_delivery": reports}, partitioner=partitioner, metadata_max_age_s=3600
        )
        cluster = Cluster({"t": 9}, down={4})
        prod.metadata.fetch_view = cluster.view
        for value, key in records:
            prod.produce("t", value, key)
        got = reports.wait(prod, len(records))
        return {
            msg_value: p for msg_value, p in zip((v for v, _ in records), [p for _, p, _ in got], strict=True)
        }, prod

    routed, with_router = run(11)
    assert with_router.router is not None and with_router.router.fast > (2000 if route_ttl_s > 0.1 else 0)
    with native.numpy_only():
        expected, without = run(11)
    assert without.router is None
    assert routed == expected
