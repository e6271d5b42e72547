"""Where kafka-placement keeps what it builds or learns once and reuses: one directory for all of it."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/kafka-placement``, or ``~/.cache/kafka-placement`` when that is unset."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kafka-placement"
