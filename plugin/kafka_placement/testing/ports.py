"""Free loopback TCP ports for a new cluster, chosen at start so concurrent clusters don't clash."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct ports that were free on ``host`` a moment ago.

    All sockets are held open until every port is chosen (so the kernel cannot hand the same port
    out twice), then released for the brokers to bind.
    """
    if count < 1 or count > 1000:
        raise ValueError(f"count {count} out of range [1, 1000]")
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sockets.append(s)
            s.bind((host, 0))
        return [int(s.getsockname()[1]) for s in sockets]
    finally:
        for s in sockets:
            with contextlib.suppress(OSError):
                s.close()


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """True when ``host:port`` can be bound right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
        return True


@contextlib.contextmanager
def loopback_server(handle: Callable[[socket.socket], None], backlog: int = 16) -> Iterator[int]:
    """A TCP server on a free ``127.0.0.1`` port (yielded) for the ``with`` block: each accepted connection
    goes to ``handle`` on its own thread, which owns (and closes) it. Stops accepting at the block's end."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(backlog)
    server.settimeout(0.1)  # how often the accept loop looks at ``stop``
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(server.getsockname()[1])
    finally:
        stop.set()
        thread.join(5)
        server.close()
