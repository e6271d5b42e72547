"""confluent-kafka wrapper: produce() drop-in, partition from cached metadata, background refresh."""

from __future__ import annotations

import inspect
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import confluent_kafka
import pytest

from kafka_placement.clients.confluent.producer import Producer
from kafka_placement.errors import InvalidPartitionError, KeyTypeError, UnknownTopicError
from kafka_placement.partitioning import RecordPartitioner, RoundRobin, partition_key


@dataclass
class _PartMd:
    id: int
    leader: int
    error: Any = None


@dataclass
class _TopicMd:
    topic: str
    partitions: dict[int, _PartMd]
    error: Any = None


@dataclass
class _ClusterMd:
    topics: dict[str, _TopicMd]


@dataclass
class FakeInner:
    """Stands in for confluent_kafka.Producer: records produce() calls, serves list_topics()."""

    counts: dict[str, int]
    down: set[int] = field(default_factory=set)
    produced: list[dict[str, Any]] = field(default_factory=list)
    list_calls: int = 0
    delay_s: float = 0.0
    fetched: threading.Event = field(default_factory=threading.Event)

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> _ClusterMd:
        self.list_calls += 1
        time.sleep(self.delay_s)
        topics = {}
        for name, n in self.counts.items():
            parts = {p: _PartMd(p, -1 if p in self.down else p % 3) for p in range(n)}
            for p in self.down:
                if p in parts:
                    parts[p].error = "LEADER_NOT_AVAILABLE"
            topics[name] = _TopicMd(name, parts)
        self.fetched.set()
        return _ClusterMd(topics)

    def produce(self, topic: str, value: Any = None, key: Any = None, **kwargs: Any) -> None:
        self.produced.append({"topic": topic, "value": value, "key": key, **kwargs})

    def flush(self, timeout: float = -1) -> int:
        return 0

    def __len__(self) -> int:
        return len(self.produced)


def _producer(inner: FakeInner, **kwargs: Any) -> Producer:
    prod = Producer({"bootstrap.servers": "127.0.0.1:1"}, **kwargs)
    prod._producer = inner  # type: ignore[assignment]
    return prod


def test_signature_matches_confluent_produce() -> None:
    ours = list(inspect.signature(Producer.produce).parameters)[1:]
    # confluent's C kwlist order (positional use must keep working)
    assert ours == ["topic", "value", "key", "partition", "on_delivery", "callback", "timestamp", "headers"]
    assert confluent_kafka.Producer.__doc__ is not None


def test_keyed_partition_and_passthrough() -> None:
    inner = FakeInner({"t": 12})
    prod = _producer(inner)
    seen = []
    prod.produce(
        "t",
        b"v",
        b"user-1",
        on_delivery=lambda e, m: seen.append((e, m)),
        timestamp=123,
        headers=[("h", b"1")],
    )
    prod.produce("t", value=b"v", key="user-1", callback=lambda e, m: None)  # str keys: UTF-8 like confluent
    first, second = inner.produced
    assert first["partition"] == partition_key(b"user-1", 12, "murmur2") == second["partition"]
    assert first["timestamp"] == 123 and first["headers"] == [("h", b"1")]
    first["on_delivery"](None, "msg")
    assert seen == [(None, "msg")]
    assert inner.list_calls == 1
    assert len(prod) == 2 and prod.flush(1) == 0


def test_no_metadata_call_per_record() -> None:
    inner = FakeInner({"t": 6})
    prod = _producer(inner, metadata_max_age_s=3600)
    for i in range(2000):
        prod.produce("t", b"v", f"k{i}".encode())
    assert inner.list_calls == 1


def test_refresh_happens_in_background_and_picks_up_growth() -> None:
    inner = FakeInner({"t": 6})
    prod = _producer(inner, metadata_max_age_s=0.0)
    prod.produce("t", b"v", b"k")
    inner.counts["t"] = 13
    inner.delay_s = 0.3
    inner.fetched.clear()
    start = time.monotonic()
    prod.produce("t", b"v", b"k")  # expired: served from cache while a thread refreshes
    assert time.monotonic() - start < 0.2
    assert inner.produced[-1]["partition"] == partition_key(b"k", 6, "murmur2")
    assert inner.fetched.wait(5)
    deadline = time.monotonic() + 5
    while prod.topic_view("t").num_partitions != 13 and time.monotonic() < deadline:
        time.sleep(0.02)
    prod.metadata_max_age_s = 3600
    prod.produce("t", b"v", b"k")
    assert inner.produced[-1]["partition"] == partition_key(b"k", 13, "murmur2")


def test_delivery_error_marks_stale_and_keyless_avoids_unavailable() -> None:
    inner = FakeInner({"t": 6})
    part = RecordPartitioner("murmur2_random", RoundRobin(0))
    prod = _producer(inner, partitioner=part, metadata_max_age_s=3600)
    prod.produce("t", b"v", None)
    inner.down = {1, 4}
    err = confluent_kafka.KafkaError(confluent_kafka.KafkaError.LEADER_NOT_AVAILABLE)
    inner.produced[-1]["on_delivery"](err, None)
    prod.produce("t", b"v", None)  # triggers the background refresh
    deadline = time.monotonic() + 5
    while prod.topic_view("t").available != (0, 2, 3, 5) and time.monotonic() < deadline:
        time.sleep(0.02)
    got = set()
    for _ in range(12):
        prod.produce("t", b"v", None)
        got.add(inner.produced[-1]["partition"])
    assert got == {0, 2, 3, 5}


def test_explicit_partition_validated_with_javas_message() -> None:
    inner = FakeInner({"t": 3})
    prod = _producer(inner)
    prod.produce("t", b"v", b"k", 2)
    assert inner.produced[-1]["partition"] == 2
    with pytest.raises(
        InvalidPartitionError,
        match=r"^Invalid partition given with record: 3 is not in the range \[0\.\.\.3\]\.$",
    ):
        prod.produce("t", b"v", b"k", partition=3)


def test_scheme_by_name_and_errors() -> None:
    inner = FakeInner({"t": 7})
    prod = _producer(inner, partitioner="consistent_random")
    prod.produce("t", b"v", b"abc")
    assert inner.produced[-1]["partition"] == confluent_kafka.consistent(b"abc", 7)
    with pytest.raises(KeyTypeError, match="got int"):
        prod.produce("t", b"v", 12)
    with pytest.raises(UnknownTopicError, match="'missing' is unknown"):
        prod.produce("missing", b"v", b"k")


def test_constructor_accepts_confluent_styles() -> None:
    by_kwargs = Producer(**{"bootstrap.servers": "127.0.0.1:1", "batch.size": 4096})
    assert by_kwargs.partitioner.keyless.batch_size == 4096  # type: ignore[attr-defined]
    by_dict = Producer({"bootstrap.servers": "127.0.0.1:1", "batch.size": 2048})
    assert by_dict.partitioner.keyless.batch_size == 2048  # type: ignore[attr-defined]
    # librdkafka's own default batch.size when the config does not name one
    by_default = Producer({"bootstrap.servers": "127.0.0.1:1"})
    assert by_default.partitioner.keyless.batch_size == 1000000  # type: ignore[attr-defined]
