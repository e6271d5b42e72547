"""Per-topic partition metadata for the confluent producer: fetched once, refreshed off the hot path.

- the first record of a topic fetches its metadata once (blocking, bounded by the fetch's timeout);
  afterwards the hot path never waits: entries older than ``max_age_s`` are refreshed by a background
  thread while records keep using the cached view;
- :meth:`TopicMetadataCache.mark_stale` (called on a delivery report with a partition/leader error)
  makes the next record start that refresh at once — partition-count changes and partitions that lost
  their leader are picked up without a metadata call per record.

The fetch function is the only I/O: ``fetch(topic) -> TopicView``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kafka_placement.partitioning.topicview import TopicView

__all__ = ["TopicMetadataCache", "topic_view_from_metadata"]


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


class TopicMetadataCache:
    """Topic → :class:`TopicView`, served from memory; see the module docstring."""

    def __init__(self, fetch: Callable[[str], TopicView], max_age_s: float = 5.0) -> None:
        self.fetch_view = fetch
        self.max_age_s = max_age_s
        self.fetches = 0  # observable: how many metadata requests were made
        self._entries: dict[str, _Entry] = {}
        self._refreshing: set[str] = set()
        self._lock = threading.Lock()

    def fetch(self, topic: str) -> TopicView:
        """Fetch ``topic`` now (blocking) and cache it."""
        self.fetches += 1
        view = self.fetch_view(topic)
        self._entries[topic] = _Entry(view, time.monotonic())
        return view

    def view(self, topic: str) -> TopicView:
        """The cached view (fetched synchronously only the first time)."""
        entry = self._entries.get(topic)
        if entry is None:
            return self.fetch(topic)
        if entry.stale or time.monotonic() - entry.fetched_at > self.max_age_s:
            self._refresh_in_background(topic)
        return entry.view

    def mark_stale(self, topic: str) -> None:
        entry = self._entries.get(topic)
        if entry is not None:
            self._entries[topic] = _Entry(entry.view, entry.fetched_at, True)

    def _refresh_in_background(self, topic: str) -> None:
        with self._lock:
            if topic in self._refreshing:
                return
            self._refreshing.add(topic)

        def run() -> None:
            try:
                self.fetch(topic)
            except Exception:  # keep serving the cached view; the next expiry retries
                entry = self._entries.get(topic)
                if entry is not None:
                    self._entries[topic] = _Entry(entry.view, time.monotonic(), entry.stale)
            finally:
                with self._lock:
                    self._refreshing.discard(topic)

        threading.Thread(target=run, name=f"kafka-placement-metadata-{topic}", daemon=True).start()
