"""Progress of long CLI work, in one place for every subcommand.

On a terminal: tqdm's live line (count, percentage, elapsed, rate, and a note such as the bytes still
to copy), redrawn in place. Not on a terminal (CI logs, pipes): either a plain line at each quarter
(``plain_quarters=True``, the demo) or nothing at all until :meth:`finish` (a reassignment running
under cron should not fill its log). :class:`Activity` is the same for a step with nothing to count
(Spark starting, a Spark job); :func:`warning` prints one of our warnings on its own line.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

from tqdm import tqdm


class Progress:
    """``update(done, note)`` as work advances, ``finish(note)`` when done, ``close()`` to stop early."""

    def __init__(
        self,
        label: str,
        total: int,
        stream: TextIO | None = None,
        *,
        unit: str = "it",
        plain_quarters: bool = True,
        min_interval_s: float = 0.2,
    ) -> None:
        self.label, self.total = label, max(1, total)
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.plain_quarters = plain_quarters
        self.done = 0
        self.started = time.monotonic()
        self._last_quarter = -1
        self._closed = False
        self._bar: tqdm[Any] | None = None
        if self.tty:
            self._bar = tqdm(
                total=self.total,
                desc=f"  {label}",
                unit=unit,
                file=self.stream,
                leave=False,
                dynamic_ncols=True,
                mininterval=min_interval_s,
                miniters=1,
                bar_format=(
                    "{desc} [{bar:24}] {percentage:5.1f}% {n_fmt}/{total_fmt} {elapsed} {rate_fmt}{postfix}"
                ),
            )

    def update(self, done: int, note: str = "") -> None:
        self.done = max(0, min(done, self.total))
        if self._closed:
            return
        if self._bar is not None:
            if note:
                self._bar.set_postfix_str(note, refresh=False)
            self._bar.update(self.done - self._bar.n)
            return
        quarter = int(self.done / self.total * 4)
        if self.plain_quarters and quarter > self._last_quarter:
            self._last_quarter = quarter
            extra = f", {note}" if note else ""
            share = f"{self.done / self.total:.0%} ({self.done:,}/{self.total:,}{extra})"
            self.stream.write(f"  {self.label}: {share}\n")
            self.stream.flush()

    def close(self) -> None:
        """Stop drawing (the work ended early, e.g. a timeout); the caller reports why."""
        self._closed = True
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def finish(self, note: str = "") -> None:
        self.update(self.total)
        self.close()
        self.done = self.total
        elapsed = time.monotonic() - self.started
        end = f" in {elapsed:.1f}s" + (f" — {note}" if note else "")
        self.stream.write(f"  {self.label}: done ({self.total:,}/{self.total:,}){end}\n")
        self.stream.flush()


class Activity:
    """A long step with nothing to count (Spark starting, a Spark job running), as a context manager.

    On a terminal: a live line with the step, the time so far and a note from ``poll`` (e.g. the Spark
    job's tasks done), redrawn every ``interval_s`` by a daemon thread. Not on a terminal: one line when it
    starts and one when it ends. ``note`` set inside the block rides on the closing line. An exception
    leaves only the caller's report of it (no closing line)."""

    def __init__(
        self,
        label: str,
        stream: TextIO | None = None,
        *,
        poll: Callable[[], str] | None = None,
        interval_s: float = 0.5,
    ) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.poll = poll
        self.interval_s = interval_s
        self.note = ""
        self.started = 0.0
        self._bar: tqdm[Any] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Activity:
        self.started = time.monotonic()
        if self.stream.isatty():
            self._bar = tqdm(
                total=None,
                desc=f"  {self.label}",
                file=self.stream,
                leave=False,
                dynamic_ncols=True,
                bar_format="{desc} {elapsed}{postfix}",
            )
            self._thread = threading.Thread(target=self._redraw, name="kafka-placement-activity", daemon=True)
            self._thread.start()
        else:
            self.stream.write(f"  {self.label} …\n")
            self.stream.flush()
        return self

    def _redraw(self) -> None:
        while not self._stop.wait(self.interval_s):
            bar = self._bar
            if bar is None:
                return
            note = ""
            if self.poll is not None:
                try:
                    note = self.poll()
                except Exception:  # only a note; the work itself reports its failures
                    note = ""
            bar.set_postfix_str(note, refresh=False)
            bar.refresh()

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        if exc_type is None:
            elapsed = time.monotonic() - self.started
            end = f" — {self.note}" if self.note else ""
            self.stream.write(f"  {self.label}: done in {elapsed:.1f}s{end}\n")
            self.stream.flush()


def warning(message: str, stream: TextIO | None = None) -> None:
    """One of our warnings: ``warning: …`` on its own line of stderr, any live progress line cleared first
    and redrawn after."""
    target = stream or sys.stderr
    sys.stdout.flush()
    tqdm.write(f"warning: {message}", file=target)
    target.flush()
