"""A kafka-python idempotent producer that asks for a new producer id after resetting its old one.

kafka-python (3.0.12, the newest release) resets an idempotent producer's id when a batch already
sent to a broker expires or runs out of retries (``TransactionManager.reset_producer_id``): it sets
the id and epoch to -1 but leaves the state READY, and its state machine forbids going back to
UNINITIALIZED. Its sender asks for a producer id only from UNINITIALIZED, and returns early from
every loop while it has none — so it never asks, never sends and never expires another batch: the
producer stalls for good, every later ``send()`` neither acknowledged nor failed. Reproduced here:
the whole cluster frozen (``docker pause``) longer than ``delivery_timeout_ms`` while records are in
flight; the producer had acknowledged nothing 3+ minutes after the brokers came back (docs/reliability.md).
Java's ``TransactionManager.resetIdempotentProducerId`` moves to UNINITIALIZED, "which will trigger a
new InitProducerId request"; :func:`mend_producer_id_reset` makes one producer's manager do the same.

It changes nothing where kafka-python behaves: only a reset that left the producer READY without an id
is completed, so a kafka-python that fixes this makes it a no-op.
"""

from __future__ import annotations

from typing import Any

__all__ = ["mend_producer_id_reset"]


def mend_producer_id_reset(producer: Any) -> bool:
    """Patch ``producer``'s own transaction manager (idempotent, not transactional) so that
    ``reset_producer_id()`` leaves it UNINITIALIZED, as Java's does. Returns whether it was patched."""
    manager = getattr(producer, "_transaction_manager", None)
    if manager is None or manager.is_transactional():
        return False  # not idempotent; a transactional producer never resets (kafka-python raises)
    from kafka.producer.transaction_manager import TransactionState

    reset = manager.reset_producer_id

    def reset_producer_id() -> None:
        reset()
        with manager._lock:
            if manager._current_state == TransactionState.READY and not manager.has_producer_id():
                # the transition kafka-python's table refuses (UNINITIALIZED is never a target there)
                manager._current_state = TransactionState.UNINITIALIZED

    manager.reset_producer_id = reset_producer_id
    return True
