"""Creating a test topic that is ready to use, even on a cluster whose brokers were just restarted.

kafka-python's admin client remembers which broker it sends CreateTopics to. After that broker was
stopped and started again, the client's metadata may no longer list it, and every create fails with
``UnknownBrokerIdError`` until the metadata happens to be refreshed. A test that restarted a broker must
not break every later test that creates a topic, so a create that fails that way is retried on a fresh
client.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from kafka_placement.clients.kafka_python.topic_visibility import all_led as _all_led
from kafka_placement.clients.kafka_python.topic_visibility import wait_for_every_broker
from kafka_placement.testing.probe import transient_errors

__all__ = ["create_topic", "wait_for_every_broker", "wait_for_leaders"]


def _stale_node_errors() -> tuple[type[BaseException], ...]:
    """Errors that mean "the client's idea of the cluster is out of date", not "the request is wrong"."""
    from kafka import errors

    return (
        errors.UnknownBrokerIdError,
        errors.NodeNotReadyError,
        errors.NotControllerError,
        errors.KafkaConnectionError,
        errors.KafkaTimeoutError,
        errors.RequestTimedOutError,
    )


def create_topic(
    admin: Any,
    name: str,
    partitions: int,
    replication_factor: int,
    *,
    config: Mapping[str, str] | None = None,
    fresh_admin: Callable[[], Any],
    timeout_s: float = 60.0,
) -> None:
    """Create ``name`` and return once every partition has a leader.

    ``admin`` is tried first; when it fails with a stale-metadata error the create is retried on clients
    from ``fresh_admin()`` (each closed after use) until ``timeout_s``. A topic that already exists is an
    error only on the first attempt: on a retry it means the earlier attempt reached the controller.
    """
    from kafka.admin import NewTopic
    from kafka.errors import TopicAlreadyExistsError

    def new_topic() -> Any:
        return NewTopic(name, partitions, replication_factor, topic_configs=dict(config or {}))

    deadline = time.monotonic() + timeout_s
    last: BaseException | None = None
    try:
        admin.create_topics([new_topic()])
    except _stale_node_errors() as exc:
        last = exc
        while True:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"could not create topic {name!r} within {timeout_s:.0f} s: {type(last).__name__}: {last}"
                ) from last
            time.sleep(0.5)
            try:
                client = fresh_admin()
            except _stale_node_errors() as retry_exc:
                last = retry_exc
                continue
            try:
                client.create_topics([new_topic()])
                break
            except TopicAlreadyExistsError:
                break
            except _stale_node_errors() as retry_exc:
                last = retry_exc
            finally:
                client.close()
    wait_for_leaders(admin, name, partitions, deadline=deadline)
    wait_for_every_broker(admin, name, partitions, deadline=deadline)


def wait_for_leaders(admin: Any, name: str, partitions: int, *, deadline: float) -> None:
    """Block until ``describe_topics`` shows ``partitions`` partitions of ``name``, each with a leader."""
    last: object = "no answer yet"
    while True:
        try:
            (described,) = admin.describe_topics([name])
            parts = described.get("partitions") or []
            if _all_led(parts, partitions):
                return
            last = f"{len(parts)} partitions, leaders {[p.get('leader_id') for p in parts]}"
        except transient_errors() as exc:  # the new topic's metadata still spreading
            last = f"{type(exc).__name__}: {exc}"
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"topic {name!r} was created but not every one of its {partitions} partitions had a leader"
                f" in time (last: {last})"
            )
        time.sleep(0.1)
