"""Commands a test harness sends a member process on its stdin, one word per line.

Member processes (the live tests' members, the soak's) stop on ``close`` or when stdin ends (the harness
went away); any other word is handed to ``on_command`` for the member to act on in its own loop.
Not in :mod:`kafka_placement.testing`: importing that package (the cluster harness) costs every member
process about 0.3 s of start-up.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import IO


def watch_stdin(
    on_command: Callable[[str], None] | None = None, stream: IO[str] | None = None
) -> threading.Event:
    """Start a daemon thread reading ``stream`` (default: stdin); the returned event is set on ``close``
    or end of input."""
    closing = threading.Event()
    source = sys.stdin if stream is None else stream

    def read() -> None:
        for line in source:
            word = line.strip()
            if word == "close":
                break
            if word and on_command is not None:
                on_command(word)
        closing.set()

    threading.Thread(target=read, name="stdin-commands", daemon=True).start()
    return closing
