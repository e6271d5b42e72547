"""The planning state of one topic: its replica sets and the rack rule every step obeys.

The rule itself is :mod:`~kafka_placement.replicas.rack_rule`'s; :meth:`TopicState.fits` is how the
count planner reaches it while filling slots one at a time (and keeps the quota planner's racks that
hold exactly one replica of every partition at one).
"""

from __future__ import annotations

from collections.abc import Iterable

from kafka_placement.replicas.quotas import RackLayout
from kafka_placement.replicas.rack_rule import racks_wanted


class TopicState:
    """Mutable replica sets of one topic (partition index → broker ids) under the rack rule."""

    def __init__(self, layout: RackLayout, rf: int, sets: list[list[int]]) -> None:
        self.layout = layout
        self.rack_of = layout.rack_of
        self.rf = rf
        self.racked = layout.racked
        self.num_racks = layout.num_racks
        self.sets = sets
        # rf > R: racks whose quota total equals the partition count hold exactly one replica of
        # every partition (at least one by coverage, at most one by their total)
        self.single: set[str | None] = set()

    def racks_in(self, reps: Iterable[int]) -> dict[str | None, int]:
        counts: dict[str | None, int] = {}
        for b in reps:
            counts[self.rack_of[b]] = counts.get(self.rack_of[b], 0) + 1
        return counts

    def fits(self, p: int, b: int, without: int | None = None) -> bool:
        """Can broker ``b`` take an open slot of partition ``p`` (optionally after ``without`` leaves)?"""
        reps = [x for x in self.sets[p] if x != without]
        if b in reps:
            return False
        if not self.racked:
            return True
        racks = self.racks_in(reps)
        rack = self.rack_of[b]
        wanted = racks_wanted(self.rf, self.num_racks)
        if wanted == self.rf:  # every replica on a rack of its own
            return rack not in racks
        if rack in racks and rack in self.single:
            return False
        # a rack already held takes it only if the slots left after it can still cover the missing racks
        missing = wanted - len(racks)
        open_slots = self.rf - len(reps)
        return not (missing >= open_slots and rack in racks)
