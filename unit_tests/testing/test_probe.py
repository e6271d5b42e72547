"""Asking a cluster what it is: a failed attempt (nobody listening yet) leaves nothing open."""

from __future__ import annotations

import subprocess
import sys

# In a fresh interpreter: pytest's own bookkeeping keeps tracebacks (and what they hold) alive longer.
_FAILED_DESCRIBE = """
import gc, warnings
warnings.simplefilter("ignore")
warnings.simplefilter("always", ResourceWarning)
import socket, threading
from kafka_placement.testing.probe import describe_brokers, transient_errors
try:
    describe_brokers("127.0.0.1:1", timeout_s=0.5)  # nothing listens on port 1
except transient_errors() as exc:
    print("refused:", type(exc).__name__)
# a listener that accepts and never answers: the connection is made, kafka-python's bootstrap times out
silent = socket.create_server(("127.0.0.1", 0))
held = []
threading.Thread(target=lambda: held.append(silent.accept()), daemon=True).start()
try:
    describe_brokers(f"127.0.0.1:{silent.getsockname()[1]}", timeout_s=0.5)
except transient_errors() as exc:
    print("failed:", type(exc).__name__)
gc.collect()
print("collected")
"""


def test_a_failed_describe_leaves_no_socket_to_the_garbage_collector() -> None:
    # kafka-python keeps a failed KafkaAdminClient's sockets mid-connect; they surfaced as
    # "unclosed <socket>" ResourceWarnings wherever the collector ran next (in CI: inside a later test).
    run = subprocess.run(
        [sys.executable, "-c", _FAILED_DESCRIBE], capture_output=True, text=True, timeout=60, check=True
    )
    assert "refused: ConnectionRefusedError" in run.stdout
    assert "failed: KafkaTimeoutError" in run.stdout and "collected" in run.stdout
    assert "unclosed <socket" not in run.stderr, run.stderr[-2000:]
