"""KIP-794 ``partitioner.availability.timeout.ms``: keyless records skip partitions that stopped taking data.

Java's producer treats a partition as unavailable for its keyless (uniform sticky) choice when its leader has
had data ready for longer than the timeout without the data going out. A client adapter reports what it can
see — a record handed to the client for a partition (:meth:`PartitionAvailability.sent`) and a delivery
report for it (:meth:`PartitionAvailability.delivered`) — and a partition whose oldest undelivered record has
waited longer than the timeout since the last delivery is skipped (:meth:`PartitionAvailability.filter`).
Stated difference: Java measures per leader (all its partitions at once), this per partition. Keyed records
are unaffected, as in Java. Timeout 0 = off (Java's default).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.partitioning.topicview import TopicView


class PartitionAvailability:
    """Per (topic, partition): records waiting for a delivery report, and since when nothing moved."""

    def __init__(self, timeout_s: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        if (
            isinstance(timeout_s, bool)
            or not isinstance(timeout_s, int | float)
            or not 0 <= timeout_s <= 3600
        ):
            raise InvalidArgumentError(
                f"availability timeout must be in [0, 3600] seconds, got {timeout_s!r}"
            )
        self.timeout_s = float(timeout_s)
        self.clock = clock
        self._pending: dict[tuple[str, int], int] = {}
        self._since: dict[tuple[str, int], float] = {}  # last progress: first send while idle, or a report
        self._lock = threading.Lock()

    def sent(self, topic: str, partition: int) -> None:
        key = (topic, partition)
        with self._lock:
            waiting = self._pending.get(key, 0)
            if waiting == 0:
                self._since[key] = self.clock()
            self._pending[key] = waiting + 1

    def delivered(self, topic: str, partition: int) -> None:
        """A delivery report (success or failure) for one record: the partition's queue moved."""
        key = (topic, partition)
        with self._lock:
            waiting = self._pending.get(key, 0)
            if waiting <= 1:
                self._pending.pop(key, None)
                self._since.pop(key, None)
            else:
                self._pending[key] = waiting - 1
                self._since[key] = self.clock()

    def stalled(self, topic: str) -> frozenset[int]:
        """Partitions of ``topic`` with records waiting longer than the timeout since the last progress."""
        if self.timeout_s <= 0:
            return frozenset()
        now = self.clock()
        with self._lock:
            return frozenset(
                p for (t, p), since in self._since.items() if t == topic and now - since > self.timeout_s
            )

    def filter(self, view: TopicView) -> TopicView:
        """``view`` without its stalled partitions among the available ones (unchanged if none is left)."""
        stalled = self.stalled(view.topic)
        if not stalled:
            return view
        kept = tuple(p for p in view.available if p not in stalled)
        if not kept:
            return view
        return TopicView(view.topic, view.partitions, kept, view.leader_racks)
