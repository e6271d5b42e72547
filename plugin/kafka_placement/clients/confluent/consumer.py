"""A drop-in ``confluent_kafka.Consumer`` whose group runs our assignors.

librdkafka has no hook for a custom assignor, so the work is split between two mature clients:

- librdkafka (``confluent_kafka.Consumer``) fetches, with manual ``assign()`` /
  ``incremental_assign()``; it never subscribes, never joins, never commits;
- kafka-python's classic-group ``ConsumerCoordinator`` (inside a ``KafkaConsumer`` that never
  fetches) keeps the membership: JoinGroup/SyncGroup with our assignor
  (:mod:`kafka_placement.clients.kafka_python.assignors`), heartbeats, LeaveGroup, and the
  offset commits, which carry its generation and member id (fencing is the broker's).

The application thread drives both: every ``poll()``/``consume()`` (:mod:`.poll_loop`, which cuts
its wait into librdkafka's and the group's turns) takes the rebalance events
kafka-python's IO thread handed over (:mod:`.thread_handoff`, the one way between the two threads),
applies them to librdkafka, calls the application's ``on_assign``/``on_revoke``/``on_lost`` like
confluent-kafka does (:mod:`.rebalance_applier`, which owns the member's state:
:mod:`kafka_placement.groups.membership`), and starts a join when the coordinator needs one
(:mod:`.group_driver`). The join runs to its end in one coroutine (never split across polls — the
kafka-python 3.0.12 bug of ``docs/assignment.md``), and a
:class:`~kafka_placement.clients.kafka_python.join_watchdog.JoinWatchdog` rescues any other
stuck state. kafka-python's private parts are reached only in :mod:`.kafka_python_group`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import confluent_kafka
from kafka import KafkaConsumer

from kafka_placement.clients.confluent.commit_connection import CommitConnection
from kafka_placement.clients.confluent.consumer_config import SplitConfig, split_config
from kafka_placement.clients.confluent.consumer_group_metadata import member_group_metadata
from kafka_placement.clients.confluent.fencing_guard import FencingGuard
from kafka_placement.clients.confluent.fetch_stall import DEFAULT_STALL_TIMEOUT_S, FetchStallMonitor
from kafka_placement.clients.confluent.group_driver import METADATA_WAIT_S as METADATA_WAIT_S
from kafka_placement.clients.confluent.group_driver import GroupDriver
from kafka_placement.clients.confluent.kafka_python_group import KafkaPythonGroup
from kafka_placement.clients.confluent.librdkafka_methods import (
    SUPPORTED_LIBRDKAFKA_METHODS,
    LibrdkafkaMethods,
)
from kafka_placement.clients.confluent.offsets import (
    COMMIT_TIMEOUT_MS,
    GroupCommitter,
    confluent_tp,
    offsets_of,
)
from kafka_placement.clients.confluent.poll_loop import PollLoop
from kafka_placement.clients.confluent.protocol_member import consumer_protocol_member
from kafka_placement.clients.confluent.rebalance_applier import RebalanceApplier
from kafka_placement.clients.confluent.subscription import read_subscription
from kafka_placement.clients.confluent.thread_handoff import RebalanceBridge, ThreadHandoff
from kafka_placement.clients.consumer_protocol import is_consumer_protocol
from kafka_placement.clients.kafka_python.owned_partitions import claim_current_assignment
from kafka_placement.clients.kafka_python.partition_counts import watch_partition_counts
from kafka_placement.clients.kafka_python.tls_handshake import bound_client_tls_handshakes
from kafka_placement.errors import ConsumerConfigError
from kafka_placement.groups.membership import Membership, Phase

__all__ = ["SUPPORTED_LIBRDKAFKA_METHODS", "Consumer"]

_monotonic = time.monotonic
_NO_OFFSET = confluent_kafka.KafkaError._NO_OFFSET
Callback = Callable[..., Any]


class Consumer(LibrdkafkaMethods):
    """``confluent_kafka.Consumer`` with a group run by our assignors.

    ``config`` is confluent-kafka's dict. ``assignor`` is one of our kafka-python assignors
    (``FailoverAssignor(priority=10)``), a strategy name (``"cooperative-sticky"``) or a list of
    them; alternatively ``partition.assignment.strategy`` in ``config`` names ours (never both).
    ``enable.auto.commit`` (default true) is implemented by this class exactly as librdkafka does:
    stored offsets every ``auto.commit.interval.ms``, before a revocation and at close. Besides the
    group's methods implemented here, librdkafka's own are offered as they are:
    :data:`SUPPORTED_LIBRDKAFKA_METHODS` (``seek``, ``pause``, ``resume``, ``position``,
    ``committed``, ``get_watermark_offsets``, ``list_topics``, ``offsets_for_times``, ...); nothing
    else is forwarded.

    ``fetch_stall_timeout_s`` (default 120 s; None: off): a partition librdkafka keeps assigned but has
    fetched nothing of (no fetch answered) for that long, whatever its leader, or that has had no leader
    for that long, whatever an earlier assignment fetched of it, makes ``poll()`` and
    ``consume()`` raise :class:`~kafka_placement.errors.FetchStalledError` naming it — librdkafka 2.16
    can keep a partition so after a broker leaves the cluster's metadata and comes back, or keep every
    partition leaderless once its broker connections never come up again
    (:mod:`~kafka_placement.clients.confluent.fetch_stall`); close the consumer and create a new one.
    It reads librdkafka's statistics every 5 s; an application ``stats_cb`` still gets them.

    With ``group.protocol=consumer`` (KIP-848) the broker's assignor runs instead and no Python-side
    membership is needed: build that consumer with :meth:`for_consumer_protocol`, which returns a plain
    ``confluent_kafka.Consumer``; ``Consumer(config)`` refuses it.
    """

    @staticmethod
    def for_consumer_protocol(
        config: Mapping[str, Any],
        *,
        preflight: bool = True,
        fencing_guard: FencingGuard | bool = True,
        **kwargs: Any,
    ) -> confluent_kafka.Consumer:
        """A ``group.protocol=consumer`` (KIP-848) member: librdkafka's own ``confluent_kafka.Consumer``
        for ``config`` as given (settings from
        :func:`kafka_placement.clients.consumer_protocol.confluent_failover_config`), after
        :func:`~kafka_placement.clients.confluent.join_preflight.consumer_protocol_preflight` checked
        that joining neither spreads nor fails a failover group (``preflight=False`` skips it).

        ``fencing_guard``: a :class:`~.fencing_guard.FencingGuard` pauses the member's partitions while
        its group coordinator is silent for about a session (the broker has likely fenced it, and
        librdkafka would go on consuming until it hears so). True (the default): one for Kafka's default
        session timeout (45 s); give your own for the group's, or False for none."""
        return consumer_protocol_member({**config, **kwargs}, preflight, fencing_guard)

    def __init__(
        self,
        config: Mapping[str, Any],
        *,
        assignor: object | None = None,
        fetch_stall_timeout_s: float | None = DEFAULT_STALL_TIMEOUT_S,
        **kwargs: Any,
    ) -> None:
        if kwargs:  # confluent-kafka also takes settings as keywords (logger=...)
            config = {**config, **kwargs}
        if is_consumer_protocol(config):
            raise ConsumerConfigError(
                "group.protocol=consumer: the broker assigns (KIP-848), no Python-side membership runs; "
                "build it with Consumer.for_consumer_protocol(config)"
                + (
                    f" (assignor={assignor!r} runs on the classic protocol only)"
                    if assignor is not None
                    else ""
                )
            )
        self._cfg: SplitConfig = split_config(config, assignor)
        self._cooperative = self._cfg.cooperative
        self._error_cb: Callback | None = config.get("error_cb")
        #: the partitions the application paused (pause()/resume()): never judged stalled
        self._app_paused: set[tuple[str, int]] = set()
        self._fetch_stall: FetchStallMonitor | None = None
        librdkafka_config = self._cfg.librdkafka
        if fetch_stall_timeout_s is not None:
            self._fetch_stall = FetchStallMonitor(
                fetch_stall_timeout_s, str(config.get("group.id")), self._app_paused
            )
            librdkafka_config = self._fetch_stall.settings(librdkafka_config)
        self._rk = confluent_kafka.Consumer(librdkafka_config)
        self._rk_poll = self._rk.poll  # bound once: poll() calls it per record
        try:
            self._kc = KafkaConsumer(**self._cfg.kafka_python)
        except Exception:
            self._rk.close()
            raise
        watch_partition_counts(self._kc)
        claim_current_assignment(self._kc)  # a cooperative member rejoining after a loss claims nothing
        bound_client_tls_handshakes(self._kc)  # its metadata must not wait on a silent broker for ever
        group = KafkaPythonGroup(self._kc)
        self._coordinator = group.coordinator
        self._handoff = ThreadHandoff(group.call_soon)
        self._bridge = RebalanceBridge(self._handoff)
        membership = Membership()
        # synchronous commits on a connection of their own, answered on the application thread
        self._commit_connection = CommitConnection(group, self._kc.config)
        self._commits = GroupCommitter(
            self._rk,
            group,
            self._handoff,
            membership,
            self._group,
            auto_offset_store=self._cfg.auto_offset_store,
            on_commit=self._cfg.on_commit,
            error_cb=self._error_cb,
            connection=self._commit_connection,
        )
        self._rebalance = RebalanceApplier(
            self,
            self._rk,
            group,
            membership,
            self._commits,
            self._handoff,
            self._cfg,
            group=self._group,
            error_cb=self._error_cb,
        )
        self._kafka_python = group
        self._driver = GroupDriver(
            group, self._handoff, self._rebalance, self._commits, self._cfg, group=self._group
        )
        self._membership = membership
        self._loop = PollLoop(
            self._rk,
            membership,
            self._driver,
            self._rebalance,
            self._fetch_stall,
            self._cfg.session_timeout_s,
        )

    @property
    def phase(self) -> Phase:
        """The member's state (:class:`~kafka_placement.groups.membership.Phase`)."""
        return self._membership.phase

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
        wanted = read_subscription(
            topics, {"on_assign": on_assign, "on_revoke": on_revoke, "on_lost": on_lost}
        )
        rebalance = self._rebalance
        rebalance.on_assign, rebalance.on_revoke, rebalance.on_lost = on_assign, on_revoke, on_lost
        if wanted.pattern is not None:
            self._kc.subscribe(pattern=wanted.pattern, listener=self._bridge)
        else:
            self._kc.subscribe(list(topics), listener=self._bridge)
        rebalance.subscribe()
        self._driver.subscribed(wanted.literals, _monotonic())
        self._loop.next_drive = 0.0

    def unsubscribe(self) -> None:
        """Leave the group's subscription (revoking everything first). Not from inside a rebalance
        callback (return from it first)."""
        self._check_open()
        self._refuse_in_callback("unsubscribe")
        self._rebalance.unsubscribe(self._kafka_python.generation_lost())
        self._kc.unsubscribe()

    # --- consuming ----------------------------------------------------------------------------
    def poll(self, timeout: float | None = None) -> Any:
        """One message (or event/error message) or None, like ``confluent_kafka.Consumer.poll``."""
        # What a poll-per-record loop pays on top of librdkafka's poll: one clock read, then a message
        # already fetched is returned at once while the group's next turn is not due. Every Python
        # step here is ~0.1 us of the application thread per record, the thread a loaded machine
        # starves first (docs/performance.md, "Where the confluent Consumer's time goes"); the
        # checks (:mod:`.poll_loop`) run at most every DRIVE_INTERVAL_S, and close() makes every call
        # take them.
        if _monotonic() < self._loop.next_drive:
            msg = self._rk_poll(0)
            if msg is not None:
                return msg
        return self._loop.poll_turn(timeout)

    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Any]:
        """Up to ``num_messages`` messages, like ``confluent_kafka.Consumer.consume``."""
        return self._loop.consume(num_messages, timeout)

    # --- librdkafka's pause/resume, remembered: a paused partition is never judged stalled -----------
    def pause(self, partitions: list[Any]) -> None:
        """librdkafka's: stop fetching ``partitions`` (they stay owned)."""
        self._rk.pause(partitions)
        self._app_paused.update((tp.topic, tp.partition) for tp in partitions)

    def resume(self, partitions: list[Any]) -> None:
        """librdkafka's: fetch ``partitions`` again."""
        self._rk.resume(partitions)
        self._app_paused.difference_update((tp.topic, tp.partition) for tp in partitions)

    @property
    def _group(self) -> str:
        return str(self._cfg.kafka_python["group_id"])

    # --- manual assignment calls (inside callbacks, as confluent-kafka allows) -----------------
    def assign(self, partitions: list[Any]) -> None:
        self._rebalance.assigned_by_application()
        self._rk.assign(partitions)

    def unassign(self) -> None:
        self._rebalance.assigned_by_application()
        self._rk.unassign()

    def incremental_assign(self, partitions: list[Any]) -> None:
        self._rebalance.assigned_by_application()
        self._rk.incremental_assign(partitions)

    def incremental_unassign(self, partitions: list[Any]) -> None:
        self._rebalance.assigned_by_application()
        self._rk.incremental_unassign(partitions)

    def assignment(self) -> list[Any]:
        """The partitions this member owns in the group (librdkafka fetches exactly these, each once its
        committed offset is read)."""
        return [confluent_tp(t, p) for t, p in sorted(self._rebalance.owned)]

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
        refuses the transactional offset commit of a member no longer in that generation; refused
        with :class:`~kafka_placement.errors.CommitFailedError` while the member is not in one
        (:func:`~.consumer_group_metadata.member_group_metadata`)."""
        self._check_open()
        current = self._coordinator.group_metadata()
        return member_group_metadata(
            self._group,
            current.generation_id,
            current.member_id,
            current.group_instance_id,
            lost=self._rebalance.lost,
        )

    # --- offsets ------------------------------------------------------------------------------
    def store_offsets(self, message: Any = None, offsets: list[Any] | None = None) -> None:
        """Store offsets for the next commit (``enable.auto.offset.store=false``), like librdkafka."""
        if message is not None and offsets is None:  # per record: the short way
            self._commits.store_message(message)
        else:
            self._commits.store(message, offsets)

    def commit(self, message: Any = None, offsets: list[Any] | None = None, asynchronous: bool = True) -> Any:
        """Commit through the group coordinator with this member's generation and member id.

        Without ``message``/``offsets``: the stored offsets of the assignment (the position after
        the last message delivered, or ``store_offsets()``). Refused with
        :class:`~kafka_placement.errors.CommitFailedError` when the member is not in the current
        generation. Asynchronous results go to the ``on_commit`` callback.
        """
        if message is not None and offsets is None and asynchronous:  # per record: the short way
            if not self._membership.open:
                raise RuntimeError("Consumer closed")
            return self._commits.commit_message_async(message)
        self._check_open()
        if message is not None or offsets is not None:
            to_commit = offsets_of(message, offsets)
        else:
            to_commit = self._commits.stored_offsets(self._rebalance.owned)
            if not to_commit:  # librdkafka's answer, to the letter
                error = confluent_kafka.KafkaError(_NO_OFFSET, "Local: No offset stored")
                raise confluent_kafka.KafkaException(error)
        return self._commits.commit(to_commit, asynchronous=asynchronous)

    # --- closing ------------------------------------------------------------------------------
    def close(self) -> None:
        """Revoke (committing first when auto-commit is on), leave the group at once, close both
        clients. Not from inside a rebalance callback (return from it; then close)."""
        if self._membership.phase is Phase.CLOSED:
            return
        self._refuse_in_callback("close")
        self._loop.next_drive = float("-inf")  # poll() takes its checks (and refuses) from now on
        try:
            if self._membership.open:
                self._rebalance.close(self._kafka_python.generation_lost())
            self._commits.flush(COMMIT_TIMEOUT_MS / 1000)  # librdkafka waits for its commits too
            self._commits.deliver()
        finally:
            self._commit_connection.close()
            try:
                self._kc.close(autocommit=False, timeout_ms=COMMIT_TIMEOUT_MS)
            finally:
                self._rk.close()
                self._rebalance.closed()

    def _refuse_in_callback(self, call: str) -> None:
        if self._rebalance.in_callback:
            raise RuntimeError(
                f"{call}() called from a rebalance callback: return from the callback, then {call} "
                "(the rebalance step under way finishes first)"
            )

    def _check_open(self) -> None:
        if not self._membership.open:
            raise RuntimeError("Consumer closed")

    def __enter__(self) -> Consumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
