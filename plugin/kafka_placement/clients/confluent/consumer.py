"""A drop-in ``confluent_kafka.Consumer`` whose group runs our assignors.

librdkafka has no hook for a custom assignor, so the work is split between two mature clients:

- librdkafka (``confluent_kafka.Consumer``) fetches, with manual ``assign()`` /
  ``incremental_assign()``; it never subscribes, never joins, never commits;
- kafka-python's classic-group ``ConsumerCoordinator`` (inside a ``KafkaConsumer`` that never
  fetches) keeps the membership: JoinGroup/SyncGroup with our assignor
  (:mod:`kafka_placement.clients.kafka_python.assignors`), heartbeats, LeaveGroup, and the
  offset commits, which carry its generation and member id (fencing is the broker's).

The application thread drives both: every ``poll()``/``consume()`` takes the rebalance events
kafka-python's IO thread handed over (:mod:`.rebalance`), applies them to librdkafka, calls the
application's ``on_assign``/``on_revoke``/``on_lost`` like confluent-kafka does, and starts a
join when the coordinator needs one. The join runs to its end in one coroutine (never split
across polls — the kafka-python 3.0.12 bug of ``docs/assignment.md``), and a
:class:`~kafka_placement.clients.kafka_python.join_watchdog.JoinWatchdog` rescues any other
stuck state.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

import confluent_kafka
from kafka import KafkaConsumer
from kafka import errors as kafka_errors

from kafka_placement.clients.confluent.consumer_config import SplitConfig, split_config
from kafka_placement.clients.confluent.consumer_group_metadata import GroupMetadata, librdkafka_group_metadata
from kafka_placement.clients.confluent.offsets import (
    COMMIT_TIMEOUT_MS,
    GroupCommitter,
    Partition,
    confluent_tp,
    offsets_of,
)
from kafka_placement.clients.confluent.rebalance import ASSIGN, LOST, REVOKE, RebalanceBridge, RebalanceEvent
from kafka_placement.clients.consumer_protocol import is_consumer_protocol
from kafka_placement.clients.kafka_python.join_watchdog import JoinWatchdog
from kafka_placement.errors import CommitFailedError, ConsumerConfigError, ConsumerGroupError

log = logging.getLogger(__name__)

__all__ = ["Consumer"]

#: Longest time the application's poll() blocks in librdkafka before looking at the group again.
DRIVE_INTERVAL_S = 0.05
#: How long the first join after subscribe() waits for metadata naming every subscribed topic (a
#: topic created just before; one that does not exist is joined without, as librdkafka does).
METADATA_WAIT_S = 5.0

_monotonic = time.monotonic
#: librdkafka's auto.offset.reset values → the logical offset it starts from (others, e.g. "error":
#: OFFSET_INVALID, librdkafka applies its own rule)
_RESET_OFFSETS = {
    **dict.fromkeys(("smallest", "earliest", "beginning"), confluent_kafka.OFFSET_BEGINNING),
    **dict.fromkeys(("largest", "latest", "end"), confluent_kafka.OFFSET_END),
}
_NO_OFFSET = confluent_kafka.KafkaError._NO_OFFSET
Callback = Callable[..., Any]
_FATAL_JOIN_ERRORS = (
    kafka_errors.FencedInstanceIdError,
    kafka_errors.InconsistentGroupProtocolError,
    kafka_errors.GroupAuthorizationFailedError,
    kafka_errors.InvalidSessionTimeoutError,
    kafka_errors.GroupMaxSizeReachedError,
)


class Consumer:
    """``confluent_kafka.Consumer`` with a group run by our assignors.

    ``config`` is confluent-kafka's dict. ``assignor`` is one of our kafka-python assignors
    (``FailoverAssignor(priority=10)``), a strategy name (``"cooperative-sticky"``) or a list of
    them; alternatively ``partition.assignment.strategy`` in ``config`` names ours (never both).
    ``enable.auto.commit`` (default true) is implemented by this class exactly as librdkafka does:
    stored offsets every ``auto.commit.interval.ms``, before a revocation and at close. Methods
    not listed here are librdkafka's (``seek``, ``pause``, ``position``, ``get_watermark_offsets``,
    ``committed``, ...).

    With ``group.protocol=consumer`` (KIP-848) the broker's assignor runs instead: the constructor then
    returns a plain ``confluent_kafka.Consumer`` (see ``__new__``; settings from
    :func:`kafka_placement.clients.consumer_protocol.confluent_failover_config`).
    """

    def __new__(cls, config: Mapping[str, Any], *, assignor: object | None = None, **kwargs: Any) -> Any:
        """With ``group.protocol=consumer`` the broker assigns (KIP-848): no Python-side membership is
        needed, so this returns librdkafka's own ``confluent_kafka.Consumer`` for ``config`` as given."""
        merged = {**config, **kwargs} if isinstance(config, Mapping) else config
        if isinstance(merged, Mapping) and is_consumer_protocol(merged):
            if assignor is not None:
                raise ConsumerConfigError(
                    f"assignor={assignor!r} runs on the classic protocol only; with group.protocol=consumer "
                    "the broker assigns (name it with group.remote.assignor, e.g. failover)"
                )
            return confluent_kafka.Consumer(dict(merged))
        return super().__new__(cls)

    def __init__(self, config: Mapping[str, Any], *, assignor: object | None = None, **kwargs: Any) -> None:
        if kwargs:  # confluent-kafka also takes settings as keywords (logger=...)
            config = {**config, **kwargs}
        self._cfg: SplitConfig = split_config(config, assignor)
        self._cooperative = self._cfg.cooperative
        self._error_cb: Callback | None = config.get("error_cb")
        self._rk = confluent_kafka.Consumer(self._cfg.librdkafka)
        try:
            self._kc = KafkaConsumer(**self._cfg.kafka_python)
        except Exception:
            self._rk.close()
            raise
        self._coordinator = self._kc._coordinator
        self._bridge = RebalanceBridge(self._kc._manager.call_soon)
        self._watchdog = JoinWatchdog(
            self._coordinator, self._cfg.session_timeout_s,
            on_fire=lambda reason, details: log.warning("group %s: rejoining (%s %s)",
                                                        self._cfg.kafka_python["group_id"], reason, details),
        )
        manager = self._kc._manager
        self._commits = GroupCommitter(
            self._rk, self._coordinator, manager.call_soon, self._group,
            auto_offset_store=self._cfg.auto_offset_store, on_commit=self._cfg.on_commit,
            error_cb=self._error_cb, sleep=getattr(getattr(manager, "_net", None), "sleep", None),
        )
        self._owned: set[Partition] = set()
        self._on_assign: Callback | None = None
        self._on_revoke: Callback | None = None
        self._on_lost: Callback | None = None
        self._join: Any = None
        self._in_callback = False
        self._callback_assigned = False
        self._subscribed = False
        self._topics: list[str] = []
        self._metadata_update: Any = None  # the metadata the first join waits for (see _metadata_known)
        self._metadata_deadline = 0.0
        self._closed = False
        self._next_drive = 0.0
        self._next_auto_commit = time.monotonic() + self._cfg.auto_commit_interval_s

    # --- subscription -------------------------------------------------------------------------
    def subscribe(
        self,
        topics: list[str],
        on_assign: Callback | None = None,
        on_revoke: Callback | None = None,
        on_lost: Callback | None = None,
    ) -> None:
        """Join the group for ``topics``; callbacks are called from ``poll()``/``consume()`` as
        ``cb(consumer, partitions)`` like confluent-kafka's."""
        self._check_open()
        if isinstance(topics, str) or not all(isinstance(t, str) and t for t in topics):
            raise ConsumerConfigError(f"topics must be a list of topic names, got {topics!r}")
        # librdkafka's rule: a name starting with "^" is a regex, matched against the cluster's
        # topics and re-evaluated at every metadata refresh (topic.metadata.refresh.interval.ms);
        # kafka-python's coordinator does the matching for one pattern: names and regexes in one
        patterns = [t for t in topics if t.startswith("^")]
        literals = [t for t in topics if not t.startswith("^")]
        pattern = None
        if patterns:
            pattern = "|".join([f"(?:{p})" for p in patterns] + [f"^{re.escape(t)}$" for t in literals])
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ConsumerConfigError(f"invalid topic regex in {patterns!r}: {exc}") from None
        for name, cb in (("on_assign", on_assign), ("on_revoke", on_revoke), ("on_lost", on_lost)):
            if cb is not None and not callable(cb):
                raise ConsumerConfigError(f"{name} must be callable, got {cb!r}")
        self._on_assign, self._on_revoke, self._on_lost = on_assign, on_revoke, on_lost
        if pattern is not None:
            self._kc.subscribe(pattern=pattern, listener=self._bridge)
        else:
            self._kc.subscribe(list(topics), listener=self._bridge)
        self._subscribed = True
        self._topics = literals
        self._metadata_update = self._kc._cluster.request_update()  # resolved by the next response
        self._metadata_deadline = _monotonic() + METADATA_WAIT_S
        self._next_drive = 0.0

    def unsubscribe(self) -> None:
        """Leave the group's subscription (revoking everything first)."""
        self._check_open()
        self._revoke_all()
        self._kc.unsubscribe()
        self._subscribed = False

    # --- consuming ----------------------------------------------------------------------------
    def poll(self, timeout: float | None = None) -> Any:
        """One message (or event/error message) or None, like ``confluent_kafka.Consumer.poll``."""
        if self._closed:
            raise RuntimeError("Consumer closed")
        now = _monotonic()
        if now >= self._next_drive:
            self._drive(now)
        if timeout is not None and 0 <= timeout <= DRIVE_INTERVAL_S:
            return self._rk.poll(timeout)
        msg = self._rk.poll(DRIVE_INTERVAL_S)  # returns at once when a message is there
        if msg is not None:
            return msg
        deadline = None if timeout is None or timeout < 0 else now + timeout
        while True:
            now = _monotonic()
            if deadline is not None and now >= deadline:
                return None
            if now >= self._next_drive:
                self._drive(now)
            wait = DRIVE_INTERVAL_S if deadline is None else min(DRIVE_INTERVAL_S, deadline - now)
            msg = self._rk.poll(wait)
            if msg is not None:
                return msg

    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Any]:
        """Up to ``num_messages`` messages, like ``confluent_kafka.Consumer.consume``."""
        if self._closed:
            raise RuntimeError("Consumer closed")
        deadline = None if timeout is None or timeout < 0 else _monotonic() + timeout
        while True:
            now = _monotonic()
            if now >= self._next_drive:
                self._drive(now)
            wait = DRIVE_INTERVAL_S if deadline is None else max(0.0, min(DRIVE_INTERVAL_S, deadline - now))
            msgs: list[Any] = self._rk.consume(num_messages, wait)
            if msgs or (deadline is not None and _monotonic() >= deadline):
                return msgs

    # --- group driving (application thread) --------------------------------------------------
    def _drive(self, now: float) -> None:
        self._next_drive = now + DRIVE_INTERVAL_S
        if not self._subscribed:
            return
        coordinator = self._coordinator
        self._commits.deliver()  # on_commit results, on the application's thread as librdkafka does
        while (event := self._bridge.take()) is not None:
            self._handle(event)
        join = self._join
        if join is not None and join.is_done:
            self._join = None
            if join.failed():
                self._join_failed(join.exception)
        if self._join is None and coordinator.need_rejoin() and self._metadata_known(now):
            self._join = self._kc._manager.call_soon(coordinator.ensure_active_group_async, None)
        try:
            coordinator.poll_heartbeat()  # liveness for max.poll.interval.ms; re-raises a dead heartbeat loop
        except kafka_errors.KafkaError as exc:
            log.warning("group %s: heartbeat loop stopped (%r); restarted by the next join", self._group, exc)
        if self._owned and not self._lost:
            if coordinator._generation.is_lost():
                self._lose(sorted(self._owned), "the broker removed this member from the group")
            elif self._session_expired(now):
                # librdkafka's rule: no successful heartbeat for session.timeout.ms means the
                # broker has (or will have) given the partitions away. kafka-python is told too,
                # so it refuses commits and rejoins as a new member.
                coordinator.reset_generation()
                self._lose(sorted(self._owned), "no successful heartbeat within session.timeout.ms")
        self._watchdog.check(join_in_flight=self._join is not None)
        if self._cfg.auto_commit and now >= self._next_auto_commit:
            self._next_auto_commit = now + self._cfg.auto_commit_interval_s
            if self._owned and not self._lost and not coordinator.rebalance_in_progress():
                self._commits.commit(self._commits.stored_offsets(self._owned), asynchronous=True)

    def _metadata_known(self, now: float) -> bool:
        """Before the first join after subscribe(): a metadata response has come since, and it
        names every subscribed topic (a leader assigns only what its metadata knows) — or
        ``METADATA_WAIT_S`` passed."""
        if self._metadata_update is None:
            return True
        if now < self._metadata_deadline:
            if not self._metadata_update.is_done:
                return False
            cluster = self._kc._cluster
            if not all(cluster.partitions_for_topic(t) for t in self._topics):
                self._metadata_update = cluster.request_update()  # e.g. no leader yet: ask again
                return False
        self._metadata_update = None
        return True

    def _session_expired(self, now: float) -> bool:
        coordinator = self._coordinator
        if self._join is not None or not getattr(coordinator, "_heartbeat_enabled", False):
            return False  # during a join the rebalance timeout applies, not the session
        heartbeat = coordinator.heartbeat
        return bool(now - max(heartbeat.last_receive, heartbeat.last_reset) > self._cfg.session_timeout_s)

    @property
    def _group(self) -> str:
        return str(self._cfg.kafka_python["group_id"])

    @property
    def _lost(self) -> bool:
        """This member knows it lost its membership (until its next assignment)."""
        return bool(self._commits.fenced)

    @_lost.setter
    def _lost(self, value: bool) -> None:
        self._commits.fenced = value

    def _join_failed(self, exc: BaseException | None) -> None:
        if isinstance(exc, _FATAL_JOIN_ERRORS):
            raise ConsumerGroupError(f"group {self._group}: cannot join: {exc!r}") from exc
        log.warning("group %s: join attempt failed (%r); retrying", self._group, exc)

    def _handle(self, event: RebalanceEvent) -> None:
        """One rebalance step on the application thread; the join waits until it is finished."""
        error: BaseException | None = None
        try:
            if event.kind == ASSIGN:
                self._lost = False
                self._assign(event.partitions)
            elif event.kind == REVOKE:
                self._revoke([p for p in event.partitions if p in self._owned])
            elif event.kind == LOST:
                lost = [p for p in event.partitions if p in self._owned]
                if lost:  # else already handled when the drive saw the generation reset
                    self._lose(lost, "membership lost")
        except BaseException as exc:  # the join continues; the application sees its error
            error = exc
        finally:
            self._bridge.finish(event, error)
        if error is not None:
            raise error

    def _call(self, callback: Callback | None, partitions: list[Partition]) -> bool:
        """Run an application callback; True when it called assign/unassign itself."""
        if callback is None:
            return False
        self._in_callback, self._callback_assigned = True, False
        try:
            callback(self, [confluent_tp(t, p) for t, p in partitions])
        finally:
            self._in_callback = False
        return self._callback_assigned

    def _assign(self, partitions: list[Partition]) -> None:
        new = [p for p in partitions if p not in self._owned] if self._cooperative else partitions
        handled = self._call(self._on_assign, new)
        if not handled:
            tps = self._start_offsets(new)
            if self._cooperative:
                if tps:
                    self._rk.incremental_assign(tps)
            else:
                self._rk.assign(tps)
        self._owned = self._owned | set(new) if self._cooperative else set(partitions)

    def _start_offsets(self, partitions: list[Partition]) -> list[Any]:
        """The partitions with the offsets librdkafka starts from: the group's committed offsets read
        through this member's coordinator (the one that just completed the join); none committed →
        ``auto.offset.reset``. Left to read them itself (``OFFSET_INVALID``), librdkafka asks its own
        coordinator, and an OffsetFetch answered NOT_COORDINATOR for the whole request (a coordinator
        moving) leaves the partitions unfetched for good (librdkafka issue #5586; seen in the soak as
        members owning partitions and consuming nothing for minutes). If the read fails, librdkafka
        reads them as before."""
        if not partitions:
            return []
        from kafka import TopicPartition as KafkaTopicPartition

        try:
            committed = self._coordinator.fetch_committed_offsets(
                {KafkaTopicPartition(t, p) for t, p in partitions}, timeout_ms=COMMIT_TIMEOUT_MS)
        except kafka_errors.KafkaError as exc:
            log.warning("group %s: committed offsets not read (%r); librdkafka reads them", self._group, exc)
            return [confluent_tp(t, p) for t, p in partitions]
        reset = _RESET_OFFSETS.get(str(self._cfg.librdkafka.get("auto.offset.reset", "largest")).lower(),
                                   confluent_kafka.OFFSET_INVALID)
        out = []
        for topic, partition in partitions:
            meta = committed.get(KafkaTopicPartition(topic, partition))
            out.append(confluent_tp(topic, partition, meta.offset if meta is not None and meta.offset >= 0
                                    else reset))
        return out

    def _revoke(self, partitions: list[Partition]) -> None:
        if not partitions:  # nothing owned: no callback (librdkafka calls none either)
            return
        if not self._lost:  # the application's queued commits land before the partitions move
            self._commits.flush(COMMIT_TIMEOUT_MS / 1000)
        if self._cfg.auto_commit and not self._lost and partitions:
            try:
                self._commits.commit(self._commits.stored_offsets(partitions), asynchronous=False)
            except CommitFailedError as exc:
                log.warning("group %s: commit before revocation refused: %s", self._group, exc)
        handled = self._call(self._on_revoke, partitions)
        self._drop(partitions, handled)

    def _lose(self, partitions: list[Partition], why: str) -> None:
        """Membership lost: the partitions may already be someone else's; no commit is tried."""
        self._lost = True
        self._commits.fail_pending(f"group {self._group}: {why}; commit not sent")
        log.warning("group %s: %s; partitions lost: %s", self._group, why, partitions)
        if self._error_cb is not None:
            self._error_cb(confluent_kafka.KafkaError(confluent_kafka.KafkaError._ASSIGNMENT_LOST,
                                                      f"group {self._group}: {why}"))
        if not partitions:
            return
        handled = self._call(self._on_lost if self._on_lost is not None else self._on_revoke, partitions)
        self._drop(partitions, handled)

    def _drop(self, partitions: list[Partition], handled: bool) -> None:
        if not handled:
            if self._cooperative:
                if partitions:
                    self._rk.incremental_unassign([confluent_tp(t, p) for t, p in partitions])
            else:
                self._rk.unassign()
        gone = set(partitions)
        self._owned = self._owned - gone if self._cooperative else set()
        self._commits.forget(gone)

    def _revoke_all(self) -> None:
        for event in self._bridge.release_all():
            log.debug("group %s: %s released at close", self._group, event.kind)
        if self._owned:
            if self._lost or self._coordinator._generation.is_lost():
                self._lose(sorted(self._owned), "membership lost before close")
            else:
                self._revoke(sorted(self._owned))

    # --- manual assignment calls (inside callbacks, as confluent-kafka allows) -----------------
    def assign(self, partitions: list[Any]) -> None:
        self._callback_assigned = self._in_callback
        self._rk.assign(partitions)

    def unassign(self) -> None:
        self._callback_assigned = self._in_callback
        self._rk.unassign()

    def incremental_assign(self, partitions: list[Any]) -> None:
        self._callback_assigned = self._in_callback
        self._rk.incremental_assign(partitions)

    def incremental_unassign(self, partitions: list[Any]) -> None:
        self._callback_assigned = self._in_callback
        self._rk.incremental_unassign(partitions)

    def assignment(self) -> list[Any]:
        """The partitions this member owns in the group (librdkafka fetches exactly these)."""
        return [confluent_tp(t, p) for t, p in sorted(self._owned)]

    def rebalance_protocol(self) -> str:
        return "COOPERATIVE" if self._cooperative else "EAGER"

    def memberid(self) -> str | None:
        member_id = self._coordinator.group_metadata().member_id
        return str(member_id) if member_id else None

    def group_metadata(self) -> Any:
        """kafka-python's ConsumerGroupMetadata (group, generation, member id, instance id, state)."""
        return self._coordinator.group_metadata()

    def consumer_group_metadata(self) -> bytes:
        """For ``Producer.send_offsets_to_transaction``: librdkafka's serialized group metadata
        carrying this member's current generation and member id (kafka-python's), so the broker
        refuses the transactional offset commit of a member no longer in that generation.

        Raises :class:`~kafka_placement.errors.CommitFailedError` while the member is not in a
        generation (before it has joined, after ``on_lost`` until its next assignment): generation
        -1 with no member id is accepted by the broker for a transactional commit even while the
        group has members (Kafka's ``ClassicGroup.validateOffsetCommit``), so handing it out would
        skip the fencing.
        """
        self._check_open()
        current = self._coordinator.group_metadata()
        if self._lost or current.generation_id < 0 or not current.member_id:
            raise CommitFailedError(
                f"group {self._group}: consumer_group_metadata(): this member is not in a generation "
                f"(generation {current.generation_id}, member id {current.member_id!r}); "
                "abort the transaction and wait for the next assignment"
            )
        return librdkafka_group_metadata(GroupMetadata(
            group_id=self._group, generation_id=current.generation_id, member_id=current.member_id,
            group_instance_id=current.group_instance_id))

    # --- offsets ------------------------------------------------------------------------------
    def store_offsets(self, message: Any = None, offsets: list[Any] | None = None) -> None:
        """Store offsets for the next commit (``enable.auto.offset.store=false``), like librdkafka."""
        self._commits.store(message, offsets)

    def commit(self, message: Any = None, offsets: list[Any] | None = None, asynchronous: bool = True) -> Any:
        """Commit through the group coordinator with this member's generation and member id.

        Without ``message``/``offsets``: the stored offsets of the assignment (the position after
        the last message delivered, or ``store_offsets()``). Refused with
        :class:`~kafka_placement.errors.CommitFailedError` when the member is not in the current
        generation. Asynchronous results go to the ``on_commit`` callback.
        """
        self._check_open()
        if message is not None or offsets is not None:
            to_commit = offsets_of(message, offsets)
        else:
            to_commit = self._commits.stored_offsets(self._owned)
            if not to_commit:  # librdkafka's answer, to the letter
                error = confluent_kafka.KafkaError(_NO_OFFSET, "Local: No offset stored")
                raise confluent_kafka.KafkaException(error)
        return self._commits.commit(to_commit, asynchronous=asynchronous)

    # --- closing ------------------------------------------------------------------------------
    def close(self) -> None:
        """Revoke (committing first when auto-commit is on), leave the group at once, close both
        clients."""
        if self._closed:
            return
        try:
            if self._subscribed:
                self._revoke_all()
            self._commits.flush(COMMIT_TIMEOUT_MS / 1000)  # librdkafka waits for its commits too
            self._commits.deliver()
        finally:
            self._closed = True
            try:
                self._kc.close(autocommit=False, timeout_ms=COMMIT_TIMEOUT_MS)
            finally:
                self._rk.close()

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("Consumer closed")

    def __getattr__(self, name: str) -> Any:
        # everything else is librdkafka's (seek, pause, resume, position, committed, ...)
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._rk, name)

    def __enter__(self) -> Consumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
