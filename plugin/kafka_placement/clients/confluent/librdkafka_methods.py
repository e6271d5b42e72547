"""librdkafka's own consumer methods that our confluent :class:`~.consumer.Consumer` offers as they are.

The ``Consumer`` fetches with a ``confluent_kafka.Consumer`` (``self._rk``) that never joins the group;
these calls touch only what librdkafka fetches or reads from the cluster, so they are delegated, each
by name (no ``__getattr__``: a method not listed here is not offered).
"""

from __future__ import annotations

from typing import Any

__all__ = ["SUPPORTED_LIBRDKAFKA_METHODS", "LibrdkafkaMethods"]

#: librdkafka's own methods the Consumer offers as they are (each delegated explicitly below).
SUPPORTED_LIBRDKAFKA_METHODS = (
    "committed",
    "get_watermark_offsets",
    "list_topics",
    "offsets_for_times",
    "pause",
    "position",
    "resume",
    "seek",
    "set_sasl_credentials",
)


class LibrdkafkaMethods:
    """:data:`SUPPORTED_LIBRDKAFKA_METHODS`, delegated to ``self._rk`` — but ``pause`` and ``resume``,
    which the ``Consumer`` delegates itself, remembering what the application paused (a paused partition
    is never judged a fetch stall)."""

    _rk: Any

    def seek(self, partition: Any) -> None:
        """librdkafka's: the next fetch of ``partition`` starts at its offset."""
        self._rk.seek(partition)

    def position(self, partitions: list[Any]) -> list[Any]:
        """librdkafka's: the next offset to deliver per partition."""
        return self._rk.position(partitions)  # type: ignore[no-any-return]

    def committed(self, partitions: list[Any], timeout: float = -1) -> list[Any]:
        """librdkafka's: the group's committed offsets (an OffsetFetch with the group id)."""
        return self._rk.committed(partitions, timeout=timeout)  # type: ignore[no-any-return]

    def get_watermark_offsets(self, partition: Any, timeout: float = -1, cached: bool = False) -> Any:
        """librdkafka's: the partition's (low, high) offsets."""
        return self._rk.get_watermark_offsets(partition, timeout=timeout, cached=cached)

    def offsets_for_times(self, partitions: list[Any], timeout: float = -1) -> list[Any]:
        """librdkafka's: the earliest offset at or after each partition's timestamp (in ``offset``)."""
        return self._rk.offsets_for_times(partitions, timeout=timeout)  # type: ignore[no-any-return]

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> Any:
        """librdkafka's: the cluster's metadata (of ``topic`` only, when given)."""
        return self._rk.list_topics(topic, timeout=timeout)

    def set_sasl_credentials(self, username: str, password: str) -> None:
        """librdkafka's: new SASL/PLAIN or SCRAM credentials for the fetching connections (the group's
        kafka-python connections keep the ones they were built with)."""
        self._rk.set_sasl_credentials(username, password)
