"""kafka-placement: decide and prove where every Kafka record, partition and replica goes.

Three sibling placements, each a sans-I/O core that imports no Kafka client:

- :mod:`kafka_placement.partitioning` — key → partition (producer partitioners)
- :mod:`kafka_placement.assignment` — partition → consumer (group assignors)
- :mod:`kafka_placement.replicas` — replica → broker/rack (placers, reassignment plans)

Thin client adapters live in :mod:`kafka_placement.clients`; the live-cluster harness in
:mod:`kafka_placement.testing`.
"""

from kafka_placement.vocabulary import Broker, Member, TopicPartition

__all__ = ["Broker", "Member", "TopicPartition", "__version__"]

__version__ = "0.1.0"
