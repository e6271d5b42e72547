"""A kafka-python producer whose sender waits while a leader's broker cannot be reached, as Java's does,
instead of spinning a core.

kafka-python 3.0.12's ``Sender._send_producer_data`` reads ``client.connection_delay(node)`` into
``node_delay_ms`` and makes it the poll timeout when a node with records to send is not ready. But
``KafkaNetClient.connection_delay`` returns *seconds* (``KafkaConnectionManager.connection_delay``:
"Connection delay in seconds"; the client's own ``least_loaded_node_refresh_ms`` multiplies it by 1000),
and 0 while a connection is being set up. So while a partition leader cannot take records (its broker killed
or paused, its link down or silent) the sender polls with a timeout of a fraction of a millisecond, or of
none, again and again. Measured here: one producer at 50 records/s took 97-108 % of a core for the seconds
a killed leader was still named in the metadata; over a 6 s silence of a leader's link the sender thread
spent 6.0-6.4 s of CPU and held the GIL from the application's thread (``test_network_faults_live.py``);
in a 10-minute soak with faults the two kafka-python producers kept the soak's own process at 45-95 % of a
core (docs/reliability.md).

Java's ``ClusterConnectionStates.connectionDelay`` returns the reconnect backoff left while disconnected,
the connection setup timeout while connecting, and "indefinitely" while connected (the connection's own
events wake the poll). :func:`mend_sender_connection_delay` gives one producer's sender exactly that, in
milliseconds, with the producer's ``request_timeout_ms`` as the ceiling of the two waits that Java bounds
by other means (an IO event, a new record or the linger time still end the wait early, as before).
"""

from __future__ import annotations

from typing import Any

__all__ = ["mend_sender_connection_delay", "sender_connection_delay_ms"]


def sender_connection_delay_ms(backoff_s: float, *, ceiling_ms: float) -> float:
    """How long the sender may wait for a node that is not ready, in ms (Java's ``connectionDelay``):
    the reconnect backoff left; else — connecting, or connected but throttled or at its in-flight limit —
    until the connection's next event, at most ``ceiling_ms``. (A node with no connection yet gets the
    ceiling too, where Java says 0: the sender's ``maybe_connect`` right after puts the connect on the
    loop, which ends the wait at once.)"""
    if backoff_s > 0:
        return backoff_s * 1000.0
    return ceiling_ms


def mend_sender_connection_delay(producer: Any) -> bool:
    """Patch ``producer``'s own sender client so that ``connection_delay`` answers in milliseconds with
    Java's meaning (module docstring). Returns whether it was patched."""
    sender = getattr(producer, "_sender", None)
    client = getattr(sender, "_client", None)
    if client is None or getattr(client, "_kafka_placement_delay_ms", False):
        return False
    backoff_s = client.connection_delay  # kafka-python's: the reconnect backoff left, in seconds
    ceiling_ms = float(producer.config["request_timeout_ms"])

    def connection_delay(node_id: Any) -> float:
        return sender_connection_delay_ms(backoff_s(node_id), ceiling_ms=ceiling_ms)

    client.connection_delay = connection_delay
    client._kafka_placement_delay_ms = True
    return True
