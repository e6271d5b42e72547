"""A kafka-python producer that retries a producer-id request which timed out, as Java's does.

kafka-python (3.0.12, the newest release) sends an idempotent producer's InitProducerId (and a
transactional producer's requests) through ``TxnRequestHandler.on_complete``: a ``KafkaConnectionError``
is retried, any other exception is fatal — "Could not execute transactional request for unknown
reasons" — and a fatal manager fails every batch of the producer from then on. A request that timed
out reaches it as ``RequestTimedOutError`` (kafka-python closes the connection when a request times
out), so one slow InitProducerId ends the producer for good. Seen in a 30-minute secured soak at load
average 290: at 10:49:55 an InitProducerId (asked for again after the producer-id reset of
:mod:`.producer_id_reset`) timed out after 15 s, and the producer failed all of its 44,387 later records
over the next 13 minutes while the cluster took the other producers' writes (docs/reliability.md).
Java's ``TransactionManager.TxnRequestHandler.onComplete`` retries a response that "was disconnected",
which is what its ``NetworkClient`` reports for a request that timed out (it disconnects too);
:func:`mend_request_timeout_retry` makes one producer's handlers treat the timeout as the disconnect it is.

A ``RequestTimedOutError`` the *broker* answers (error code 7 in a response) is a response, handled by
the request's own ``handle_response``; this only changes what the client raised itself.
"""

from __future__ import annotations

from typing import Any

__all__ = ["mend_request_timeout_retry"]


def mend_request_timeout_retry(producer: Any) -> bool:
    """Patch ``producer``'s own transaction manager so that each request handler it queues retries a
    request that timed out instead of failing the producer. Returns whether it was patched."""
    manager = getattr(producer, "_transaction_manager", None)
    if manager is None:
        return False  # not idempotent: no producer-id requests
    from kafka import errors

    enqueue = manager._enqueue_request

    def enqueue_request(handler: Any) -> None:
        if not getattr(handler, "_kafka_placement_timeout_retry", False):
            complete = handler.on_complete

            def on_complete(correlation_id: Any, response_or_exc: Any) -> Any:
                if isinstance(response_or_exc, errors.RequestTimedOutError):
                    # the client's own timeout (it closed the connection): a disconnect, retried
                    response_or_exc = errors.KafkaConnectionError(f"request timed out: {response_or_exc}")
                return complete(correlation_id, response_or_exc)

            handler.on_complete = on_complete
            handler._kafka_placement_timeout_retry = True
        enqueue(handler)

    manager._enqueue_request = enqueue_request
    return True
