"""Driving the group membership of one confluent :class:`~.consumer.Consumer` from the application's
thread.

kafka-python's ``ConsumerCoordinator`` keeps the membership on its IO thread; what it needs from the
application's ``poll()``/``consume()`` is done here, at most every ``DRIVE_INTERVAL_S``: hand the
rebalance events over to the :class:`~.rebalance_applier.RebalanceApplier`, start a join when the
coordinator needs one (the first one after ``subscribe()`` waiting for metadata naming the
subscribed topics), run it to its end in one coroutine (never split across polls — the
kafka-python 3.0.12 bug of ``docs/assignment.md``), report liveness for ``max.poll.interval.ms``,
detect a lost membership (one place: :meth:`GroupDriver._membership_lost`, the broker's word or the
session's), take up partitions a join gave
this member that were never handed over (:meth:`GroupDriver._adopt_unassigned`), let a
:class:`~kafka_placement.clients.kafka_python.join_watchdog.JoinWatchdog` rescue any other stuck
state, and auto-commit.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from kafka import errors as kafka_errors

from kafka_placement.clients.confluent.consumer_config import SplitConfig
from kafka_placement.clients.confluent.kafka_python_group import KafkaPythonGroup
from kafka_placement.clients.confluent.offsets import GroupCommitter
from kafka_placement.clients.confluent.rebalance_applier import RebalanceApplier
from kafka_placement.clients.confluent.thread_handoff import ASSIGN, LOST, ThreadHandoff
from kafka_placement.clients.kafka_python.join_watchdog import JoinWatchdog
from kafka_placement.errors import ConsumerGroupError

log = logging.getLogger(__name__)

__all__ = ["METADATA_WAIT_S", "GroupDriver"]

#: How long the first join after subscribe() waits for metadata naming every subscribed topic (a
#: topic created just before; one that does not exist is joined without, as librdkafka does).
METADATA_WAIT_S = 5.0

_FATAL_JOIN_ERRORS = (
    kafka_errors.FencedInstanceIdError,
    kafka_errors.InconsistentGroupProtocolError,
    kafka_errors.GroupAuthorizationFailedError,
    kafka_errors.InvalidSessionTimeoutError,
    kafka_errors.GroupMaxSizeReachedError,
)


class GroupDriver:
    """The application thread's share of the group membership kept by ``kafka_python`` (a
    ``KafkaConsumer`` that never fetches): see the module docstring."""

    def __init__(
        self,
        kafka_python: KafkaPythonGroup,
        handoff: ThreadHandoff,
        rebalance: RebalanceApplier,
        commits: GroupCommitter,
        config: SplitConfig,
        *,
        group: str,
    ) -> None:
        self._kafka_python = kafka_python
        self._coordinator = kafka_python.coordinator
        self._handoff = handoff
        self._rebalance = rebalance
        self._commits = commits
        self._cfg = config
        self._group = group
        self._watchdog = JoinWatchdog(
            self._coordinator,
            config.session_timeout_s,
            on_fire=lambda reason, details: log.warning(
                "group %s: rejoining (%s %s)", group, reason, details
            ),
        )
        self._join: Any = None
        self._topics: list[str] = []
        self._metadata_update: Any = None  # the metadata the first join waits for (see _metadata_known)
        self._metadata_deadline = 0.0
        #: when the group last confirmed this member by a completed join (see _membership_lost)
        self._confirmed_at = float("-inf")
        #: the generation reset queued when the session ran out (see _membership_lost): until
        #: kafka-python's IO thread ran it, kafka-python still holds the lost partitions as its own
        self._reset: Any = None
        self._next_auto_commit = time.monotonic() + config.auto_commit_interval_s

    def subscribed(self, topics: list[str], now: float) -> None:
        """A new subscription: the first join waits for metadata naming ``topics`` (the literal
        names; regexes match whatever the metadata has)."""
        self._topics = topics
        self._metadata_update = self._kafka_python.request_metadata_update()  # resolved by the next response
        self._metadata_deadline = now + METADATA_WAIT_S

    @property
    def busy(self) -> bool:
        """A join under way (waiting for metadata, in flight, or a rebalance step waiting for the
        application thread): the application's poll() drives the group more often meanwhile."""
        return self._metadata_update is not None or self._join is not None or self._handoff.pending

    def drive(self, now: float) -> None:
        """One turn of the group's work on the application thread (while subscribed)."""
        coordinator = self._coordinator
        rebalance = self._rebalance
        self._commits.deliver()  # on_commit results, on the application's thread as librdkafka does
        while (event := self._handoff.take()) is not None:
            rebalance.handle(event)
            if event.kind == ASSIGN:
                self._confirmed_at = now  # a join completed: the member is in the group as of now
        rebalance.start_unstarted(now)
        join = self._join
        if join is not None and join.is_done:
            self._join = None
            if join.failed():
                self._join_failed(join.exception)
        if self._join is None and coordinator.need_rejoin() and self._metadata_known(now):
            rebalance.rejoining()
            self._join = self._handoff.to_io(coordinator.ensure_active_group_async, None)
        try:
            coordinator.poll_heartbeat()  # liveness for max.poll.interval.ms; re-raises a dead heartbeat loop
        except kafka_errors.KafkaError as exc:
            log.warning("group %s: heartbeat loop stopped (%r); restarted by the next join", self._group, exc)
        if rebalance.owned and not rebalance.lost and (why := self._membership_lost(now)) is not None:
            rebalance.apply(LOST, sorted(rebalance.owned), why)
        self._adopt_unassigned(now)
        self._watchdog.check(join_in_flight=self._join is not None)
        if self._cfg.auto_commit and now >= self._next_auto_commit:
            self._next_auto_commit = now + self._cfg.auto_commit_interval_s
            if rebalance.owned and not rebalance.lost and not coordinator.rebalance_in_progress():
                self._commits.commit(self._commits.stored_offsets(rebalance.owned), asynchronous=True)

    def _adopt_unassigned(self, now: float) -> None:
        """Between joins, hand over what kafka-python holds and this member does not.

        kafka-python 3.0.12 runs ``_on_join_prepare`` once per rebalance attempt (its ``rejoining``
        flag): when a join attempt began with the generation valid — a rejoin requested by a heartbeat
        or a metadata change, the cooperative assignment kept — and the generation was lost during it
        (the coordinator answered ``UNKNOWN_MEMBER_ID``), the retry skips the prepare, so kafka-python
        never declares the partitions lost and still counts them as owned, while this drive has
        already given them up (``lose``). The retried join is then assigned them again, kafka-python's
        diff says nothing was added, no assign event comes, and the member heartbeats on, owning
        partitions nobody consumes (the soak's coop-a, docs/reliability.md). Once no join is in
        flight and the generation is valid, kafka-python's assignment is the group's word: the
        partitions missing here are assigned as an assign event would (lost cleared, ``on_assign``).

        Not while a loss this driver declared (the session ran out) has not reached kafka-python: its
        generation reset is queued for the IO thread, and until it runs kafka-python's assignment is
        the lost one. Adopting it in the same turn handed a SIGSTOPped member every partition back
        with no join, and it consumed what its standby owned for 90 ms (soak seed 42)."""
        coordinator, rebalance = self._coordinator, self._rebalance
        if (
            self._join is not None
            or self._handoff.pending
            or coordinator.need_rejoin()
            or self._kafka_python.generation_lost()
            or (self._reset is not None and not self._reset.is_done)  # lost, kafka-python not told yet
            or coordinator.rebalance_in_progress()
        ):
            return
        held = self._kafka_python.held_partitions()
        missing = [p for p in held if p not in rebalance.owned]
        if missing:
            log.warning(
                "group %s: %s assigned by the last join but never handed over (a join retried "
                "after the membership was lost); assigning them now",
                self._group,
                missing,
            )
            rebalance.apply(ASSIGN, held)
            self._confirmed_at = now

    def _metadata_known(self, now: float) -> bool:
        """Before the first join after subscribe(): a metadata response has come since, and it
        names every subscribed topic (a leader assigns only what its metadata knows) — or
        ``METADATA_WAIT_S`` passed."""
        if self._metadata_update is None:
            return True
        if now < self._metadata_deadline:
            if not self._metadata_update.is_done:
                return False
            if not all(self._kafka_python.knows_topic(t) for t in self._topics):
                self._metadata_update = (
                    self._kafka_python.request_metadata_update()
                )  # no leader yet: ask again
                return False
        self._metadata_update = None
        return True

    def _membership_lost(self, now: float) -> str | None:
        """The one place a lost membership is detected: why, or None while it holds.

        kafka-python's own ``on_partitions_lost`` (its next join's prepare) comes later as an event
        and finds the partitions already given up (:meth:`~.rebalance_applier.RebalanceApplier.apply`).
        """
        if self._kafka_python.generation_lost():
            return "the broker removed this member from the group"
        confirmed = max(self._kafka_python.last_heartbeat_success(), self._confirmed_at)
        if (
            self._join is None  # in a join the rebalance timeout applies, not the session
            and now - confirmed > self._cfg.session_timeout_s
        ):
            # librdkafka's rule: no successful heartbeat for session.timeout.ms means the broker
            # has (or will have) given the partitions away. kafka-python is told too, on its own
            # thread, so it refuses commits and rejoins as a new member.
            self._reset = self._handoff.to_io(self._coordinator.reset_generation)
            return "no successful heartbeat within session.timeout.ms"
        return None

    def _join_failed(self, exc: BaseException | None) -> None:
        if isinstance(exc, _FATAL_JOIN_ERRORS):
            raise ConsumerGroupError(f"group {self._group}: cannot join: {exc!r}") from exc
        log.warning("group %s: join attempt failed (%r); retrying", self._group, exc)
