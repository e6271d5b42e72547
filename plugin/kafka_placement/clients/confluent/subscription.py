"""What ``subscribe()`` is given, read by librdkafka's rules: topic names, and regexes (a name starting
with ``^``), for kafka-python's coordinator, which matches one pattern (sans-I/O)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_placement.errors import ConsumerConfigError

__all__ = ["Subscription", "read_subscription"]


@dataclass(frozen=True)
class Subscription:
    """``literals``: the plain topic names; ``pattern``: one regex for kafka-python's coordinator
    matching every name and regex (None when no regex was given: subscribe to ``literals``)."""

    literals: list[str]
    pattern: str | None


def read_subscription(topics: Sequence[str], callbacks: dict[str, Callable[..., Any] | None]) -> Subscription:
    """``topics`` as librdkafka reads them: a name starting with ``^`` is a regex, matched against the
    cluster's topics and re-evaluated at every metadata refresh (``topic.metadata.refresh.interval.ms``).
    ``callbacks`` (``on_assign``...) must each be callable or None. Raises
    :class:`~kafka_placement.errors.ConsumerConfigError` naming the bad value."""
    if isinstance(topics, str) or not all(isinstance(t, str) and t for t in topics):
        raise ConsumerConfigError(f"topics must be a list of topic names, got {topics!r}")
    patterns = [t for t in topics if t.startswith("^")]
    literals = [t for t in topics if not t.startswith("^")]
    pattern = None
    if patterns:  # kafka-python's coordinator uses pattern.match: each literal anchored at both ends
        pattern = "|".join([f"(?:{p})" for p in patterns] + [f"^{re.escape(t)}$" for t in literals])
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConsumerConfigError(f"invalid topic regex in {patterns!r}: {exc}") from None
    for name, cb in callbacks.items():
        if cb is not None and not callable(cb):
            raise ConsumerConfigError(f"{name} must be callable, got {cb!r}")
    return Subscription(literals, pattern)
