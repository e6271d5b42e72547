"""How much placement work one call may ask for: refused up front with the limit in the message.

Kafka itself allows any Java ``int`` partition count, but a placement is a list per partition: 2**31
partitions would need hundreds of GB and hours before failing. A stated limit must also be a size
answered quickly, so the limits below are set from measurements on a 2-core machine (CPU seconds at
the limit, loaded by other work; the hostile-input tests run each placer at its limit):

* AdminUtils and StripedReplicaPlacer cost 2–3 µs per replica: one million replicas (333,333
  partitions at RF 3, far above the partitions of any one topic in practice) take ≤ 3 s.
* The balanced placer scores every broker for every replica it places: 8–14 µs per replica on a
  few brokers, ~120 µs on 100. Its work is counted as replicas × (brokers + 20), at most four
  million (≤ 4 s): 166,666 replicas on 4 brokers, 33,333 on 100.

Place larger topics in parts (``start_partition_id`` / partition ranges).
"""

from __future__ import annotations

from kafka_placement.errors import InvalidArgumentError

MAX_REPLICAS_PER_CALL = 1_000_000
#: replicas × (brokers + BALANCED_FIXED_COST) a balanced placement may take.
MAX_BALANCED_WORK = 4_000_000
#: The per-replica cost of the balanced placer that does not grow with the broker count, in broker units.
BALANCED_FIXED_COST = 20


def check_placement_work(num_partitions: int, replication_factor: int) -> None:
    """Refuse ``num_partitions × replication_factor`` above :data:`MAX_REPLICAS_PER_CALL`."""
    replicas = num_partitions * replication_factor
    if replicas > MAX_REPLICAS_PER_CALL:
        raise InvalidArgumentError(
            f"{num_partitions} partitions x replication factor {replication_factor} = {replicas} replicas "
            f"exceeds the limit of {MAX_REPLICAS_PER_CALL:,} replicas per placement call; "
            "place the topic in parts"
        )


def check_balanced_work(num_brokers: int, num_partitions: int, replication_factor: int) -> None:
    """Refuse a balanced placement whose replicas × (brokers + 20) exceeds :data:`MAX_BALANCED_WORK`."""
    replicas = num_partitions * replication_factor
    work = replicas * (num_brokers + BALANCED_FIXED_COST)
    if work > MAX_BALANCED_WORK:
        most = MAX_BALANCED_WORK // (num_brokers + BALANCED_FIXED_COST)
        raise InvalidArgumentError(
            f"{num_partitions} partitions x replication factor {replication_factor} = {replicas} replicas "
            f"on {num_brokers} brokers exceeds the balanced placer's limit of {most:,} replicas for "
            f"{num_brokers} brokers (replicas x (brokers + {BALANCED_FIXED_COST}) <= {MAX_BALANCED_WORK:,}); "
            "place the topic in parts"
        )
