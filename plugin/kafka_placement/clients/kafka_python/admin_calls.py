"""What every kafka-python admin call here rests on: the live brokers (``describe_cluster``) and a call
retried while the broker it went to is unreachable (killed, restarting), which is exactly when a
reassignment runs. Used by :mod:`.admin` (snapshots, topics, verification) and :mod:`.reassignment`
(executing moves)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from kafka_placement.vocabulary import Broker

T = TypeVar("T")

#: Client errors of a broker that is down or restarting; a reassignment is exactly when that happens.
#: UnknownBrokerIdError: the broker asked for is not in the client's metadata (killed, not back yet;
#: or the remembered controller was restarted and dropped meanwhile); the request was never sent.
_UNREACHABLE = (
    "KafkaConnectionError",
    "NodeNotReadyError",
    "KafkaTimeoutError",
    "RequestTimedOutError",
    "UnknownBrokerIdError",
)
_RETRIED = (*_UNREACHABLE, "NotControllerError", "LeaderNotAvailableError")
#: How long a call keeps trying other brokers before the error is reported: Java's AdminClient gives a call
#: ``default.api.timeout.ms`` (60,000 by default). 20 s was too short for a loaded cluster whose TLS
#: handshakes each used their 10 s setup deadline (soak seed 45, docs/reliability.md).
RETRY_S = 60.0


def unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` says the broker asked is down or restarting (the request may not have been sent)."""
    return type(exc).__name__ in _UNREACHABLE


def retrying(
    admin: Any, call: Callable[[], T], *, timeout_s: float = RETRY_S, retried: tuple[str, ...] = _RETRIED
) -> T:
    """``call()``, retried while the broker it went to is unreachable (killed, restarting). kafka-python
    keeps the controller id it learnt first; a dead "controller" (in KRaft: the broker the metadata
    named) would fail every later call, so it is forgotten before each retry. ``retried``: the error
    class names retried (a request that must not be sent twice retries only errors raised before
    sending)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return call()
        except Exception as exc:
            if type(exc).__name__ not in retried or time.monotonic() >= deadline:
                raise
            forget_controller(admin)
            time.sleep(0.5)


def forget_controller(admin: Any) -> None:
    """Make kafka-python's admin client ask again which broker takes controller requests."""
    if hasattr(admin, "_controller_id"):
        admin._controller_id = None  # kafka-python private state: re-discovered on the next call


def brokers(admin: Any) -> list[Broker]:
    """Brokers (id, rack) from ``describe_cluster`` (fenced brokers excluded)."""
    info = admin.describe_cluster()
    result = []
    for node in info.get("brokers", []):
        if node.get("is_fenced"):
            continue
        result.append(Broker(int(node["broker_id"]), node.get("rack") or None))
    return sorted(result)
