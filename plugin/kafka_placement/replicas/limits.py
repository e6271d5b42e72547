"""How much placement work one call may ask for: refused up front with the limit in the message.

Kafka itself allows any Java ``int`` partition count, but a placement is a list per partition: 2**31
partitions would need hundreds of GB and hours before failing. Ten million replicas (e.g. 3.3 million
partitions at RF 3, far above the partitions of any one topic in practice) is a few hundred MB and
seconds of work; place larger topics in parts (``start_partition_id`` / partition ranges).
"""

from __future__ import annotations

from kafka_placement.errors import InvalidArgumentError

MAX_REPLICAS_PER_CALL = 10_000_000


def check_placement_work(num_partitions: int, replication_factor: int) -> None:
    """Refuse ``num_partitions × replication_factor`` above :data:`MAX_REPLICAS_PER_CALL`."""
    replicas = num_partitions * replication_factor
    if replicas > MAX_REPLICAS_PER_CALL:
        raise InvalidArgumentError(
            f"{num_partitions} partitions x replication factor {replication_factor} = {replicas} replicas "
            f"exceeds the limit of {MAX_REPLICAS_PER_CALL:,} replicas per placement call; "
            "place the topic in parts"
        )
