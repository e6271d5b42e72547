"""What every soak member process logs besides its records (:mod:`~kafka_placement.soak.events`): its
ownership intervals (:class:`OwnershipLog`) and each time it learns its membership ended
(:func:`watch_membership`); and the rebalance timeout every classic member runs with."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from kafka_placement.soak.events import Event, Ownership

__all__ = ["REBALANCE_TIMEOUT_MS", "OwnershipLog", "watch_membership"]

#: Every classic member's ``max.poll.interval.ms``, which is also its rebalance timeout: how long the
#: coordinator waits for members to rejoin, and (plus 5 s) how long a member waits for a JoinGroup
#: answer, in Java and kafka-python alike. At Kafka's default (300 s) one JoinGroup answer that never
#: came (its coordinator unloaded the group during the rebalance) left a group without a consumer for
#: 283 s in a 30-minute run (docs/reliability.md, session 25). The members poll every 0.2 s.
REBALANCE_TIMEOUT_MS = 30_000


class OwnershipLog:
    """What a member holds, as :class:`Ownership` intervals written to its log."""

    def __init__(self, write: Callable[[Event], None], group: str, member: str) -> None:
        self._write, self._group, self._member = write, group, member
        self.owned: frozenset[int] = frozenset()
        self._current: Ownership | None = None
        self._count = 0

    def set(self, partitions: Iterable[int]) -> None:
        new = frozenset(partitions)
        if new == self.owned:
            return
        now = time.time()
        if self._current is not None:
            self._write(replace(self._current, released=now))
            self._current = None
        self.owned = new
        if new:
            self._count += 1
            self._current = Ownership(self._group, self._member, self._count, tuple(sorted(new)), now)
            self._write(self._current)


def watch_membership(coordinator: Any, on_ended: Callable[[float], None], closing: threading.Event) -> None:
    """Call ``on_ended(since)`` each time ``coordinator`` (kafka-python's ``ConsumerCoordinator``, also
    the one under our confluent ``Consumer``) learns that its membership ended; ``since`` is the wall
    time of its last successful heartbeat (or of its join, if none succeeded since).

    kafka-python resets its generation at exactly those moments — a heartbeat, JoinGroup, SyncGroup or
    OffsetCommit answered ``UNKNOWN_MEMBER_ID`` (the coordinator expired the session: "member_id was not
    recognized") or ``ILLEGAL_GENERATION`` (the group rebalanced without it), and our confluent
    ``Consumer`` when no heartbeat succeeded for ``session.timeout.ms`` (librdkafka's rule) — and also
    when it leaves the group on close, or takes the member id a broker hands out on its first join;
    those two are no loss. The rebalance listeners alone would miss some: a member whose rejoin the
    join watchdog asked for revokes its partitions (``on_partitions_revoked``) before the JoinGroup
    answer says it was already gone, so ``on_partitions_lost`` never runs (session 20's 30-minute
    run, docs/reliability.md)."""
    original = coordinator.reset_generation
    monotonic_to_wall = time.time() - time.monotonic()

    def reset_generation(*args: Any, **kwargs: Any) -> Any:
        generation = coordinator._generation
        was_member = generation.generation_id >= 0 and generation.has_member_id()
        beat = coordinator.heartbeat
        # kafka-python's heartbeat times are time.monotonic(); the logs' are time.time()
        since = max(beat.last_receive, beat.last_reset) + monotonic_to_wall
        result = original(*args, **kwargs)
        if was_member and not closing.is_set():
            on_ended(min(since, time.time()))
        return result

    coordinator.reset_generation = reset_generation
