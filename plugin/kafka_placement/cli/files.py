"""Output paths every subcommand checks before it starts work (one place, so every command says the
same thing): a file or directory we will write must be writable now, not after a long Spark run."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from kafka_placement.errors import InvalidArgumentError


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path(".")


def check_writable_file(path: str, option: str) -> None:
    """``path`` can be created or overwritten as a file."""
    p = Path(path)
    if p.is_dir():
        raise InvalidArgumentError(f"{option} {path!r} is a directory; give a file name")
    if p.exists():
        if not os.access(p, os.W_OK):
            raise InvalidArgumentError(f"{option} {path!r} is not writable")
        return
    base = _nearest_existing(p.parent)
    if not base.is_dir() or not os.access(base, os.W_OK | os.X_OK):
        raise InvalidArgumentError(
            f"{option} {path!r} cannot be created: {str(base)!r} is not a writable directory"
        )


def check_writable_dir(path: str, option: str) -> None:
    """``path`` is (or is now created as) a directory we can write into: created and probed with a
    temporary file, so even root learns at once that e.g. /proc will not take it."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise InvalidArgumentError(f"{option} {path!r} exists and is not a directory")
    try:
        p.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=p):
            pass
    except OSError as exc:
        raise InvalidArgumentError(f"{option} {path!r} cannot be written: {exc.strerror or exc}") from None


def unused_path(stem: str, suffix: str = ".json") -> str:
    """``stem + suffix``, or ``stem-2 + suffix``, ``stem-3 …`` when taken: a file we name ourselves
    (a timestamped rollback, say) never replaces an earlier one written in the same second."""
    path, n = f"{stem}{suffix}", 1
    while Path(path).exists():
        n += 1
        path = f"{stem}-{n}{suffix}"
    return path
