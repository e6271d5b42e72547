"""The request-timeout mend, on kafka-python's own ``TransactionManager`` and ``InitProducerIdHandler``
(no broker needed: the sender hands the handler its request's outcome through ``on_complete``)."""

from __future__ import annotations

from types import SimpleNamespace

from kafka import errors
from kafka.producer.transaction_manager import TransactionManager, TransactionState

from kafka_placement.clients.kafka_python.producer_request_timeout import mend_request_timeout_retry


def _sent_init_producer_id(mended: bool) -> tuple[TransactionManager, object]:
    """An idempotent producer's manager whose InitProducerId the sender has just sent (correlation 7)."""
    manager = TransactionManager()
    if mended:
        assert mend_request_timeout_retry(SimpleNamespace(_transaction_manager=manager))
    manager.init_producer_id()  # UNINITIALIZED -> INITIALIZING, handler queued
    handler = manager.next_request_handler(has_incomplete_batches=True)
    assert handler is not None and type(handler).__name__ == "InitProducerIdHandler"
    manager._in_flight_request_correlation_id = 7  # as the sender records it
    return manager, handler


def test_an_init_producer_id_that_timed_out_is_sent_again_as_java_does() -> None:
    manager, handler = _sent_init_producer_id(mended=True)
    handler.on_complete(7, errors.RequestTimedOutError("Request timed out after 14999 ms"))  # type: ignore[attr-defined]
    assert not manager.has_fatal_error()
    assert manager._current_state == TransactionState.INITIALIZING
    again = manager.next_request_handler(has_incomplete_batches=True)
    assert again is handler  # the same request, queued again
    # and it still completes normally afterwards (a disconnect is retried as before)
    manager._in_flight_request_correlation_id = 8
    again.on_complete(8, errors.KafkaConnectionError("socket disconnected"))  # type: ignore[attr-defined]
    assert manager.next_request_handler(has_incomplete_batches=True) is handler


def test_without_the_mend_one_timeout_makes_kafka_python_fail_the_producer_for_good() -> None:
    """The failure itself (kafka-python 3.0.12): if this fails, kafka-python fixed it and the mend can go."""
    manager, handler = _sent_init_producer_id(mended=False)
    handler.on_complete(7, errors.RequestTimedOutError("Request timed out after 14999 ms"))  # type: ignore[attr-defined]
    assert manager.has_fatal_error()
    assert "unknown reasons" in str(manager._last_error)


def test_other_client_errors_stay_as_kafka_python_decides() -> None:
    manager, handler = _sent_init_producer_id(mended=True)
    handler.on_complete(7, errors.UnsupportedVersionError("InitProducerId"))  # type: ignore[attr-defined]
    assert manager.has_fatal_error()


def test_not_patched_without_idempotence() -> None:
    assert not mend_request_timeout_retry(SimpleNamespace(_transaction_manager=None))
