"""A lower bound on the bytes any plan must copy to bring every broker's disk into its band.

Copying a replica moves its size off one broker and onto another, and nothing else changes disk
loads. So a plan that ends with every broker's disk at most ``U_b`` (the band's upper end, or the
capacity limit if lower; 0 for a broker being removed) copies at least ``Σ_b max(0, disk_b − U_b)``
bytes away from brokers; one that ends with every staying broker at least ``L`` copies at least
``Σ_b max(0, L − disk_b)`` bytes onto brokers. Each copied byte counts once in each sum, so the
larger of the two is a lower bound (:mod:`~kafka_placement.replicas.transfer_bound`; it is only a
bound for plans that reach the disk band; a plan stopped by a budget or by the hard goals may copy
less).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kafka_placement.replicas.loads.goals import Bands
from kafka_placement.replicas.loads.model import DISK
from kafka_placement.replicas.transfer_bound import excess_and_shortfall


@dataclass(frozen=True)
class BytesBound:
    """``bytes`` = max(``above``, ``below``): bytes above the brokers' disk upper ends, bytes missing
    below their lower ends."""

    bytes: float
    above: float
    below: float


def disk_lower_bound(loads: np.ndarray, bands: Bands, disk_goal: bool = True) -> BytesBound:
    disk = loads[:, DISK]
    ceiling = np.minimum(bands.upper[:, DISK], bands.limit[:, DISK]) if disk_goal else bands.limit[:, DISK]
    ceiling = np.where(bands.removed, 0.0, ceiling)
    staying = ~bands.removed
    above, _ = excess_and_shortfall(disk, 0.0, ceiling)
    _, below = (
        excess_and_shortfall(disk[staying], bands.lower[staying, DISK], np.inf) if disk_goal else (0.0, 0.0)
    )
    return BytesBound(max(above, below), above, below)
