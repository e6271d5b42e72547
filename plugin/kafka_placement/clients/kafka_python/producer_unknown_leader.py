"""A kafka-python producer whose sender goes on when a partition's leader is missing from the
metadata's broker list, instead of failing every turn of its loop for good.

kafka-python 3.0.12's ``Sender._send_producer_data`` calls ``client.maybe_connect(node)`` for every
leader with records ready that is not connected. ``KafkaNetClient.maybe_connect`` (and ``ready``)
swallow only ``NodeNotReadyError``, and ``KafkaConnectionManager.get_connection`` raises
``UnknownBrokerIdError`` for a node id the cluster metadata has no broker for. A KRaft broker leaves a
fenced broker out of a Metadata answer's broker list, while partitions can still name it leader (the
secured soak of session 32: broker 3 fenced and unfenced again and again at load ~180). The exception
ends each ``run_once`` before the sender's poll, and that poll runs the producer's network loop, its
metadata refresh included. So the metadata never changes and the sender raises again about every
30 ms, for good: 721,692 logged tracebacks in 11 minutes, a core's worth of CPU, and nothing sent by
that producer.

Java's producer never ends a send loop on a leader it has no address for: the partition's records wait
and its metadata is refreshed. :func:`mend_sender_unknown_leader` gives one producer's sender client the
same: ``maybe_connect`` and ``ready`` for a node id without broker metadata ask for a metadata update and
report the node not ready (the sender then waits for it as for any node not ready).
"""

from __future__ import annotations

import logging
from typing import Any

from kafka import errors as kafka_errors

__all__ = ["mend_sender_unknown_leader"]

log = logging.getLogger(__name__)


def mend_sender_unknown_leader(producer: Any) -> bool:
    """Patch ``producer``'s own sender client so that a leader without broker metadata is a node not
    ready, with a metadata update asked for (module docstring). Returns whether it was patched."""
    sender = getattr(producer, "_sender", None)
    client = getattr(sender, "_client", None)
    if client is None or getattr(client, "_kafka_placement_unknown_leader", False):
        return False
    maybe_connect, ready = client.maybe_connect, client.ready
    cluster = client.cluster

    def unknown(node_id: Any) -> None:
        log.debug("leader %s has no broker metadata: not ready, metadata update requested", node_id)
        cluster.request_update()

    def mended_maybe_connect(node_id: Any, **kwargs: Any) -> Any:
        try:
            return maybe_connect(node_id, **kwargs)
        except kafka_errors.UnknownBrokerIdError:
            unknown(node_id)
            return None

    def mended_ready(node_id: Any, **kwargs: Any) -> bool:
        try:
            return bool(ready(node_id, **kwargs))
        except kafka_errors.UnknownBrokerIdError:
            unknown(node_id)
            return False

    client.maybe_connect = mended_maybe_connect
    client.ready = mended_ready
    client._kafka_placement_unknown_leader = True
    return True
