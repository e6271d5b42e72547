"""How one confluent :class:`~.consumer.Consumer`'s ``poll()``/``consume()`` share the application
thread between librdkafka's records and the group's turns.

librdkafka's ``poll()`` cannot be woken from Python, so the application's call is cut into waits
of at most ``DRIVE_INTERVAL_S`` (``JOIN_DRIVE_INTERVAL_S`` while a join is under way: each of its
steps waits for the application thread), and the group's turn (:class:`~.group_driver.GroupDriver`)
is taken between them whenever it is due. A record librdkafka hands out after the process was
stopped for longer than a session (a GC pause, SIGSTOP) is kept only if this member still owns its
partition once the group has been looked at: a lost partition is never consumed. A fetch stall
(:mod:`.fetch_stall`) is raised at every turn.
"""

from __future__ import annotations

import time
from typing import Any

from kafka_placement.clients.confluent.fetch_stall import FetchStallMonitor
from kafka_placement.clients.confluent.group_driver import GroupDriver
from kafka_placement.clients.confluent.rebalance_applier import RebalanceApplier
from kafka_placement.groups.membership import Membership

__all__ = ["DRIVE_INTERVAL_S", "JOIN_DRIVE_INTERVAL_S", "PollLoop"]

#: Longest time the application's poll() blocks in librdkafka before looking at the group again.
DRIVE_INTERVAL_S = 0.05
#: The same while a join is under way: each of its steps (metadata, the join's callbacks) waits for
#: the application thread, and librdkafka's poll() cannot be woken from Python.
JOIN_DRIVE_INTERVAL_S = 0.005

_monotonic = time.monotonic


class PollLoop:
    """The waits of ``poll()``/``consume()`` and the group's turns between them (module docstring).

    ``next_drive`` is when the group's next turn is due (``-inf``: at every call, as after
    ``close()``); the consumer's per-record fast path reads it before anything else."""

    def __init__(
        self,
        rk: Any,
        membership: Membership,
        driver: GroupDriver,
        rebalance: RebalanceApplier,
        fetch_stall: FetchStallMonitor | None,
        session_timeout_s: float,
    ) -> None:
        self._rk = rk
        self._membership = membership
        self._driver = driver
        self._rebalance = rebalance
        self._fetch_stall = fetch_stall
        self._session_timeout_s = session_timeout_s
        self.next_drive = 0.0
        # A record returned after this instant may belong to a partition lost meanwhile (see
        # kept_after_pause); drive() sets it a session past its own turn, so the fast path, which
        # runs only before the next turn, never needs the check.
        self._stale_after = float("inf")

    def poll_turn(self, timeout: float | None) -> Any:
        """``poll()`` once the fast path found nothing, or the group's turn was due."""
        if not self._membership.open:
            raise RuntimeError("Consumer closed")
        now = _monotonic()
        if now >= self.next_drive:
            self.drive(now)
        msg = self._rk.poll(0)
        if msg is not None:
            return msg if _monotonic() < self._stale_after else self._after_pause(msg)
        interval = self.drive_interval
        if timeout is not None and 0 <= timeout <= interval:
            msg = self._rk.poll(timeout)
            return msg if msg is None or _monotonic() < self._stale_after else self._after_pause(msg)
        msg = self._rk.poll(interval)
        if msg is not None:
            return msg if _monotonic() < self._stale_after else self._after_pause(msg)
        deadline = None if timeout is None or timeout < 0 else now + timeout
        while True:
            now = _monotonic()
            if deadline is not None and now >= deadline:
                return None
            if now >= self.next_drive:
                self.drive(now)
            interval = self.drive_interval
            wait = interval if deadline is None else min(interval, deadline - now)
            msg = self._rk.poll(wait)
            if msg is not None:
                return msg if _monotonic() < self._stale_after else self._after_pause(msg)

    def consume(self, num_messages: int, timeout: float) -> list[Any]:
        """``consume()``: up to ``num_messages`` messages within ``timeout`` (negative: no limit)."""
        if not self._membership.open:
            raise RuntimeError("Consumer closed")
        deadline = None if timeout is None or timeout < 0 else _monotonic() + timeout
        while True:
            now = _monotonic()
            if now >= self.next_drive:
                self.drive(now)
            interval = self.drive_interval
            wait = interval if deadline is None else max(0.0, min(interval, deadline - now))
            msgs: list[Any] = self._rk.consume(num_messages, wait)
            if msgs and _monotonic() >= self._stale_after:
                msgs = self._kept_after_pause(msgs)
            if msgs or (deadline is not None and _monotonic() >= deadline):
                return msgs

    def drive(self, now: float) -> None:
        """The group's turn: a fetch stall is raised (at every turn, librdkafka will not fetch those
        partitions again), then the group driven."""
        stalled = self._fetch_stall.error if self._fetch_stall is not None else None
        if stalled is not None:
            raise stalled
        if self._membership.subscribed:
            self._driver.drive(now)
            self._stale_after = now + self._session_timeout_s
        self.next_drive = now + self.drive_interval

    @property
    def drive_interval(self) -> float:
        return (
            JOIN_DRIVE_INTERVAL_S if self._membership.subscribed and self._driver.busy else DRIVE_INTERVAL_S
        )

    def _kept_after_pause(self, msgs: list[Any]) -> list[Any]:
        """Messages librdkafka returned to a call that outlasted a session since the group was last
        looked at (the process paused): the group is looked at now, and the messages of partitions
        this member no longer owns are dropped."""
        self.drive(_monotonic())
        owned = self._rebalance.owned
        return [m for m in msgs if m.error() is not None or (m.topic(), m.partition()) in owned]

    def _after_pause(self, msg: Any) -> Any:
        kept = self._kept_after_pause([msg])
        return kept[0] if kept else None
