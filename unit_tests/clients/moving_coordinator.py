"""A fake kafka-python admin whose groups' coordinators move (for the OffsetFetch readers' tests)."""

from __future__ import annotations

from typing import Any

from kafka.errors import NotCoordinatorError
from kafka.structs import OffsetAndMetadata


class MovingCoordinatorAdmin:
    """kafka-python 3.0.12's admin as far as coordinators go: it caches each group's coordinator in
    ``_manager.cluster._coordinators`` (keyed (key type, group)), looks one up only when it is not
    cached, and sends OffsetFetch to the cached one, which answers NOT_COORDINATOR once the group moved."""

    def __init__(self, offsets: dict[str, dict[Any, OffsetAndMetadata]], where: dict[str, int]) -> None:
        self.offsets, self.where = offsets, where  # where: the group's coordinator now
        self._manager = type("Manager", (), {})()
        self._manager.cluster = type("Cluster", (), {})()
        self._manager.cluster._coordinators = {}
        self.calls: list[list[str]] = []

    @property
    def cache(self) -> dict[tuple[int, str], int]:
        cache: dict[tuple[int, str], int] = self._manager.cluster._coordinators
        return cache

    def list_group_offsets(self, specs: dict[str, None]) -> dict[str, dict[Any, OffsetAndMetadata]]:
        self.calls.append(sorted(specs))
        for g in specs:
            self.cache.setdefault((0, g), self.where[g])  # FindCoordinator for groups not cached
        if any(self.cache[(0, g)] != self.where[g] for g in specs):
            raise NotCoordinatorError("OffsetFetchResponse failed")
        return {g: self.offsets[g] for g in specs}
