"""An idempotent aiokafka producer that takes a new producer id when the broker refuses its sequence.

aiokafka (0.14) gives each batch its sequence number once, when the batch is first sent. A batch that
fails after that leaves a gap: for example a retried batch that expires while its partition has no
leader. The broker then refuses every later batch of that partition with OUT_OF_ORDER_SEQUENCE_NUMBER.
aiokafka fails each of them and goes on counting from the gap, so the partition takes nothing from
that producer again. UNKNOWN_PRODUCER_ID does the same once the broker no longer holds the producer's
state. This is aio-libs/aiokafka#1017 ("producing messages stops until we restart pods").

Java's producer recovers from both. It bumps the producer epoch and starts the partition's sequences
again (KIP-360, https://cwiki.apache.org/confluence/display/KAFKA/KIP-360%3A+Improve+reliability+of+
idempotent%2Ftransactional+producer). :func:`mend_sequence_reset` does the same for an idempotent,
non-transactional aiokafka producer, with a new producer id rather than a bumped epoch (aiokafka's
InitProducerId asks for no particular id).

When a batch fails with either error, the producer drops its producer id and starts every partition's
sequence again at 0. aiokafka's sender asks for a new producer id before it sends its next batch. The
refused batch stays failed as aiokafka reports it: the broker refused it, so its records were not
written. Later batches are written under the new id. A batch retried across the change keeps the id
and sequence it was first sent with; if the broker refuses that too, the same happens again.

aiokafka has no public hook here. The private names are in :data:`PRIVATE_NAMES`, and
``unit_tests/clients/test_aiokafka_sequence_reset.py`` checks them against the installed release.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from aiokafka.errors import OutOfOrderSequenceNumber, UnknownProducerId
from aiokafka.producer.transaction_manager import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, PidAndEpoch

__all__ = ["PRIVATE_NAMES", "SequenceResets", "mend_sequence_reset"]

log = logging.getLogger(__name__)

#: What the mend reaches of aiokafka 0.14, none of it public: the producer's ``_sender``, the sender's
#: ``_send_produce_req(node_id, batches)`` coroutine and ``_txn_manager``, and the transaction manager's
#: producer id (``_pid_and_epoch``), the future ``wait_for_pid()`` awaits (``_pid_waiter``) and its
#: per-partition sequences (``_sequence_numbers``).
PRIVATE_NAMES = (
    "AIOKafkaProducer._sender",
    "Sender._send_produce_req",
    "Sender._txn_manager",
    "TransactionManager._pid_and_epoch",
    "TransactionManager._pid_waiter",
    "TransactionManager._sequence_numbers",
)

#: The broker's answers after which the producer's sequences can never line up again.
_SEQUENCE_LOST = (OutOfOrderSequenceNumber, UnknownProducerId)


@dataclass
class SequenceResets:
    """What the mend did on one producer: each reset, as ``<error> on <topic>-<partition> (producer id
    <old>)``."""

    resets: list[str] = field(default_factory=list)


def mend_sequence_reset(producer: Any) -> SequenceResets | None:
    """Mend ``producer`` (an ``aiokafka.AIOKafkaProducer``) as the module docstring says, when it is
    idempotent and not transactional (a transaction refused its sequence is the transaction's to abort);
    idempotent. Returns the record of its resets, or None when nothing needed mending."""
    sender = producer._sender
    txn = sender._txn_manager
    if txn is None or txn.transactional_id is not None:
        return None
    done = getattr(sender, "_kafka_placement_sequence_resets", None)
    if isinstance(done, SequenceResets):
        return done
    record = SequenceResets()
    send_produce_req: Callable[[int, dict[Any, Any]], Coroutine[Any, Any, None]] = sender._send_produce_req

    async def send_and_check(node_id: int, batches: dict[Any, Any]) -> None:
        await send_produce_req(node_id, batches)
        # The request is over: nothing of it runs until the sender's loop next drains (no await
        # between here and the reset), so the next batch is stamped under the new producer id.
        refused = next(
            ((tp, error) for tp, batch in batches.items() if (error := _sequence_lost(batch)) is not None),
            None,
        )
        if refused is not None and txn.has_pid():
            tp, error = refused
            record.resets.append(
                f"{type(error).__name__} on {tp.topic}-{tp.partition} (producer id {txn.producer_id})"
            )
            log.warning(
                "idempotent producer: the broker refused %s-%d's sequence (%s); taking a new producer id",
                tp.topic,
                tp.partition,
                type(error).__name__,
            )
            _forget_producer_id(txn)

    sender._send_produce_req = send_and_check
    sender._kafka_placement_sequence_resets = record
    return record


def _sequence_lost(batch: Any) -> BaseException | None:
    future = batch.future
    if not future.done() or future.cancelled():
        return None
    error = future.exception()
    return error if isinstance(error, _SEQUENCE_LOST) else None


def _forget_producer_id(txn: Any) -> None:
    """No producer id and every sequence back at 0: aiokafka's sender asks for a new id
    (InitProducerId) before the next batch, and ``wait_for_pid()`` waits for it again."""
    txn._pid_and_epoch = PidAndEpoch(NO_PRODUCER_ID, NO_PRODUCER_EPOCH)
    txn._pid_waiter = asyncio.get_running_loop().create_future()
    txn._sequence_numbers.clear()
