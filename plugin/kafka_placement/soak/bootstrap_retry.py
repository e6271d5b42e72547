"""A soak member's client built again while the cluster cannot be reached.

kafka-python's ``KafkaConsumer`` (also the one inside our confluent ``Consumer``) bootstraps in its
constructor and raises when no broker answered within ``bootstrap_timeout_ms``. A member restarted in the
middle of a cluster-wide outage (seed 40: brokers fenced one after another while the controller's event
queue was overloaded, metadata requests unanswered for 10 s) ended with that exception, and its group ran
without it for the rest of the run. An application that must not stop tries again: so does the member,
until it is told to close.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TypeVar

from kafka.errors import KafkaTimeoutError

__all__ = ["BOOTSTRAP_ERRORS", "RETRY_PAUSE_S", "built_when_reachable"]

T = TypeVar("T")
#: What kafka-python 3 raises when it could not bootstrap ("Unable to bootstrap from ...")
BOOTSTRAP_ERRORS: tuple[type[Exception], ...] = (KafkaTimeoutError,)
#: Pause between two attempts
RETRY_PAUSE_S = 1.0

log = logging.getLogger(__name__)


def built_when_reachable(build: Callable[[], T], closing: threading.Event, what: str) -> T | None:
    """``build()``, called again after each bootstrap failure (logged, one line each) until it returns;
    None when ``closing`` is set first. Any other exception is raised."""
    attempt = 0
    while not closing.is_set():
        attempt += 1
        try:
            return build()
        except BOOTSTRAP_ERRORS as exc:
            log.warning("%s: could not bootstrap (attempt %d: %s); trying again", what, attempt, exc)
            closing.wait(RETRY_PAUSE_S)
    return None
