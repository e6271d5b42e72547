"""A partition librdkafka keeps assigned and never fetches, found from its statistics and reported as one
clear error instead of a member that silently consumes nothing.

Seen in a 30-minute soak (seed 39, docs/reliability.md): after broker 0 left the cluster's metadata and
came back and partition 0's leader moved away and back, librdkafka 2.16.0 kept partition 0 of our
``Consumer`` ``active`` with leader 0 and delivered none of its records for the run's last 6.5 minutes —
its high watermark stayed unknown, i.e. no fetch of it was answered without an error — while the
member's eleven other partitions, some led by broker 0 too, were fetched to their ends. librdkafka offers
no call that makes it fetch that partition again; a new consumer does (the group gives the partition to
a member whose librdkafka starts afresh).

Seen again in the next run (seed 40): after overlapping broker faults, both members of a group kept
their librdkafka with no broker connection that ever came up (every broker handle in ``INIT``, the
group handle querying for its coordinator for 10 minutes) and every assigned partition ``active`` with
leader -1 for the run's last 7 minutes, while kafka-python, running the same members' group, reached
the cluster. The first rule waited for a known leader and said nothing.

Seen a third time (seed 50, PLAINTEXT): the same wedge (brokers 0 and 2 gone from librdkafka's broker
list, the other four in ``INIT``, twelve partitions ``active`` with leader -1 for 262 s until the run's
end) in a member that had fetched those partitions before. librdkafka keeps a partition's statistics
across assignments, so each still showed the high watermark of its earlier fetches, and the rule, which
read a high watermark as an answer, said nothing.

:class:`FetchStallWatch` is the rule, sans-I/O: per statistics document (:func:`fetch_states`), a
partition librdkafka fetches is *stalled* once, for ``timeout_s`` without a break, it has been
``active`` and either with no high watermark (``hi_offset`` < 0: no answer, or only errors), whatever
its leader — known, moving or unknown — or with no leader at all (``leader`` -1: nothing can fetch it,
whatever high watermark an earlier assignment left in the statistics). An answer to a partition with a
leader, another fetch state, a revocation or a pause by the application starts it over. A healthy
partition gets a high watermark with its first fetch answer, within ``fetch.wait.max.ms`` (500 ms by
default), records or not; a leader election takes seconds, far less than the timeout. A partition that
truly has no leader for the whole timeout is reported too: a new consumer cannot fetch it either, but it
costs a rejoin, and librdkafka's wedge looks the same.

:class:`FetchStallMonitor` is the adapter the ``Consumer`` uses: it asks librdkafka for statistics every
:data:`STATS_INTERVAL_MS` (the application's own ``stats_cb`` still gets them, see
:class:`~.statistics_tap.StatisticsTap`) and keeps the :class:`~kafka_placement.errors.FetchStalledError`
the ``Consumer`` then raises from ``poll()``/``consume()``.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from kafka_placement.clients.confluent.statistics_tap import StatisticsTap
from kafka_placement.errors import FetchStalledError, InvalidArgumentError

log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_STALL_TIMEOUT_S",
    "STATS_INTERVAL_MS",
    "FetchStallMonitor",
    "FetchStallWatch",
    "PartitionFetch",
    "Stall",
    "fetch_states",
]

#: How long a partition may stay assigned and unanswered before the Consumer says so: well beyond a
#: leader election (a fenced broker's partitions move within its broker session, 9 s by default)
DEFAULT_STALL_TIMEOUT_S = 120.0
#: How often librdkafka reports to the monitor: the error comes at most this much after the timeout
STATS_INTERVAL_MS = 5000

Partition = tuple[str, int]


@dataclass(frozen=True)
class PartitionFetch:
    """One partition as a statistics document shows it: ``fetch_state``, ``leader`` (-1: unknown) and
    ``hi_offset`` (the high watermark of its last fetch answer; < 0 when none or an error)."""

    fetch_state: str
    leader: int
    hi_offset: int


@dataclass(frozen=True)
class Stall:
    partition: Partition
    leader: int  # the latest, -1: unknown
    seconds: float

    @property
    def named(self) -> str:
        leader = "leader unknown" if self.leader < 0 else f"leader {self.leader}"
        return f"{self.partition[0]}[{self.partition[1]}] ({leader}, {self.seconds:.0f} s)"


def fetch_states(text: str) -> dict[Partition, PartitionFetch]:
    """The partitions of one librdkafka statistics document (STATISTICS.md: ``topics`` → ``partitions``;
    the ``-1`` entry, librdkafka's unassigned-messages queue, left out)."""
    doc = json.loads(text)
    out: dict[Partition, PartitionFetch] = {}
    for topic, t in (doc.get("topics") or {}).items():
        for p in (t.get("partitions") or {}).values():
            partition = int(p["partition"])
            if partition >= 0:
                out[(str(topic), partition)] = PartitionFetch(
                    str(p["fetch_state"]), int(p["leader"]), int(p["hi_offset"])
                )
    return out


class FetchStallWatch:
    """See the module docstring. ``timeout_s``: how long a partition may stay unanswered."""

    def __init__(self, timeout_s: float) -> None:
        if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)):
            raise InvalidArgumentError(f"fetch stall timeout must be a number of seconds, got {timeout_s!r}")
        if not (math.isfinite(timeout_s) and 1 <= timeout_s <= 3600):
            raise InvalidArgumentError(f"fetch stall timeout must be in [1, 3600] s, got {timeout_s!r}")
        self.timeout_s = float(timeout_s)
        self._since: dict[Partition, float] = {}  # unanswered since

    def observe(
        self, at: float, partitions: Mapping[Partition, PartitionFetch], paused: Collection[Partition] = ()
    ) -> list[Stall]:
        """One document's partitions at ``at`` (seconds, monotonic); ``paused``: the application's.
        Returns the partitions stalled for ``timeout_s`` or longer."""
        stalls = []
        for partition in list(self._since):
            if partition not in partitions:
                del self._since[partition]
        for partition, fetch in partitions.items():
            unanswered = fetch.fetch_state == "active" and (fetch.hi_offset < 0 or fetch.leader < 0)
            if not unanswered or partition in paused:
                self._since.pop(partition, None)
                continue
            since = self._since.setdefault(partition, at)
            if at - since >= self.timeout_s:
                stalls.append(Stall(partition, fetch.leader, round(at - since, 1)))
        return stalls


class FetchStallMonitor:
    """The ``Consumer``'s adapter: :meth:`settings` for librdkafka's configuration, then each document
    read on the application's thread (inside ``poll()``/``consume()``); ``error`` once a partition
    stalled (the ``Consumer`` raises it). ``paused``: the partitions the application paused, kept by the
    ``Consumer``."""

    def __init__(
        self,
        timeout_s: float,
        group: str,
        paused: Collection[Partition],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.watch = FetchStallWatch(timeout_s)
        self._group = group
        self._paused = paused
        self._clock = clock
        self._tap = StatisticsTap(self.on_stats, STATS_INTERVAL_MS, guard="fetch stall watch", clock=clock)
        self.error: FetchStalledError | None = None

    def settings(self, config: Mapping[str, Any]) -> dict[str, Any]:
        return self._tap.settings(config)

    def on_stats(self, text: str) -> None:
        """One statistics document (through the tap, which logs and skips one it cannot read)."""
        stalls = self.watch.observe(self._clock(), fetch_states(text), self._paused)
        if stalls and self.error is None:
            named = ", ".join(s.named for s in stalls)
            self.error = FetchStalledError(
                f"group {self._group}: librdkafka has not fetched {named} though assigned to this member "
                f"for longer than {self.watch.timeout_s:.0f} s; close this consumer and create a new one "
                "(the group then moves the partitions to a fresh fetcher)"
            )
            log.error("%s", self.error)
