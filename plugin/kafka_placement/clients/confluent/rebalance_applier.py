"""The member's state and its ownership changes, applied to librdkafka on the application's thread.

:class:`RebalanceApplier` owns the member's one
:class:`~kafka_placement.groups.membership.Membership` (its phase and transition table) and the
partitions it owns; every change of either goes through it, and assign, revoke and lost through one
method, :meth:`RebalanceApplier.apply` — whether the change came as an event kafka-python's IO thread
handed over (:class:`~.thread_handoff.RebalanceBridge`), a loss the drive detected
(:class:`~.group_driver.GroupDriver`), an assignment adopted, or ``unsubscribe()``/``close()``. It
does what librdkafka's own group consumer would: the application's ``on_assign`` / ``on_revoke`` /
``on_lost`` callback (which may assign itself, as confluent-kafka allows), else librdkafka's
``assign``/``incremental_assign`` from the group's committed offsets, the commit before a
revocation, the unassign.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import confluent_kafka
from kafka import errors as kafka_errors

from kafka_placement.clients.confluent.consumer_config import SplitConfig
from kafka_placement.clients.confluent.kafka_python_group import KafkaPythonGroup
from kafka_placement.clients.confluent.offsets import (
    COMMIT_TIMEOUT_MS,
    GroupCommitter,
    Partition,
    confluent_tp,
)
from kafka_placement.clients.confluent.thread_handoff import (
    ASSIGN,
    LOST,
    REVOKE,
    RebalanceEvent,
    ThreadHandoff,
)
from kafka_placement.errors import CommitFailedError
from kafka_placement.groups.membership import Membership, Phase, Step

log = logging.getLogger(__name__)

__all__ = ["RebalanceApplier"]

#: librdkafka's auto.offset.reset values → the logical offset it starts from (others, e.g. "error":
#: OFFSET_INVALID, librdkafka applies its own rule)
_RESET_OFFSETS = {
    **dict.fromkeys(("smallest", "earliest", "beginning"), confluent_kafka.OFFSET_BEGINNING),
    **dict.fromkeys(("largest", "latest", "end"), confluent_kafka.OFFSET_END),
}
Callback = Callable[..., Any]
#: Bound on the metadata request that tells librdkafka the assigned topics' leaders (see _learn_leaders)
LEADERS_TIMEOUT_S = 2.0
#: How often the committed offsets of partitions assigned without them are read again, and the bound on
#: each such read (it holds the application's poll: short, as Java's poll-bounded refresh)
START_RETRY_S = 1.0
START_RETRY_TIMEOUT_MS = 1000


class RebalanceApplier:
    """The member's state and the partitions it owns, moved in librdkafka (see the module docstring).

    ``consumer`` is what the application's callbacks are given (``cb(consumer, partitions)``);
    ``rdkafka`` the librdkafka consumer that fetches; ``kafka_python`` the group side, whose
    coordinator reads the committed offsets; ``commits`` the member's :class:`~.offsets.GroupCommitter`,
    which reads ``membership`` (commits refused while ``LOST``).
    """

    def __init__(
        self,
        consumer: object,
        rdkafka: Any,
        kafka_python: KafkaPythonGroup,
        membership: Membership,
        commits: GroupCommitter,
        handoff: ThreadHandoff,
        config: SplitConfig,
        *,
        group: str,
        error_cb: Callback | None,
    ) -> None:
        self._consumer = consumer
        self._rk = rdkafka
        self._kafka_python = kafka_python
        self._coordinator = kafka_python.coordinator
        self.membership = membership
        self._commits = commits
        self._handoff = handoff
        self._cfg = config
        self._cooperative = config.cooperative
        self._group = group
        self._error_cb = error_cb
        self.owned: set[Partition] = set()
        self.on_assign: Callback | None = None
        self.on_revoke: Callback | None = None
        self.on_lost: Callback | None = None
        self._in_callback = False
        self._callback_assigned = False
        #: owned partitions whose committed offsets could not be read at their assignment: not given
        #: to librdkafka yet (see start_unstarted)
        self._unstarted: set[Partition] = set()
        self._unstarted_since = 0.0
        self._next_start_try = 0.0

    @property
    def lost(self) -> bool:
        """This member knows it lost its membership (until its next assignment)."""
        return self.membership.lost

    @property
    def in_callback(self) -> bool:
        """An application rebalance callback is running (on this thread)."""
        return self._in_callback

    def assigned_by_application(self) -> None:
        """The application called assign/unassign itself: inside a callback, that replaces ours."""
        self._callback_assigned = self._in_callback

    # --- the phases without an ownership change ----------------------------------------------------
    def subscribe(self) -> None:
        self.membership.apply(Step.SUBSCRIBE)

    def rejoining(self) -> None:
        """A join begins (the coordinator asked for one)."""
        self.membership.apply(Step.REJOIN)

    # --- ownership: assign, revoke, lost -------------------------------------------------------------
    def handle(self, event: RebalanceEvent) -> None:
        """One event kafka-python's IO thread handed over; the join waits until it is finished."""
        error: BaseException | None = None
        try:
            self.apply(event.kind, event.partitions, "membership lost")
        except BaseException as exc:  # the join continues; the application sees its error
            error = exc
        finally:
            self._handoff.finish(event, error)
        if error is not None:
            raise error

    def apply(self, kind: str, partitions: list[Partition], why: str = "") -> None:
        """The one place ownership changes: ``kind`` is ASSIGN (``partitions``: the assignment, or
        for a cooperative member what it adds), REVOKE or LOST (only the owned ones among
        ``partitions`` move; ``why`` says what ended the membership)."""
        if kind == ASSIGN:
            self.membership.apply(Step.ASSIGN)
            self._assign(partitions)
        elif kind == REVOKE:
            self._revoke([p for p in partitions if p in self.owned])
        elif kind == LOST:
            owned = [p for p in partitions if p in self.owned]
            # kafka-python's own on_partitions_lost, after the drive already declared them: nothing left
            if owned or self.membership.phase is not Phase.LOST:
                self._lose(owned, why)
        else:
            raise ValueError(f"rebalance kind must be {ASSIGN}, {REVOKE} or {LOST}, got {kind!r}")

    def _call(self, callback: Callback | None, partitions: list[Partition]) -> bool:
        """Run an application callback; True when it called assign/unassign itself."""
        if callback is None:
            return False
        self._in_callback, self._callback_assigned = True, False
        try:
            callback(self._consumer, [confluent_tp(t, p) for t, p in partitions])
        finally:
            self._in_callback = False
        return self._callback_assigned

    def _assign(self, partitions: list[Partition]) -> None:
        new = [p for p in partitions if p not in self.owned] if self._cooperative else partitions
        if not self._cooperative:
            self._unstarted = set()  # an eager assignment replaces everything
        self._learn_leaders(new)
        handled = self._call(self.on_assign, new)
        if not handled:
            tps = self._start_offsets(new, COMMIT_TIMEOUT_MS)
            if tps is None:  # fetched once their committed offsets are read (start_unstarted)
                log.warning(
                    "group %s: committed offsets of %s not read; those partitions are fetched once they "
                    "are (tried again every %.0f s)",
                    self._group,
                    new,
                    START_RETRY_S,
                )
                if not self._unstarted:
                    self._unstarted_since = time.monotonic()
                self._unstarted |= set(new)
                self._next_start_try = time.monotonic() + START_RETRY_S
                tps = []
            if self._cooperative:
                if tps:
                    self._rk.incremental_assign(tps)
            else:
                self._rk.assign(tps)
        self.owned = self.owned | set(new) if self._cooperative else set(partitions)

    def start_unstarted(self, now: float) -> None:
        """Read again the committed offsets of the owned partitions whose read failed at their
        assignment, at most every :data:`START_RETRY_S`, and start fetching them once read — Java's
        consumer keeps such partitions without a position and tries again on each poll
        (``refreshCommittedOffsetsIfNeeded``). Never librdkafka's own read: see :meth:`_start_offsets`."""
        if not self._unstarted or self.lost or now < self._next_start_try:
            return
        self._next_start_try = now + START_RETRY_S
        waiting = sorted(self._unstarted)
        tps = self._start_offsets(waiting, START_RETRY_TIMEOUT_MS)
        if tps is None:
            return
        self._rk.incremental_assign(tps)  # beside what is fetched already, eager or cooperative
        self._unstarted -= set(waiting)
        log.warning(
            "group %s: committed offsets of %s read %.1f s after their assignment; fetching them",
            self._group,
            waiting,
            now - self._unstarted_since,
        )

    def _learn_leaders(self, partitions: list[Partition]) -> None:
        """Ask librdkafka for the assigned topics' metadata before assigning them. Its group consumer
        learns the leaders when it subscribes; assigned a topic it has no metadata for, it waits for
        its offset-query timer (~0.4 s here) before the first fetch. One topic: that topic's metadata;
        several: the cluster's (one request either way). A failure only costs that wait, but is said:
        in seed 40's soak it was the first sign of a librdkafka that reached no broker any more."""
        topics = sorted({topic for topic, _ in partitions})
        if not topics:
            return
        try:
            if len(topics) == 1:
                self._rk.list_topics(topics[0], timeout=LEADERS_TIMEOUT_S)
            else:
                self._rk.list_topics(timeout=LEADERS_TIMEOUT_S)
        except confluent_kafka.KafkaException as exc:
            log.warning(
                "group %s: librdkafka read no metadata for %s within %.0f s before assigning them (%s)",
                self._group,
                topics,
                LEADERS_TIMEOUT_S,
                exc,
            )

    def _start_offsets(self, partitions: list[Partition], timeout_ms: int) -> list[Any] | None:
        """The partitions with the offsets librdkafka starts from: the group's committed offsets read
        through this member's coordinator (the one that just completed the join); none committed →
        ``auto.offset.reset``. None when the read failed (the coordinator moving or unreachable).
        Never left to librdkafka to read (``OFFSET_INVALID``): it asks its own coordinator, and an
        OffsetFetch answered NOT_COORDINATOR for the whole request (a coordinator moving) leaves the
        partitions unfetched for good (librdkafka issue #5586; seen in the soak as members owning
        partitions and consuming nothing for minutes)."""
        if not partitions:
            return []
        from kafka import TopicPartition as KafkaTopicPartition

        try:
            committed = self._coordinator.fetch_committed_offsets(
                {KafkaTopicPartition(t, p) for t, p in partitions}, timeout_ms=timeout_ms
            )
        except kafka_errors.KafkaError as exc:
            log.info("group %s: committed offsets of %s not read (%r)", self._group, partitions, exc)
            return None
        reset = _RESET_OFFSETS.get(
            str(self._cfg.librdkafka.get("auto.offset.reset", "largest")).lower(),
            confluent_kafka.OFFSET_INVALID,
        )
        out = []
        for topic, partition in partitions:
            meta = committed.get(KafkaTopicPartition(topic, partition))
            out.append(
                confluent_tp(
                    topic, partition, meta.offset if meta is not None and meta.offset >= 0 else reset
                )
            )
        return out

    def _revoke(self, partitions: list[Partition]) -> None:
        if not partitions:  # nothing owned: no callback (librdkafka calls none either)
            return
        if self.lost:  # nothing of a lost member is committed: given up as lost
            self._lose(partitions, "membership lost before the revocation")
            return
        self.membership.apply(Step.REVOKE)
        try:
            self._commits.flush(COMMIT_TIMEOUT_MS / 1000)  # the application's queued commits land first
            if self._cfg.auto_commit:
                try:
                    self._commits.commit(
                        self._commits.stored_offsets(partitions), asynchronous=False, automatic=True
                    )
                except CommitFailedError as exc:
                    log.warning("group %s: commit before revocation refused: %s", self._group, exc)
            handled = self._call(self.on_revoke, partitions)
            self._drop(partitions, handled)
        finally:
            self.membership.apply(Step.REVOKED)

    def _lose(self, partitions: list[Partition], why: str) -> None:
        """Membership lost: the partitions may already be someone else's; no commit is tried."""
        newly = not self.lost
        self.membership.apply(Step.LOSE)
        if newly:  # told once per loss, as librdkafka's ASSIGNMENT_LOST
            self._commits.fail_pending(f"group {self._group}: {why}; commit not sent")
            log.warning("group %s: %s; partitions lost: %s", self._group, why, partitions)
            if self._error_cb is not None:
                self._error_cb(
                    confluent_kafka.KafkaError(
                        confluent_kafka.KafkaError._ASSIGNMENT_LOST, f"group {self._group}: {why}"
                    )
                )
        if not partitions:
            return
        handled = self._call(self.on_lost if self.on_lost is not None else self.on_revoke, partitions)
        self._drop(partitions, handled)

    def _drop(self, partitions: list[Partition], handled: bool) -> None:
        if not handled:
            if self._cooperative:
                # one never started is not in librdkafka's assignment (which refuses to unassign it)
                fetched = [confluent_tp(t, p) for t, p in partitions if (t, p) not in self._unstarted]
                if fetched:
                    self._rk.incremental_unassign(fetched)
            else:
                self._rk.unassign()
        gone = set(partitions)
        self._unstarted = self._unstarted - gone if self._cooperative else set()
        self.owned = self.owned - gone if self._cooperative else set()
        self._commits.forget(gone)

    def give_up_all(self, generation_lost: bool) -> None:
        """Unsubscribe or close: every partition given up — revoked with its commit, or lost when the
        membership already is (``generation_lost``: kafka-python says so)."""
        if not self.owned:
            return
        if generation_lost and not self.lost:
            self.apply(LOST, sorted(self.owned), "membership lost before leaving")
        else:
            self.apply(REVOKE, sorted(self.owned))

    def unsubscribe(self, generation_lost: bool) -> None:
        self.give_up_all(generation_lost)
        self.membership.apply(Step.UNSUBSCRIBE)

    def close(self, generation_lost: bool) -> None:
        """close(), first half: no listener waits from now on, every partition given up (a revocation
        kafka-python's listener is waiting with stays waiting: see :meth:`.ThreadHandoff.release_waiting`);
        then ``CLOSING`` (the caller flushes the commits, leaves, then releases the waiting listeners)."""
        self._handoff.close()
        try:
            if self.membership.subscribed:
                self.give_up_all(generation_lost)
        finally:  # a callback that raised does not keep the consumer open
            self.membership.apply(Step.CLOSE)

    def closed(self) -> None:
        """close(), last: both clients closed; the listeners still waiting released."""
        for event in self._handoff.release_waiting():
            log.debug("group %s: %s released at close", self._group, event.kind)
        self.membership.apply(Step.CLOSED)
