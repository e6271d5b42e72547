"""Synthetic load models for the rebalance benchmark: uneven clusters to balance.

Brokers in racks; partitions of RF 3 placed rack-diverse, each replica on a broker of its rack drawn
with a per-broker weight (lognormal, ``skew``) so that disk loads are uneven (max/mean about 1.5 at the
default); sizes lognormal; bytes in Zipf-skewed (rank ``k`` gets ``1/k^zipf``, ranks a random
permutation: independent of sizes); bytes out = bytes in × a consumer fan-out drawn from 1..3, plus
the followers' fetches ((RF − 1) × bytes in).
"""

from __future__ import annotations

import numpy as np

from kafka_placement.replicas.loads.model import LoadModel


def uneven_model(
    brokers: int,
    partitions: int,
    *,
    rf: int = 3,
    racks: int = 3,
    seed: int = 1,
    skew: float = 0.25,
    zipf: float = 0.5,
    median_size: float = 500e6,
    size_sigma: float = 1.5,
) -> LoadModel:
    rng = np.random.default_rng(seed)
    rack_of = np.arange(brokers) % racks
    weight = np.exp(rng.normal(0.0, skew, brokers))
    replicas = np.zeros((partitions, rf), dtype=np.int32)
    members = [np.flatnonzero(rack_of == r) for r in range(racks)]
    first = rng.integers(0, racks, partitions)
    for j in range(rf):
        rack = (first + j) % racks
        for k in range(racks):
            rows = np.flatnonzero(rack == k)
            w = weight[members[k]] / weight[members[k]].sum()
            replicas[rows, j] = rng.choice(members[k], size=len(rows), p=w)
    size = np.round(rng.lognormal(np.log(median_size), size_sigma, partitions))
    rank = rng.permutation(partitions) + 1
    bytes_in = np.round(2e6 / rank.astype(np.float64) ** zipf, 1)
    bytes_out = np.round(bytes_in * rng.integers(1, 4, partitions) + bytes_in * (rf - 1), 1)
    return LoadModel(
        broker_ids=np.arange(brokers, dtype=np.int64),
        racks=tuple(f"r{r}" for r in rack_of),
        capacity=np.full((brokers, 3), np.inf),
        # topics of 1,000 partitions (the last one takes the rest)
        topics=tuple(f"t{i}" for i in range(-(-partitions // 1000))),
        topic_index=(np.arange(partitions) // 1000).astype(np.int32),
        partition=np.arange(partitions, dtype=np.int64) % 1000,
        replicas=replicas,
        rf=np.full(partitions, rf, dtype=np.int16),
        size=size,
        bytes_in=bytes_in,
        bytes_out=bytes_out,
    )
