"""Fixtures shared by the client adapters' tests."""

from __future__ import annotations

import gc
import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest


@pytest.fixture
def kafka_python_clients() -> Iterator[Callable[..., Any]]:
    """A ``kafka_client`` factory for kafka-python consumers that talk to no broker. kafka-python 3.0 does
    not close the client of a constructor that fails after starting it, and a closed client leaves the
    socket of a connection still in flight unclosed (held by the abandoned connect coroutine): this closes
    every client made, then those sockets — else their ResourceWarning surfaces in whichever later test the
    garbage collector happens to run."""
    from kafka.consumer.group import KafkaConsumer

    made: list[Any] = []

    def client(**configs: Any) -> Any:
        made.append(KafkaConsumer.DEFAULT_CONFIG["kafka_client"](**configs))
        return made[-1]

    yield client
    for one in made:
        one.close()
    # what a closed client left: sockets held only by its abandoned connect coroutines
    for obj in gc.get_objects():
        # type(), not isinstance(): a dead weakref proxy among them raises ReferenceError on __class__
        if issubclass(type(obj), socket.socket) and obj.fileno() != -1:
            holders = [getattr(r, "f_code", None) for r in gc.get_referrers(obj)]
            if any(code is not None and "kafka" in code.co_filename for code in holders):
                obj.close()
