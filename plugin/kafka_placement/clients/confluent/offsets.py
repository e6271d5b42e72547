"""Offsets and commits of one :class:`~kafka_placement.clients.confluent.consumer.Consumer`.

Commits go through kafka-python's ``ConsumerCoordinator`` (OffsetCommit with the member's
generation id and member id, so the broker refuses a stale member); a member that knows it lost
its membership refuses them itself first (:attr:`GroupCommitter.fenced`). Offsets to commit without
arguments are librdkafka's "stored offsets": the position after the last delivered message
(``enable.auto.offset.store=true``), or what the application stored with ``store_offsets()``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import confluent_kafka
from kafka import errors as kafka_errors
from kafka.structs import OffsetAndMetadata
from kafka.structs import TopicPartition as KafkaTopicPartition

from kafka_placement.errors import CommitFailedError, ConsumerConfigError

log = logging.getLogger(__name__)

Partition = tuple[str, int]
#: Bound on a synchronous commit (and on close()'s LeaveGroup).
COMMIT_TIMEOUT_MS = 5000
_COMMIT_REFUSED = (
    kafka_errors.CommitFailedError,
    kafka_errors.IllegalGenerationError,
    kafka_errors.UnknownMemberIdError,
    kafka_errors.RebalanceInProgressError,
    kafka_errors.FencedInstanceIdError,
)


def confluent_tp(topic: str, partition: int, offset: int = confluent_kafka.OFFSET_INVALID) -> Any:
    return confluent_kafka.TopicPartition(topic, partition, offset)


def offsets_of(message: Any, offsets: Iterable[Any] | None) -> dict[Partition, int]:
    """``commit(message=...)`` commits the message's offset + 1; ``offsets=`` as given."""
    if message is not None and offsets is not None:
        raise ConsumerConfigError("give message or offsets, not both")
    if message is not None:
        if message.error() is not None:
            raise ConsumerConfigError(f"cannot commit an error message: {message.error()}")
        return {(message.topic(), message.partition()): message.offset() + 1}
    return {(tp.topic, tp.partition): tp.offset for tp in offsets or ()}


class GroupCommitter:
    """The offset store and the commits of one group member."""

    def __init__(
        self,
        rdkafka: Any,
        coordinator: Any,
        group: str,
        *,
        auto_offset_store: bool,
        on_commit: Callable[..., Any] | None,
    ) -> None:
        self._rk = rdkafka
        self._coordinator = coordinator
        self.group = group
        self.auto_offset_store = auto_offset_store
        self.on_commit = on_commit
        self.stored: dict[Partition, int] = {}
        #: set while this member knows it lost its membership: every commit is refused
        self.fenced = False

    def store(self, message: Any, offsets: Iterable[Any] | None) -> None:
        if self.auto_offset_store:
            raise ConsumerConfigError("store_offsets() requires enable.auto.offset.store=false")
        self.stored.update(offsets_of(message, offsets))

    def forget(self, partitions: Iterable[Partition]) -> None:
        for p in partitions:
            self.stored.pop(p, None)

    def stored_offsets(self, partitions: Iterable[Partition]) -> dict[Partition, int]:
        parts = sorted(partitions)
        if not parts:
            return {}
        if not self.auto_offset_store:
            return {p: self.stored[p] for p in parts if p in self.stored}
        positions = self._rk.position([confluent_tp(t, p) for t, p in parts])
        return {(tp.topic, tp.partition): tp.offset for tp in positions if tp.offset >= 0}

    def commit(self, offsets: Mapping[Partition, int], asynchronous: bool) -> Any:
        """Commit ``offsets``; sync returns the committed partitions, async returns None and
        reports to ``on_commit``. Refused → :class:`~kafka_placement.errors.CommitFailedError`."""
        if self.fenced:
            raise CommitFailedError(
                f"group {self.group}: commit refused, this member lost its group membership; its "
                "partitions may be consumed by another member now"
            )
        if not offsets:
            return None if asynchronous else []
        kafka_offsets = {
            KafkaTopicPartition(t, p): OffsetAndMetadata(o, "", -1) for (t, p), o in offsets.items()
        }
        if asynchronous:
            self._coordinator.commit_offsets_async(kafka_offsets, callback=self._async_done)
            return None
        try:
            self._coordinator.commit_offsets_sync(kafka_offsets, timeout_ms=COMMIT_TIMEOUT_MS)
        except _COMMIT_REFUSED as exc:
            raise CommitFailedError(
                f"group {self.group}: commit refused for generation "
                f"{self._coordinator.group_metadata().generation_id}: {exc}"
            ) from exc
        except kafka_errors.KafkaError as exc:
            raise CommitFailedError(f"group {self.group}: commit failed: {exc!r}") from exc
        return [confluent_tp(t, p, o) for (t, p), o in sorted(offsets.items())]

    def _async_done(self, offsets: Mapping[Any, Any], result: Any) -> None:
        """kafka-python's completion callback (called from the application's poll())."""
        error = None
        if isinstance(result, BaseException):
            log.warning("group %s: asynchronous commit failed: %r", self.group, result)
            error = confluent_kafka.KafkaError(confluent_kafka.KafkaError._FAIL, f"commit failed: {result!r}")
        if self.on_commit is not None:
            parts = [confluent_tp(tp.topic, tp.partition, om.offset) for tp, om in sorted(offsets.items())]
            self.on_commit(error, parts)
