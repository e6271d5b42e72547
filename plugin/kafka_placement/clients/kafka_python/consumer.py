"""``kafka.KafkaConsumer`` that cannot be left outside its group silently (kafka-python 3.x join race).

kafka-python 3.0.12 can park a member outside its group without noticing: a JoinGroup/SyncGroup that
outlasts one round of polling can finish while nobody consumes it; the member keeps heartbeats off,
believes it is stable, and the broker drops it after ``session.timeout.ms`` — its partitions go to the
others while it still thinks it owns them. This subclass runs
:class:`~kafka_placement.clients.kafka_python.join_watchdog.JoinWatchdog` after every round of polling
(``poll()`` and iteration both poll in rounds), which asks the coordinator to rejoin when it sees that
state. It stops consuming once its session may have ended at the broker (no heartbeat answered for
about a session: :mod:`~kafka_placement.clients.kafka_python.session_guard`), where kafka-python goes on
fetching partitions that are already someone else's. Its metadata refresh loop also outlives a bare
``OSError``
(:mod:`~kafka_placement.clients.kafka_python.metadata_refresh`). Use it wherever ``kafka.KafkaConsumer`` is
used with our assignors (or any)::

    from kafka_placement.clients.kafka_python import KafkaConsumer, assignors_from_config
    KafkaConsumer("orders", group_id="billing", partition_assignment_strategy=assignors_from_config("sticky"))
"""

from __future__ import annotations

import logging
from typing import Any

import kafka

from kafka_placement.clients.consumer_protocol import refuse_consumer_protocol
from kafka_placement.clients.kafka_python.join_watchdog import JoinWatchdog
from kafka_placement.clients.kafka_python.metadata_refresh import (
    MetadataRefreshMend,
    client_cluster,
    mend_metadata_refresh,
)
from kafka_placement.clients.kafka_python.owned_partitions import claim_current_assignment
from kafka_placement.clients.kafka_python.partition_counts import watch_partition_counts
from kafka_placement.clients.kafka_python.session_guard import SessionGuard

log = logging.getLogger(__name__)

__all__ = ["KafkaConsumer"]

if not hasattr(kafka.KafkaConsumer, "_poll_once"):  # pragma: no cover - guarded by the <4 pin
    raise ImportError("this kafka-python has no KafkaConsumer._poll_once; kafka_placement supports 3.x")


class KafkaConsumer(kafka.KafkaConsumer):  # type: ignore[misc]  # kafka-python is untyped
    """``kafka.KafkaConsumer`` plus the join watchdog (module docstring). ``join_rescues`` lists why each
    rescue happened (``unconsumed-join``, ``parked-without-heartbeats``, ``no-heartbeat-success``)."""

    def __init__(self, *topics: str, join_watchdog_grace_s: float = 2.0, **configs: Any) -> None:
        if str(configs.get("group_protocol", "classic")).strip().lower() != "classic":
            raise refuse_consumer_protocol("kafka-python")
        configs.pop("group_protocol", None)
        super().__init__(*topics, **configs)
        #: kafka-python 3.0.12's refresh loop ends on a bare OSError; this one's goes on (what it converted)
        self.metadata_refresh: MetadataRefreshMend = mend_metadata_refresh(client_cluster(self))
        watch_partition_counts(self)  # a migration-ready member split by the broker says so
        claim_current_assignment(self)  # a cooperative member rejoining after a loss claims nothing
        self._join_watchdog: JoinWatchdog | None = None
        #: stops consuming once the session may have ended at the broker (module docstring)
        self.session_guard: SessionGuard | None = None
        if self.config.get("group_id") is not None:
            session_s = self.config["session_timeout_ms"] / 1000
            self.session_guard = SessionGuard(self, self._coordinator, session_s)
            self._join_watchdog = JoinWatchdog(
                self._coordinator,
                self.config["session_timeout_ms"] / 1000,
                grace_s=join_watchdog_grace_s,
                on_fire=self._on_rescue,
            )

    def _on_rescue(self, reason: str, details: dict[str, Any]) -> None:
        log.warning(
            "consumer group %s: member was outside its group (%s, %s); rejoining",
            self.config.get("group_id"),
            reason,
            details,
        )

    @property
    def join_rescues(self) -> list[str]:
        return list(self._join_watchdog.fired) if self._join_watchdog is not None else []

    def _poll_once(self, timer: Any, max_records: int, update_offsets: bool = True) -> Any:
        # only a subscribed consumer is in a group: one using assign() never heartbeats, and the
        # watchdog would take that for a member parked outside its group
        in_group = not self._closed and self._subscription.partitions_auto_assigned()
        if in_group and self.session_guard is not None:
            self.session_guard.check()  # before the round: a paused partition's records are not returned
        records = super()._poll_once(timer, max_records, update_offsets=update_offsets)
        watchdog = self._join_watchdog
        if watchdog is not None and in_group and not self._closed:
            watchdog.check()
        return records
