"""Whether our optional C accelerators may run: one switch for all of them.

``KAFKA_PLACEMENT_NO_NATIVE=1`` in the environment (read when each accelerated module is imported) makes
every module with a compiled form — hashing (:mod:`kafka_placement.partitioning.native`), dealing
(:mod:`kafka_placement.assignment.dealing`) and the sticky assignors' owned-partition reading and result
hand-out (:mod:`kafka_placement.assignment.sticky.partition_objects`) — take its pure-Python/numpy form,
which gives the same answers: how the fallbacks are tested and how a suspected accelerator bug is ruled out.
"""

from __future__ import annotations

import os

NO_NATIVE_ENV = "KAFKA_PLACEMENT_NO_NATIVE"


def native_allowed() -> bool:
    """False when :data:`NO_NATIVE_ENV` is set to anything but empty or ``0``."""
    return os.environ.get(NO_NATIVE_ENV, "").strip() in ("", "0")
