"""librdkafka's statistics read by one of our guards while the application's own ``stats_cb`` still gets
them at its own interval.

librdkafka has one statistics interval and one callback per client. A guard that reads the statistics
(:mod:`~.fencing_guard`, :mod:`~.fetch_stall`) asks for them at its interval and takes the callback;
:class:`StatisticsTap` hands each document to the guard and passes one on to the application's callback
at most every ``statistics.interval.ms`` it set (none when it set no callback or no interval). A document
the guard cannot read, or a guard that fails on one, is logged and skipped: nothing raises into librdkafka's
callback (confluent-kafka would hand the exception to the application's next ``poll()``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from kafka_placement.errors import ConsumerConfigError

__all__ = ["StatisticsTap"]

log = logging.getLogger(__name__)


class StatisticsTap:
    """``read(text)``: the guard's reader of one statistics document; ``interval_ms``: how often the
    guard wants them; ``guard``: its name in the log."""

    def __init__(
        self,
        read: Callable[[str], None],
        interval_ms: int,
        *,
        guard: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._read = read
        self._guard = guard
        self.interval_ms = interval_ms
        self._clock = clock
        self._user_stats: Callable[[str], None] | None = None
        self._user_interval_s = 0.0
        self._user_next = 0.0

    def settings(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """``config`` with the statistics the guard reads (its interval, this tap as ``stats_cb``)."""
        user_cb = config.get("stats_cb")
        if user_cb is not None and not callable(user_cb):
            raise ConsumerConfigError(f"stats_cb must be callable, got {user_cb!r}")
        interval = config.get("statistics.interval.ms", 0)
        try:
            interval_ms = int(interval)
        except (TypeError, ValueError):
            raise ConsumerConfigError(f"statistics.interval.ms must be an int, got {interval!r}") from None
        self._user_stats = user_cb if interval_ms > 0 else None
        self._user_interval_s = interval_ms / 1000
        return {**config, "statistics.interval.ms": self.interval_ms, "stats_cb": self}

    def __call__(self, text: str) -> None:
        """librdkafka's ``stats_cb``: the application's callback first (when due), then the guard."""
        now = self._clock()
        if self._user_stats is not None and now >= self._user_next:
            self._user_next = now + self._user_interval_s
            self._user_stats(text)
        try:
            self._read(text)
        except Exception as exc:  # a guard's failure never reaches the application's poll()
            log.warning("%s: a statistics document not read (%r); skipped", self._guard, exc)
