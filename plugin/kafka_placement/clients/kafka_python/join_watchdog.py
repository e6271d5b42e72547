"""Keeping a kafka-python 3.0.12 coordinator in its group.

kafka-python 3.0.12 can leave a member parked outside its group without noticing (the mechanism
is in ``docs/assignment.md``, "kafka-python join bug"): a JoinGroup/SyncGroup that outlasts one
``poll()`` can finish while nobody consumes it, the member keeps heartbeats off, and the broker
drops it after ``session.timeout.ms``. :class:`JoinWatchdog` is called after every drive of the
coordinator and recovers through the coordinator's ``request_rejoin()`` (the next drive starts
a fresh JoinGroup; a member the broker already dropped gets UNKNOWN_MEMBER_ID and rejoins as new):

1. a finished join task that nobody will consume;
2. no join in flight, no rejoin requested, heartbeats off, for longer than ``grace_s``;
3. joined and heartbeating, but no successful heartbeat for longer than the session timeout.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

#: Seconds between two rescues: the requested rejoin gets one drive to start.
REFIRE_S = 1.0


class JoinWatchdog:
    """Detects a kafka-python ``ConsumerCoordinator`` stuck outside its group and asks it to rejoin.

    ``join_in_flight`` tells the watchdog that the caller itself awaits a join (a drive that runs
    ``ensure_active_group`` to the end consumes its own join task, so case 1 cannot happen to it).
    """

    def __init__(
        self,
        coordinator: Any,
        session_timeout_s: float,
        *,
        on_fire: Callable[[str, dict[str, Any]], None] | None = None,
        grace_s: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.coordinator = coordinator
        self.session_timeout_s = session_timeout_s
        self.grace_s = grace_s
        self.on_fire = on_fire
        self.clock = clock
        self.fired: list[str] = []
        self._idle_since: float | None = None
        self._last_fire = float("-inf")

    def _fire(self, reason: str, **details: Any) -> None:
        self._last_fire = self.clock()
        self._idle_since = None
        self.fired.append(reason)
        if self.on_fire is not None:
            self.on_fire(reason, details)
        self.coordinator.request_rejoin()

    def check(self, join_in_flight: bool = False) -> str | None:
        """Look once; return the reason when a rejoin was requested."""
        coordinator = self.coordinator
        now = self.clock()
        if now - self._last_fire < REFIRE_S:
            return None
        task = getattr(coordinator, "_join_task", None)
        in_flight = join_in_flight or (task is not None and not task.is_done)
        needs = coordinator.need_rejoin()
        if not join_in_flight and task is not None and task.is_done and not needs:
            self._fire("unconsumed-join", generation=coordinator.group_metadata().generation_id)
            return self.fired[-1]
        heartbeat_on = bool(getattr(coordinator, "_heartbeat_enabled", True))
        if not in_flight and not needs and not heartbeat_on:
            if self._idle_since is None:
                self._idle_since = now
            elif now - self._idle_since > self.grace_s:
                self._fire("parked-without-heartbeats", state=str(coordinator.state))
                return self.fired[-1]
            return None
        self._idle_since = None
        heartbeat = coordinator.heartbeat
        if heartbeat_on and not in_flight and not needs:
            silent = now - max(heartbeat.last_receive, heartbeat.last_reset)
            if silent > self.session_timeout_s + 1.0:
                self._fire("no-heartbeat-success", silent_s=round(silent, 1))
                return self.fired[-1]
        return None
