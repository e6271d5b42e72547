"""Strategy names as users write them: Kafka's names, Java's class names, a ``partition.assignment.strategy``.

Java's ``partition.assignment.strategy`` is a list in order of preference (the group picks the first
strategy every member supports); its value may be one comma-separated string, items trimmed, each a
fully qualified class name. :func:`parse_strategies` accepts that, and also the strategies' Kafka names
(``range``, ``roundrobin``, ``sticky``, ``cooperative-sticky`` — what each assignor's ``name()`` returns
and what librdkafka's ``partition.assignment.strategy`` takes) and ours (``failover``, alias
``priority``). Unset, Java's default applies: ``range`` then ``cooperative-sticky`` (Kafka 3.0+).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, get_args

from kafka_placement.errors import UnknownStrategyError

StrategyName = Literal["range", "roundrobin", "sticky", "cooperative-sticky", "failover", "priority"]
STRATEGY_NAMES: tuple[StrategyName, ...] = get_args(StrategyName)

#: Java's assignor classes (package ``org.apache.kafka.clients.consumer``) by their Kafka names.
JAVA_CLASSES: dict[str, StrategyName] = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
    "org.apache.kafka.clients.consumer.StickyAssignor": "sticky",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
}
#: What Java's consumer uses when ``partition.assignment.strategy`` is not set (Kafka 3.0+).
JAVA_DEFAULT: tuple[StrategyName, ...] = ("range", "cooperative-sticky")
_MAX_ITEMS = 64  # a list longer than every strategy there is, twice over, is a mistake


def strategy_name(item: object) -> StrategyName:
    """``item`` as a strategy name: a Kafka name, ours, or a Java class name (exact, case-sensitive)."""
    if isinstance(item, str):
        text = item.strip()
        for name in STRATEGY_NAMES:
            if text == name:
                return name
        java = JAVA_CLASSES.get(text)
        if java is not None:
            return java
    raise UnknownStrategyError(
        f"unknown assignment strategy {item!r}; allowed: {', '.join(STRATEGY_NAMES[:5])} (alias priority), "
        f"or Java's class names {', '.join(JAVA_CLASSES)}"
    )


def parse_strategies(config: str | Iterable[str] | None) -> list[StrategyName]:
    """A ``partition.assignment.strategy`` value → strategy names in order of preference.

    ``config``: ``"org.apache.kafka.clients.consumer.CooperativeStickyAssignor, range"``, a list of such
    items, or None for Java's default. Duplicates (also a name and its class name) and an empty list are
    refused, as no group could use them."""
    if config is None:
        return list(JAVA_DEFAULT)
    # Java: a blank list value is an empty list
    items = (config.split(",") if config.strip() else []) if isinstance(config, str) else list(config)
    if len(items) > _MAX_ITEMS:
        raise UnknownStrategyError(
            f"partition.assignment.strategy lists {len(items)} items; at most {_MAX_ITEMS} are allowed"
        )
    names: list[StrategyName] = []
    for item in items:
        name = strategy_name(item)
        if name in names:
            raise UnknownStrategyError(
                f"assignment strategy {name!r} appears twice in partition.assignment.strategy ({item!r})"
            )
        names.append(name)
    if not names:
        raise UnknownStrategyError("partition.assignment.strategy names no strategy; give at least one")
    return names
