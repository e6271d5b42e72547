"""What every ``reassign`` action shares: the admin client, reading a plan, naming partitions."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kafka_placement.cli.connection_options import settings_from_args
from kafka_placement.clients.connection import check_connection, translate_error
from kafka_placement.replicas.reassignment_json import ANY_LOG_DIR, PartitionMove, parse_reassignment
from kafka_placement.vocabulary import TopicPartition

#: How many partition names a one-line message lists before "(+N more)".
MAX_NAMED = 20


def admin_client(args: argparse.Namespace) -> Any:
    """kafka-python's KafkaAdminClient from the command line's settings, after a bounded pre-flight
    check (an unreachable or misconfigured cluster is one clear line within ``--connect-timeout``)."""
    from kafka_placement.clients.kafka_python.admin import open_admin

    settings = settings_from_args(args)
    check_connection(settings)
    try:
        return open_admin(settings.kafka_python(), client_id="kafka-placement-reassign")
    except Exception as exc:
        raise translate_error(exc, settings, "connect the admin client") from None


def client_errors(operation: str) -> Callable[[Callable[[argparse.Namespace], int]], Callable[..., int]]:
    """Decorate an action: an exception from the Kafka client (a broker that went away, a timeout)
    becomes our typed one-line error naming the cluster and the operation, not a "bug"."""
    from kafka_placement.errors import KafkaPlacementError

    def wrap(action: Callable[[argparse.Namespace], int]) -> Callable[..., int]:
        @functools.wraps(action)
        def run(args: argparse.Namespace) -> int:
            try:
                return action(args)
            except KafkaPlacementError:
                raise
            except Exception as exc:
                if not type(exc).__module__.startswith("kafka."):
                    raise
                raise translate_error(exc, settings_from_args(args), operation) from None

        return run

    return wrap


def load_plan(path: str) -> list[PartitionMove]:
    """A plan file (kafka-reassign-partitions JSON); an empty plan is valid and moves nothing."""
    return parse_reassignment(Path(path).read_text(encoding="utf-8"), allow_empty=True)


def with_log_dirs(
    lists: Mapping[TopicPartition, Sequence[int]], dirs: Mapping[tuple[TopicPartition, int], str]
) -> list[PartitionMove]:
    """Plan entries naming each replica's log dir where ``dirs`` knows it, ``"any"`` elsewhere."""
    return [
        PartitionMove(tp.topic, tp.partition, tuple(r), tuple(dirs.get((tp, b), ANY_LOG_DIR) for b in r))
        for tp, r in lists.items()
    ]


def partition_name(tp: TopicPartition) -> str:
    """Java's ``TopicPartition.toString()``: ``topic-partition``."""
    return f"{tp.topic}-{tp.partition}"


def replica_set_differs(tp: TopicPartition, actual: Sequence[int], expected: Sequence[int]) -> str:
    """Kafka's verify line for a partition that is not moving but does not have the plan's list."""
    now, wanted = ",".join(map(str, actual)), ",".join(map(str, expected))
    return (
        f"There is no active reassignment of partition {partition_name(tp)}, "
        f"but replica set is {now} rather than {wanted}."
    )


def partition_names(partitions: Iterable[TopicPartition], limit: int = MAX_NAMED) -> str:
    """``a-0, a-1, b-3 (+12 more)``, sorted as Kafka's tool sorts (topic, then partition)."""
    ordered = sorted(partitions)
    shown = ", ".join(partition_name(tp) for tp in ordered[:limit])
    return shown + (f" (+{len(ordered) - limit} more)" if len(ordered) > limit else "")


def check_timeout(seconds: float, option: str = "--timeout") -> float:
    """A wait bound in (0, 1 week]."""
    from kafka_placement.errors import InvalidArgumentError

    if not 0 < seconds <= 7 * 24 * 3600:  # also refuses nan
        raise InvalidArgumentError(f"{option} must be in (0, 604800] seconds, got {seconds!r}")
    return seconds
