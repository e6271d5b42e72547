"""The producer-id reset mend, on kafka-python's own ``TransactionManager`` (no broker needed: the
manager is a state machine the sender consults)."""

from __future__ import annotations

from types import SimpleNamespace

from kafka.producer.transaction_manager import ProducerIdAndEpoch, TransactionManager, TransactionState

from kafka_placement.clients.kafka_python.producer_id_reset import mend_producer_id_reset


def _ready_idempotent_manager() -> TransactionManager:
    """An idempotent producer's manager after its first InitProducerId: READY with id 1000."""
    manager = TransactionManager()
    manager.init_producer_id()  # UNINITIALIZED -> INITIALIZING, handler queued
    manager._pending_requests.clear()  # as if the sender had sent it
    manager.set_producer_id_and_epoch(ProducerIdAndEpoch(1000, 0))
    manager._transition_to(TransactionState.READY)
    return manager


def test_a_reset_producer_asks_for_a_new_id_as_java_does() -> None:
    manager = _ready_idempotent_manager()
    assert mend_producer_id_reset(SimpleNamespace(_transaction_manager=manager))
    manager.reset_producer_id()  # what the sender does when a sent batch expires
    assert not manager.has_producer_id()
    assert manager._current_state == TransactionState.UNINITIALIZED
    manager.init_producer_id()  # the sender's next loop
    assert manager._current_state == TransactionState.INITIALIZING
    handler = manager.next_request_handler(has_incomplete_batches=True)
    assert handler is not None and type(handler).__name__ == "InitProducerIdHandler"


def test_without_the_mend_kafka_python_waits_for_an_id_it_never_asks_for() -> None:
    """The stall itself (kafka-python 3.0.12): if this fails, kafka-python fixed it and the mend is a
    no-op there (the next test) — then the mend can go."""
    manager = _ready_idempotent_manager()
    manager.reset_producer_id()
    manager.init_producer_id()
    assert manager._current_state == TransactionState.READY and not manager.has_producer_id()
    assert manager.next_request_handler(has_incomplete_batches=True) is None


def test_the_mend_changes_nothing_where_the_reset_already_uninitialises() -> None:
    manager = _ready_idempotent_manager()
    calls = []

    def fixed_reset() -> None:  # a kafka-python that moves to UNINITIALIZED itself
        calls.append(1)
        manager.set_producer_id_and_epoch(ProducerIdAndEpoch(-1, -1))
        manager._current_state = TransactionState.UNINITIALIZED

    manager.reset_producer_id = fixed_reset  # type: ignore[method-assign]
    mend_producer_id_reset(SimpleNamespace(_transaction_manager=manager))
    manager.reset_producer_id()
    assert calls == [1] and manager._current_state == TransactionState.UNINITIALIZED


def test_not_patched_without_idempotence_or_with_transactions() -> None:
    assert not mend_producer_id_reset(SimpleNamespace(_transaction_manager=None))
    transactional = TransactionManager(transactional_id="tx-1")
    assert not mend_producer_id_reset(SimpleNamespace(_transaction_manager=transactional))
