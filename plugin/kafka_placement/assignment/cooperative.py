"""Kept for imports written before the sticky family moved to :mod:`kafka_placement.assignment.sticky`."""

from __future__ import annotations

from kafka_placement.assignment.sticky.cooperative import assign_cooperative_sticky, cooperative_owner_array

__all__ = ["assign_cooperative_sticky", "cooperative_owner_array"]
