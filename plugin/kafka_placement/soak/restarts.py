"""Brokers of a soak being started again after a kill or pause, each in its own thread, so the load and the
schedule go on while a JVM starts (minutes on a loaded 2-core machine)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from kafka_placement.errors import ClusterError
from kafka_placement.soak.events import Event, Fault

__all__ = ["RESTART_TIMEOUT_S", "Restarts"]

#: bound on one broker's restart; the run goes on past it (the broker is started again at the end)
RESTART_TIMEOUT_S = 300.0


class Restarts:
    """Brokers being started again after a kill or pause, each in a thread (a JVM recovering its logs
    after SIGKILL on a loaded 2-core machine may take minutes): ``…-undone`` is logged when the broker is
    listed again, ``…-slow-restart`` when it is not within :data:`RESTART_TIMEOUT_S`."""

    def __init__(self, cluster: Any, write: Callable[[Event], None]) -> None:
        self.cluster, self.write = cluster, write
        self.threads: dict[int, threading.Thread] = {}

    def start(self, broker: int, kind: str, target: str) -> None:
        def run() -> None:
            try:
                self.cluster.start_broker(broker, timeout_s=RESTART_TIMEOUT_S)
            except ClusterError:
                self.write(Fault(f"{kind}-slow-restart", target, time.time()))
                return
            self.write(Fault(f"{kind}-undone", target, time.time()))

        thread = threading.Thread(target=run, name=f"soak-restart-{broker}", daemon=True)
        thread.start()
        self.threads[broker] = thread

    def pending(self) -> bool:
        return any(thread.is_alive() for thread in self.threads.values())

    def wait(self, timeout_s: float, note: Callable[[str], None]) -> None:
        deadline = time.monotonic() + timeout_s
        for broker, thread in self.threads.items():
            if thread.is_alive() and timeout_s > 0:
                note(f"waiting for broker {broker} to restart")
                thread.join(max(0.0, deadline - time.monotonic()))
