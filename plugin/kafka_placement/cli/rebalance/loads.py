"""``rebalance loads``: the load model of a live cluster, as the loads JSON, on stdout (notes on
what was estimated and what was missing go to stderr)."""

from __future__ import annotations

import argparse
import math
import sys

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.replicas.loads import LoadModel, build_model, format_loads
from kafka_placement.replicas.loads.estimate import estimate_partitions

DEFAULT_WINDOW_S = 300.0
DEFAULT_SAMPLE_S = 10.0
MAX_WINDOW_S = 30 * 24 * 3600.0
MAX_SAMPLE_S = 3600.0


def check_window(args: argparse.Namespace) -> tuple[float, float]:
    window, sample = args.window, args.sample
    if not (math.isfinite(window) and 0 < window <= MAX_WINDOW_S):
        raise InvalidArgumentError(f"--window must be in (0, {MAX_WINDOW_S:g}] seconds, got {window!r}")
    if not (math.isfinite(sample) and 0 <= sample <= MAX_SAMPLE_S):
        raise InvalidArgumentError(f"--sample must be in [0, {MAX_SAMPLE_S:g}] seconds, got {sample!r}")
    return window, sample


def read_live_model(args: argparse.Namespace) -> tuple[LoadModel, list[str]]:
    from kafka_placement.cli.reassign.common import admin_client
    from kafka_placement.clients.kafka_python.loads import read_observations

    window, sample = check_window(args)
    admin = admin_client(args)
    try:
        brokers, observations, sampled, notes = read_observations(admin, window, sample)
    finally:
        admin.close()
    partitions, more = estimate_partitions(observations, window, sampled)
    return build_model(brokers, partitions), notes + more


def run_loads(args: argparse.Namespace) -> int:
    model, notes = read_live_model(args)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    print(format_loads(model))
    return 0
