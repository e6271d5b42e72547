"""The per-topic metadata cache: one blocking fetch, then refreshes off the hot path."""

from __future__ import annotations

import threading
import time

from kafka_placement.clients.confluent.topic_metadata import TopicMetadataCache
from kafka_placement.partitioning.topicview import TopicView


class Source:
    def __init__(self, n: int) -> None:
        self.n = n
        self.delay_s = 0.0
        self.calls = 0
        self.fetched = threading.Event()

    def __call__(self, topic: str) -> TopicView:
        self.calls += 1
        time.sleep(self.delay_s)
        self.fetched.set()
        return TopicView(topic, tuple(range(self.n)), tuple(range(self.n)), {})


def test_expired_entries_are_served_while_a_thread_refreshes() -> None:
    source = Source(6)
    cache = TopicMetadataCache(source, max_age_s=0.0)
    assert cache.view("t").num_partitions == 6
    source.n, source.delay_s = 13, 0.3
    source.fetched.clear()
    started = time.monotonic()
    assert cache.view("t").num_partitions == 6  # the cached view, at once
    assert time.monotonic() - started < 0.2
    assert source.fetched.wait(5)
    deadline = time.monotonic() + 5
    while cache.view("t").num_partitions != 13 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert cache.view("t").num_partitions == 13


def test_fresh_entries_cost_nothing_and_stale_ones_refresh_once() -> None:
    source = Source(3)
    cache = TopicMetadataCache(source, max_age_s=3600)
    for _ in range(1000):
        cache.view("t")
    assert source.calls == 1 == cache.fetches
    cache.mark_stale("t")
    cache.view("t")
    deadline = time.monotonic() + 5
    while source.calls < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)
    cache.view("t")
    assert source.calls == 2  # the refresh cleared the stale mark


def test_a_failed_refresh_keeps_the_cached_view() -> None:
    source = Source(4)
    cache = TopicMetadataCache(source, max_age_s=0.0)
    cache.view("t")

    def broken(topic: str) -> TopicView:
        raise ConnectionError("down")

    cache.fetch_view = broken
    for _ in range(20):
        assert cache.view("t").num_partitions == 4
        time.sleep(0.01)
