"""Progress of long CLI work, in one place for every subcommand.

On a terminal: tqdm's live line (count, percentage, elapsed, rate, and a note such as the bytes still
to copy), redrawn in place. Not on a terminal (CI logs, pipes): either a plain line at each quarter
(``plain_quarters=True``, the demo) or nothing at all until :meth:`finish` (a reassignment running
under cron should not fill its log).
"""

from __future__ import annotations

import sys
import time
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
                total=self.total, desc=f"  {label}", unit=unit, file=self.stream, leave=False,
                dynamic_ncols=True, mininterval=min_interval_s, miniters=1,
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
